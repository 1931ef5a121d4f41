"""Labs, presets, field tables and links as the registry holds them."""

import bubblelab


def test_every_preset_round_trips_through_its_link():
    ids = [p.id for p in bubblelab.presets()]
    assert len(ids) == len(set(ids)) >= 12
    for p in bubblelab.presets():
        assert p.lab in bubblelab.labs()
        normal = bubblelab.scenario(p.id)
        assert bubblelab.scenario_from_link(bubblelab.link(p.id)) == normal


def test_every_lab_has_a_field_table_whose_defaults_are_valid():
    for lab in bubblelab.labs():
        table = bubblelab.fields(lab)
        assert table, lab
        for f in table:
            assert f.path and f.label and f.unit and f.help, f
            if f.kind in ("int", "float"):
                assert f.min <= f.max, f
            if f.kind in ("one_of", "some_of"):
                assert f.ids, f
        # Every default set back by its path is accepted.
        defaults = {f.path: f.default for f in table if f.kind in ("int", "float", "one_of", "bool")}
        bubblelab.scenario({"version": 1, "lab": lab, "params": {}}, set=defaults)


def test_input_slots_are_the_labs_own():
    assert [s.name for s in bubblelab.input_slots("sharing")] == ["nodes", "pods"]
    assert [s.name for s in bubblelab.input_slots("cost")] == ["measured"]
    assert bubblelab.input_slots("migration") == []


def test_the_readmes_python_example_runs(repo, data, monkeypatch):
    text = (repo / "README.md").read_text()
    section = text.split("## From Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(repo)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["report"].metrics["zb-h1.bubble_ratio"].unit == "ratio"
    assert len(scope["table"].to_pandas().point.unique()) == 6
