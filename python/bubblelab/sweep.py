"""Sweeps: every point of a sweep file on this machine's cores or as tasks on a Ray cluster,
written as one tidy table (a row per point and metric) that is the same bytes either way.

A sweep file (docs/SCALE.md) is JSON: ``base`` (a lab, a preset id or a scenario), ``set``,
``inputs`` and ``axes`` over field paths (``values``, ``range``, ``zip``) or input files.
"""

from __future__ import annotations

import io
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from . import _native

SweepLike = Union[Mapping[str, Any], str, "os.PathLike[str]"]
"""A sweep as a dict, JSON text or the path of a sweep file."""


@dataclass(frozen=True)
class SweepResult:
    """The sweep's table: ``csv`` with the header ``point,<swept columns>,metric,value,unit,error``."""

    csv: str

    def errors(self) -> List[Tuple[int, str]]:
        """(point, error) of every point that failed."""
        import csv as csv_module

        rows = csv_module.DictReader(io.StringIO(self.csv))
        return [(int(r["point"]), r["error"]) for r in rows if r["error"]]

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.read_csv(io.StringIO(self.csv), keep_default_na=False, na_values=[""])

    def to_parquet(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the table as Parquet (needs pandas and pyarrow)."""
        self.to_pandas().to_parquet(path, index=False)


def sweep(
    spec: SweepLike,
    *,
    output: Optional[Union[str, "os.PathLike[str]"]] = None,
    backend: str = "local",
    workers: Optional[int] = None,
    resume: bool = False,
    address: Optional[str] = None,
    progress: Optional[bool] = None,
    parquet: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> SweepResult:
    """Runs every point of a sweep and returns its table (and writes it to ``output``).

    ``backend="local"`` runs points on ``workers`` threads (every core by default; runs hold
    no GIL). ``backend="ray"`` runs each point as a Ray task on the cluster at ``address``
    (``ray.init(address=...)``; one already initialised is used as it is); input files must be
    at the same path on every node. ``resume`` keeps the points ``output`` already holds. A
    point that fails is a row with its error; the others go on. The table is in point order
    and the same bytes for either backend. ``parquet`` also writes it as Parquet at the end
    (needs pandas and pyarrow).
    """
    spec_json, folder = _read_spec(spec)
    plan = _native.Sweep(spec_json, folder)
    done: Dict[int, str] = {}
    if resume:
        if output is None:
            raise ValueError("resume needs the output the sweep writes to")
        if os.path.exists(output):
            with open(output, encoding="utf-8") as f:
                done = dict(plan.rows_in(f.read()))
    todo = [i for i in range(len(plan)) if i not in done]
    sink = _Sink(output, plan.header, done) if output is not None else None
    show = sys.stderr.isatty() if progress is None else progress
    total = len(plan)

    def finished(index: int, rows: str) -> None:
        done[index] = rows
        if sink is not None:
            sink.append(rows)
        if show:
            print(f"\r{len(done)}/{total} sweep points", end="", file=sys.stderr, flush=True)

    if backend == "local":
        _run_local(plan, todo, workers or os.cpu_count() or 1, finished)
    elif backend == "ray":
        _run_ray(spec_json, folder, todo, address, finished)
    else:
        raise ValueError(f"backend: expected local or ray, got {backend!r}")
    if show:
        print(file=sys.stderr)
    table = plan.header + "".join(done[i] for i in sorted(done))
    if output is not None:
        _write_atomically(os.fspath(output), table)
    result = SweepResult(table)
    if parquet is not None:
        result.to_parquet(parquet)
    return result


def _run_local(plan: Any, todo: List[int], workers: int, finished: Any) -> None:
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(plan.run_point, i): i for i in todo}
        for future in as_completed(futures):
            finished(futures[future], future.result())


def _run_ray(spec_json: str, folder: str, todo: List[int], address: Optional[str], finished: Any) -> None:
    import ray

    if not ray.is_initialized():
        ray.init(address=address or "auto", log_to_driver=False, configure_logging=False)
    task = ray.remote(_point_rows)
    spec_ref = ray.put(spec_json)
    pending = [task.remote(spec_ref, folder, i) for i in todo]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            index, rows = ray.get(ref)
            finished(index, rows)


def _point_rows(spec_json: str, folder: str, index: int) -> Tuple[int, str]:
    """A Ray task: point ``index``'s rows (the sweep read once per worker process)."""
    return index, _plan(spec_json, folder).run_point(index)


@lru_cache(maxsize=4)
def _plan(spec_json: str, folder: str) -> Any:
    return _native.Sweep(spec_json, folder)


def _read_spec(spec: SweepLike) -> Tuple[str, str]:
    """The sweep's JSON and the folder its input files are relative to."""
    if isinstance(spec, Mapping):
        return json.dumps(spec), os.getcwd()
    if isinstance(spec, str) and spec.lstrip().startswith("{"):
        return spec, os.getcwd()
    path = os.fspath(spec)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        from .errors import ScenarioError

        raise ScenarioError(f"sweep: cannot read {path}: {e}", "sweep") from e
    return text, os.path.dirname(os.path.abspath(path))


class _Sink:
    """The output while the sweep runs: header and kept rows, then each point as it ends, so a
    stopped sweep resumes where it was."""

    def __init__(self, output: Union[str, "os.PathLike[str]"], header: str, done: Mapping[int, str]) -> None:
        self.path = os.fspath(output)
        _write_atomically(self.path, header + "".join(done[i] for i in sorted(done)))
        self.file = open(self.path, "a", encoding="utf-8")

    def append(self, rows: str) -> None:
        self.file.write(rows)
        self.file.flush()

    def __del__(self) -> None:
        self.file.close()


def _write_atomically(path: str, text: str) -> None:
    tmp = path + ".partial"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv: Optional[Iterable[str]] = None) -> int:
    """``python -m bubblelab sweep SWEEP.json [--output F] [--ray ADDRESS] [--workers N] [--resume]
    [--parquet FILE]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bubblelab sweep", description=main.__doc__)
    parser.add_argument("spec", help="the sweep file (JSON: base, set, inputs, axes)")
    parser.add_argument("--output", "-o", help="write the table here instead of stdout")
    parser.add_argument("--ray", metavar="ADDRESS", help="run on the Ray cluster at ADDRESS")
    parser.add_argument("--workers", type=int, help="threads for the local backend (every core)")
    parser.add_argument("--resume", action="store_true", help="keep the points the output holds")
    parser.add_argument("--parquet", metavar="FILE", help="also write the table as Parquet (pandas, pyarrow)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    from .errors import ScenarioError

    try:
        result = sweep(
            args.spec,
            output=args.output,
            backend="ray" if args.ray else "local",
            address=args.ray,
            workers=args.workers,
            resume=args.resume,
            parquet=args.parquet,
        )
    except ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.output is None:
        sys.stdout.write(result.csv)
    return 0
