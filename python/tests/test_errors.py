"""Bad input raises ScenarioError naming the field, slot, file row or byte; nothing panics."""

import pytest

import bubblelab


def test_a_field_out_of_range_names_its_path():
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("pipeline", set={"stages": 0})
    assert e.value.path == "pipeline.stages"
    assert "must be between 1 and 64, got 0" in str(e.value)


def test_an_unknown_field_and_a_bad_id_name_their_paths():
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("pipeline", set={"stagez": 4})
    assert "stagez" in e.value.path
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("pipeline", set={"schedules": ["gpipe", "nope"]})
    assert e.value.path.startswith("pipeline.schedules")
    assert "nope" in str(e.value)


def test_text_that_is_not_json_says_where():
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run('{"lab": "pipeline", "params": {"stages": }}')
    assert e.value.path is None
    assert (e.value.line, e.value.column) == (1, 42)


def test_a_scenario_that_is_nothing_known_lists_what_it_could_be():
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("pipelin")
    assert e.value.path == "scenario"
    assert "pipeline" in str(e.value)
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run(42)
    assert "int" in str(e.value)


def test_a_broken_link_says_what_is_wrong():
    good = bubblelab.link("pipeline")
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.scenario_from_link(good[:-20])
    assert e.value.path == "link"
    assert "does not decompress" in str(e.value) or "base64" in str(e.value)
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.scenario_from_link(good.replace("#/pipeline", "#/fairness"))
    assert "carries a pipeline scenario" in str(e.value)


def test_input_files_name_the_slot_file_and_row(tmp_path):
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("sharing", inputs={"trace": tmp_path / "missing.csv"})
    assert e.value.path == "input trace"
    junk = tmp_path / "junk-trace.csv"
    junk.write_text("what,is,this\n1,2,3\n")
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("sharing", inputs={"trace": junk})
    assert str(e.value) == "input: unknown input `trace`; this lab reads nodes, pods"
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("agentic", inputs={"trace": junk})
    assert "junk-trace.csv: cannot tell the trace format from its first line" in str(e.value)
    bad = tmp_path / "bad-shares.csv"
    bad.write_text("name,share\na,3\nb,0\n")
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("fairness", inputs={"shares": bad})
    assert "bad-shares.csv: row 3, column `share`" in str(e.value)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"ok\n\xff\xfe")
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.run("agentic", inputs={"trace": binary})
    assert "not UTF-8 text (byte 3)" in str(e.value)


def test_unknown_labs_and_presets_are_scenario_errors():
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.fields("nope")
    assert e.value.path == "lab"
    with pytest.raises(bubblelab.ScenarioError):
        bubblelab.input_slots("nope")
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.preset("nope")
    assert e.value.path == "preset"


def test_random_field_values_are_accepted_or_named_never_a_crash():
    # Random values at every lab's number fields: each is accepted or raises ScenarioError
    # naming the field (a panic would surface as pyo3's PanicException, a BaseException).
    import random

    rng = random.Random(7)
    for _ in range(60):
        lab = rng.choice(bubblelab.labs())
        fields = [f for f in bubblelab.fields(lab) if f.kind in ("int", "float")]
        if not fields:
            continue
        f = rng.choice(fields)
        value = rng.choice([f.min, f.max, 0, -1, 1e308, f.default])
        try:
            bubblelab.scenario(lab, set={f.path: value})
        except bubblelab.ScenarioError as e:
            # The field set, or the one its value made invalid (an elastic workload without jobs).
            assert e.path and e.path.startswith(lab + "."), (f.path, str(e))
