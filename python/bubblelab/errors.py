"""The package's exceptions. The core raises them too (``bubblelab._native`` builds them here)."""

from __future__ import annotations

from typing import Optional


class ScenarioError(ValueError):
    """Bad input: a scenario, a field, a link or an input file.

    ``path`` names the field (``stages``, ``astraea.quota``, ``input``) or is ``None`` for a
    scenario that is not JSON, whose ``line`` and ``column`` then say where.
    """

    def __init__(
        self,
        message: str,
        path: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column


class RunError(RuntimeError):
    """A valid scenario the lab could not finish (for example a schedule that deadlocks)."""
