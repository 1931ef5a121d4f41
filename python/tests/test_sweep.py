"""Sweeps from Python: the CLI's table byte for byte, on threads and on a real Ray cluster."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import bubblelab

SPEC = {
    "base": "pipeline",
    "set": {"schedules": ["gpipe", "1f1b"]},
    "axes": [
        {"path": "stages", "values": [2, 4, 8]},
        {"zip": [{"path": "micro_batches", "range": [8, 33, 8]}, {"path": "forward_ns", "range": [1000, 5000, 1000]}]},
    ],
}


def test_a_sweep_is_the_clis_table_whatever_the_threads(tmp_path, cli):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(SPEC))
    by_cli = subprocess.run([cli, "sweep", str(path)], capture_output=True, check=True).stdout.decode()
    one = bubblelab.sweep(SPEC, workers=1)
    assert one.csv == by_cli
    assert bubblelab.sweep(path, workers=4).csv == by_cli
    assert one.csv.splitlines()[0] == "point,stages,micro_batches,forward_ns,metric,value,unit,error"
    # Point 5 is stages 4, m 16: GPipe's bubble ratio (p − 1)/(m + p − 1).
    frame = one.to_pandas()
    row = frame[(frame.point == 5) & (frame.metric == "gpipe.bubble_ratio")]
    assert row.value.item() == pytest.approx(3 / 19, rel=1e-12)
    assert (row.stages.item(), row.micro_batches.item(), row.forward_ns.item()) == (4, 16, 2000)


def test_the_table_as_parquet_reads_back_as_the_csv(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    result = bubblelab.sweep(SPEC, parquet=tmp_path / "table.parquet")
    back = pd.read_parquet(tmp_path / "table.parquet")
    pd.testing.assert_frame_equal(back, result.to_pandas())


def test_a_failed_point_is_a_row_and_the_others_go_on(tmp_path, data):
    trace = data / "azure_llm_inference_2023/AzureLLMInferenceTrace_code.csv"
    spec = {"base": "agentic", "axes": [{"input": "trace", "values": [str(trace), "missing.csv"]}]}
    result = bubblelab.sweep(spec)
    assert result.errors() == [(1, "input trace: missing.csv: cannot open: no such file or folder")]
    assert sum(1 for line in result.csv.splitlines() if line.startswith("0,")) > 3


def test_resume_finishes_a_table_cut_short(tmp_path):
    whole = bubblelab.sweep(SPEC).csv
    out = tmp_path / "table.csv"
    out.write_text(whole[: len(whole) // 2])
    assert bubblelab.sweep(SPEC, output=out, resume=True).csv == whole
    assert out.read_text() == whole
    out.write_text("point,x,metric,value,unit,error\n")
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.sweep(SPEC, output=out, resume=True)
    assert e.value.path == "resume"


def test_a_bad_axis_names_its_path():
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.sweep({"base": "pipeline", "axes": [{"path": "stages", "range": [1, 9, 0]}]})
    assert e.value.path == "axes[0].range"
    with pytest.raises(bubblelab.ScenarioError) as e:
        bubblelab.sweep({"base": "pipeline", "axes": [{"path": "stages", "values": [2, 99]}]})
    assert e.value.path == "pipeline.stages" and "sweep point stages=99" in str(e.value)


def test_the_same_sweep_on_a_local_ray_cluster_gives_the_same_bytes(tmp_path, cli):
    """Starts a Ray head with two worker CPUs inside a network namespace that has only loopback
    (every byte stays on 127.0.0.1; ../shared/TOOLCHAIN.md), runs the sweep through Python's
    Ray backend and through `bubblelab sweep --ray`, and stops the cluster."""
    pytest.importorskip("ray")
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        _skip_or_fail("no unshare/ip to make a loopback-only namespace")
    spec = tmp_path / "sweep.json"
    spec.write_text(json.dumps(SPEC))
    local = bubblelab.sweep(spec).csv
    bindir = pathlib.Path(sys.executable).parent
    script = textwrap.dedent(
        f"""\
        set -e
        ip link set lo up
        export RAY_USAGE_STATS_ENABLED=0
        {bindir}/ray start --head --num-cpus 2 --port 6392 --include-dashboard=false \\
            --disable-usage-stats > {tmp_path}/ray-start.log 2>&1
        trap '{bindir}/ray stop --force > /dev/null 2>&1' EXIT
        {sys.executable} -m bubblelab sweep {spec} --ray 127.0.0.1:6392 --output {tmp_path}/ray.csv
        BUBBLELAB_PYTHON={sys.executable} {cli} sweep {spec} --ray 127.0.0.1:6392 --output {tmp_path}/cli-ray.csv
        """
    )
    run = subprocess.run(["unshare", "-n", "bash", "-c", script], capture_output=True, timeout=300)
    if run.returncode != 0 and b"unshare failed" in run.stderr:
        _skip_or_fail(f"cannot make a network namespace: {run.stderr.decode()[:200]}")
    log = tmp_path / "ray-start.log"
    assert run.returncode == 0, (run.stderr.decode()[-2000:], log.read_text() if log.exists() else "")
    assert (tmp_path / "ray.csv").read_text() == local
    assert (tmp_path / "cli-ray.csv").read_text() == local


def _skip_or_fail(why):
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)
