"""A lab run's Report, read from Python."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from . import _native


@dataclass(frozen=True)
class Metric:
    """A headline number: its value in ``unit`` and its label."""

    value: float
    unit: str
    label: str


@dataclass(frozen=True)
class Table:
    """A comparison table (one row per policy or schedule); missing cells are ``None``."""

    key: str
    title: str
    columns: List[str]
    rows: List[List[Any]]


@dataclass(frozen=True)
class Series:
    """An (x, y) curve of chart ``chart``."""

    name: str
    chart: str
    x_label: str
    y_label: str
    points: List[Tuple[float, float]]


class Report:
    """Everything a lab run produced: the same Report the CLI prints and the page draws."""

    def __init__(self, native: _native.Report) -> None:
        self._native = native
        data = json.loads(native.to_json(False))
        self.lab: str = data["lab"]
        self.title: str = data["title"]
        self.metrics: Dict[str, Metric] = {
            m["key"]: Metric(m["value"], m["unit"], m["label"]) for m in data["metrics"]
        }
        self.tables: Dict[str, Table] = {
            t["key"]: Table(t["key"], t["title"], t["columns"], t["rows"]) for t in data["tables"]
        }
        self.series: List[Series] = [
            Series(s["name"], s["chart"], s["x_label"], s["y_label"], [tuple(p) for p in s["points"]])
            for s in data["series"]
        ]
        self.findings: List[str] = data["findings"]
        self.timelines: List[Dict[str, Any]] = data["timelines"]

    @staticmethod
    def from_json(text: str) -> "Report":
        """Reads a Report's JSON, as ``to_json`` or ``bubblelab run --format json`` writes it."""
        return Report(_native.Report.from_json(text))

    def to_json(self, pretty: bool = True) -> str:
        """As ``bubblelab run --format json`` prints it (less the final newline), or on one line."""
        return self._native.to_json(pretty)

    def to_csv(self) -> str:
        """As ``bubblelab run --format csv`` prints it."""
        return self._native.to_csv()

    def to_text(self) -> str:
        """As ``bubblelab run`` prints it."""
        return self._native.to_text()

    def chrome_trace(self) -> str:
        """The timelines as a Chrome trace (Perfetto, chrome://tracing), as ``--trace`` writes it."""
        return self._native.chrome_trace()

    def to_pandas(self) -> Dict[str, Any]:
        """Tidy pandas frames: ``metrics`` (key, label, value, unit), one frame per table (its
        columns, ``None`` where a cell is missing) and ``series`` (chart, name, x, y, axis labels).
        Needs pandas (``pip install 'bubblelab[pandas]'``)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("Report.to_pandas needs pandas: pip install pandas") from e
        frames: Dict[str, Any] = {
            "metrics": pd.DataFrame(
                [(k, m.label, m.value, m.unit) for k, m in self.metrics.items()],
                columns=["key", "label", "value", "unit"],
            ),
            "series": pd.DataFrame(
                [
                    (s.chart, s.name, x, y, s.x_label, s.y_label)
                    for s in self.series
                    for (x, y) in s.points
                ],
                columns=["chart", "name", "x", "y", "x_label", "y_label"],
            ),
        }
        for key, table in self.tables.items():
            frames[f"table:{key}"] = pd.DataFrame(table.rows, columns=table.columns)
        return frames

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and self._native == other._native

    def __repr__(self) -> str:
        return f"<bubblelab.Report {self.lab}: {self.title!r}, {len(self.metrics)} metrics>"
