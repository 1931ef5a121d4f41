"""Where the tests find the repository, the CLI and the shared data."""

import os
import pathlib
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def cli() -> str:
    """The `bubblelab` CLI: $BUBBLELAB_CLI, else the workspace's debug or release build; under
    CI=true a missing CLI fails instead of skipping."""
    given = os.environ.get("BUBBLELAB_CLI")
    candidates = [given] if given else [
        str(REPO / "target/debug/bubblelab"),
        str(REPO / "target/release/bubblelab"),
        shutil.which("bubblelab") or "",
    ]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    if os.environ.get("CI") == "true":
        pytest.fail(f"no bubblelab CLI at {candidates} (cargo build -p bubblelab-runner)")
    pytest.skip("no bubblelab CLI built (cargo build -p bubblelab-runner)")


@pytest.fixture(scope="session")
def data() -> pathlib.Path:
    """$BUBBLELAB_DATA, else ../shared/data beside the repository; required under CI=true."""
    folder = pathlib.Path(os.environ.get("BUBBLELAB_DATA", REPO.parent / "shared/data"))
    if not folder.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"BUBBLELAB_DATA folder {folder} is missing")
        pytest.skip(f"no data folder at {folder}")
    return folder
