"""bubblelab from Python: run any lab's scenario and read its Report.

>>> import bubblelab
>>> report = bubblelab.run("pipeline", set={"stages": 8})
>>> report.metrics["1f1b.bubble_ratio"].value

A scenario is a dict, a JSON string, a path to a scenario file, a share link, a lab's name (its
first preset) or a preset id. Runs go through the same core as the CLI and the page, so a
Report's JSON is byte for byte what ``bubblelab run --format json`` prints.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from .errors import RunError, ScenarioError
from .report import Metric, Report, Series, Table
from .sweep import SweepResult, sweep

__all__ = [
    "Field",
    "InputSlot",
    "Metric",
    "Preset",
    "Report",
    "RunError",
    "ScenarioError",
    "Series",
    "Table",
    "fields",
    "input_slots",
    "labs",
    "link",
    "preset",
    "presets",
    "run",
    "scenario",
    "scenario_from_link",
    "sweep",
    "SweepResult",
]

ScenarioLike = Union[Mapping[str, Any], str, "os.PathLike[str]"]
"""A dict, JSON text, a scenario file, a share link, a lab name or a preset id."""

Inputs = Mapping[str, Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]]
"""Input files by slot: ``{"trace": "philly.csv"}``; a slot that takes several files a list."""

# Largest scenario or input file read, bytes (as the CLI's limit).
_MAX_FILE_BYTES = 1 << 30


@dataclass(frozen=True)
class Preset:
    """A built-in scenario: its id, lab and menu title (``preset(id)`` gives its scenario)."""

    id: str
    lab: str
    title: str


@dataclass(frozen=True)
class Field:
    """One parameter of a lab, as ``bubblelab run LAB --fields`` lists it.

    ``kind`` is ``int``, ``float``, ``one_of``, ``some_of``, ``bool`` or ``structured``;
    ``min``/``max`` bound numbers, ``ids`` are the choices of ``one_of``/``some_of``.
    """

    path: str
    label: str
    unit: str
    kind: str
    min: Optional[Union[int, float]]
    max: Optional[Union[int, float]]
    ids: Tuple[str, ...]
    default: Any
    help: str
    widget: str


@dataclass(frozen=True)
class InputSlot:
    """A file a lab reads beside its parameters (``run(..., inputs={name: path})``)."""

    name: str
    help: str
    many: bool


def labs() -> List[str]:
    """Every lab's name, in the playground's order."""
    return list(_native.labs())


def presets(lab: Optional[str] = None) -> List[Preset]:
    """Every built-in preset, or only lab ``lab``'s, each lab's in its menu order."""
    return [Preset(i, l, t) for (i, l, t, _) in _native.all_presets() if lab is None or l == lab]


def preset(id: str) -> Dict[str, Any]:
    """The scenario of preset ``id``, as stored."""
    for (i, _, _, text) in _native.all_presets():
        if i == id:
            return json.loads(text)
    known = ", ".join(p.id for p in presets())
    raise ScenarioError(f"preset: unknown preset `{id}`; expected one of {known}", "preset")


def fields(lab: str) -> List[Field]:
    """Lab ``lab``'s parameters: path, label, unit, range, default and one line of help."""
    out = []
    for row in _native.field_table(lab):
        d = dict(row)
        default = d.pop("default_json")
        d["default"] = None if default is None else json.loads(default)
        d["ids"] = tuple(d["ids"])
        out.append(Field(**d))
    return out


def input_slots(lab: str) -> List[InputSlot]:
    """The files lab ``lab`` reads beside its parameters."""
    return [InputSlot(n, h, m) for (n, h, m) in _native.input_slots(lab)]


def scenario(scenario: ScenarioLike, *, set: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The scenario as a dict with every parameter written out, ``set`` applied and validated."""
    return json.loads(_native.normalize(_scenario_json(scenario), _sets(set)))


def link(scenario: ScenarioLike, base: str = "http://127.0.0.1:8080") -> str:
    """The share link that opens ``scenario`` in the playground served at ``base``."""
    return _native.link(_scenario_json(scenario), base)


def scenario_from_link(url: str) -> Dict[str, Any]:
    """The scenario of a share link (a URL, its ``#/<lab>?s=…`` fragment or the payload)."""
    return json.loads(_native.decode_link(url))


def run(
    scenario: ScenarioLike,
    *,
    set: Optional[Mapping[str, Any]] = None,
    inputs: Optional[Inputs] = None,
) -> Report:
    """Runs a scenario and returns its Report.

    ``set`` changes fields by path, as the CLI's ``--set`` (``{"stages": 8, "astraea.quota":
    "fair"}``); ``inputs`` gives files to the lab's input slots (``{"trace": "philly.csv"}``),
    read by the lab's own readers. Bad input raises :class:`ScenarioError` naming the field,
    slot or file row; a lab that cannot finish raises :class:`RunError`. Other Python threads
    run meanwhile.
    """
    return Report(_native.run(_scenario_json(scenario), _sets(set), _input_files(inputs)))


def _sets(set: Optional[Mapping[str, Any]]) -> List[Tuple[str, str]]:
    """``set`` as the (path, value text) pairs the core reads: JSON, strings bare."""
    if set is None:
        return []
    out = []
    for path, value in set.items():
        if not isinstance(path, str):
            raise ScenarioError(f"set: a field path is text, got {path!r}", "set")
        out.append((path, value if isinstance(value, str) else json.dumps(value)))
    return out


def _scenario_json(scenario: ScenarioLike) -> str:
    """The JSON text of a dict, JSON text, file, link, lab name or preset id."""
    if isinstance(scenario, Mapping):
        return json.dumps(scenario)
    if isinstance(scenario, os.PathLike):
        return _read_text(os.fspath(scenario), "scenario")
    if not isinstance(scenario, str):
        raise ScenarioError(
            f"scenario: expected a dict, JSON text, a file, a link, a lab or a preset id, "
            f"got {type(scenario).__name__}",
            "scenario",
        )
    text = scenario.strip()
    if text.startswith("{"):
        return text
    if text in _native.labs():
        return _native.lab_scenario(text)
    if any(i == text for (i, _, _, _) in _native.all_presets()):
        return json.dumps(preset(text))
    if os.path.isfile(text):
        return _read_text(text, "scenario")
    if "s=" in text or "#/" in text:
        return _native.decode_link(text)
    raise ScenarioError(
        f"scenario: `{text[:60]}` is not JSON, a file, a share link, a lab "
        f"({', '.join(labs())}) or a preset id",
        "scenario",
    )


def _input_files(inputs: Optional[Inputs]) -> List[Tuple[str, str, str]]:
    """(slot, path, text) of every input file, a slot's files in the order given."""
    out: List[Tuple[str, str, str]] = []
    for slot, given in (inputs or {}).items():
        paths = [given] if isinstance(given, (str, os.PathLike)) else list(given)
        for p in paths:
            path = os.fspath(p)
            # Named as given, as the CLI's --input names it in errors and the Report.
            out.append((slot, path, _read_text(path, f"input {slot}")))
    return out


def _read_text(path: str, what: str) -> str:
    """The UTF-8 text of file ``path``; an error names ``what`` and the file."""
    try:
        size = os.path.getsize(path)
        if size > _MAX_FILE_BYTES:
            raise ScenarioError(f"{what}: {path} is {size} bytes; at most {_MAX_FILE_BYTES}", what)
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ScenarioError(f"{what}: cannot read {path}: {e.strerror or e}", what) from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{what}: {path} is not UTF-8 text (byte {e.start})", what) from e
