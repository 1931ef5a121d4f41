"""Sweep throughput, printed as the Markdown tables of docs/SCALE.md (never asserted):

1. one point of each lab's first preset, run alone: points per hour per core;
2. a 40-point sweep (the fairness lab on the Philly trace, 8 leases × 5 policies) on one
   thread, on every core, and on a local Ray cluster of two worker CPUs started here inside a
   loopback-only network namespace (../shared/TOOLCHAIN.md), all side by side in one run.

    python python/bench/sweeps.py          # needs the package, ray, unshare and ip; run as root
"""

import os
import pathlib
import subprocess
import sys
import time

import bubblelab

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("BUBBLELAB_DATA", REPO.parent / "shared/data"))
RAY_PORT = 6393
SWEEP = {
    "base": "fairness",
    "set": {"cluster.nodes": 140},
    "inputs": {"trace": str(DATA / "philly_user_jobs_dirlab/philly_data_training.csv")},
    "axes": [
        {"path": "lease_s", "values": [300, 600, 900, 1200, 1800, 3600, 7200, 14400]},
        {"path": "policies", "values": [["largest-rho"], ["hetero-fair-share"], ["astraea"], ["astraea-themis"], ["slot-admission"]]},
    ],
}


def per_lab() -> None:
    print("| lab | first preset | one point (s) | points per hour per core |")
    print("|---|---|---|---|")
    for lab in bubblelab.labs():
        preset = bubblelab.presets(lab)[0].id
        bubblelab.run(preset)  # warm
        started = time.perf_counter()
        runs = 0
        while runs < 3 or time.perf_counter() - started < 1.0:
            bubblelab.run(preset)
            runs += 1
        secs = (time.perf_counter() - started) / runs
        print(f"| {lab} | `{preset}` | {secs:.3f} | {3600 / secs:,.0f} |")


def timed(**kwargs) -> float:
    started = time.perf_counter()
    result = bubblelab.sweep(SWEEP, progress=False, **kwargs)
    secs = time.perf_counter() - started
    assert not result.errors(), result.errors()
    timed.tables.append(result.csv)
    return secs


timed.tables = []


def backends() -> None:
    import ray

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    ray_bin = str(pathlib.Path(sys.executable).parent / "ray")
    subprocess.run(
        [ray_bin, "start", "--head", "--num-cpus", "2", "--port", str(RAY_PORT),
         "--include-dashboard=false", "--disable-usage-stats"],
        check=True, env=env, capture_output=True,
    )
    try:
        started = time.perf_counter()
        ray.init(address=f"127.0.0.1:{RAY_PORT}", log_to_driver=False, configure_logging=False)
        connect = time.perf_counter() - started
        timed(backend="ray")  # warm the workers (imports, the trace's first read)
        rows = [
            ("local, 1 thread", timed(workers=1)),
            ("local, 2 threads", timed(workers=2)),
            ("Ray, 2 worker CPUs on this machine", timed(backend="ray")),
        ]
    finally:
        ray.shutdown()
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True, env=env)
    assert all(t == timed.tables[0] for t in timed.tables), "backends disagree"
    one = rows[0][1]
    points = 40
    print(f"| backend | wall (s) | points per hour | vs 1 thread |")
    print("|---|---|---|---|")
    for name, secs in rows:
        print(f"| {name} | {secs:.2f} | {points * 3600 / secs:,.0f} | {one / secs:.2f}× |")
    print(f"\nRay / local 2 threads wall time: {rows[2][1] / rows[1][1]:.2f}×; connecting took {connect:.1f} s "
          f"(not counted); all {len(timed.tables)} tables identical. {os.cpu_count()} cores.")


if __name__ == "__main__":
    if "--inside" not in sys.argv:
        per_lab()
        print()
        sys.stdout.flush()
        os.execvp("unshare", ["unshare", "-n", sys.executable, __file__, "--inside"])
    backends()
