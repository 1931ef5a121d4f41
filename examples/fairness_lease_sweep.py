"""How long should a lease be? Sweep the fairness lab's lease term against four policies on the
Philly trace and plot average JCT and job-fair share against the lease.

    pip install ./python matplotlib pandas
    python examples/fairness_lease_sweep.py [FIGURE.png]

The trace is read from $BUBBLELAB_DATA (default ../shared/data beside the repository). The sweep
is data (below): swap `backend="ray"` and an address into `bubblelab.sweep` to run it on a
cluster instead.
"""

import os
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

import bubblelab  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
DATA = pathlib.Path(os.environ.get("BUBBLELAB_DATA", REPO.parent / "shared/data"))
TRACE = DATA / "philly_user_jobs_dirlab/philly_data_training.csv"
# Three policies that hold GPUs for a lease, and Tiresias, which does not (a flat reference).
POLICIES = ["tiresias", "largest-rho", "hetero-fair-share", "astraea"]
LEASES_S = [300, 600, 900, 1800, 3600, 7200]

SWEEP = {
    "base": "fairness",
    # The Philly trace's 7,368 jobs on 140 nodes of 8 GPUs, as README's fairness command.
    "set": {"cluster.nodes": 140},
    "inputs": {"trace": str(TRACE)},
    "axes": [
        {"path": "lease_s", "values": LEASES_S},
        {"path": "policies", "values": [[p] for p in POLICIES]},
    ],
}


def main() -> None:
    figure = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "fairness-lease.png")
    table = bubblelab.sweep(SWEEP).to_pandas()
    assert not table.error.any(), table[table.error != ""]
    fig, (jct, fair) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for policy in POLICIES:
        rows = table[table.policies == f'["{policy}"]']
        by_lease = rows.pivot(index="lease_s", columns="metric", values="value")
        label = bubblelab.run("fairness", set={"policies": [policy]}).metrics[f"{policy}.avg_jct_s"].label
        name = label.removesuffix(" average JCT")
        jct.plot(by_lease.index, by_lease[f"{policy}.avg_jct_s"] / 3600, marker="o", label=name)
        fair.plot(by_lease.index, by_lease[f"{policy}.job_fair_share"], marker="o", label=name)
    jct.set(xlabel="lease (s)", ylabel="average JCT (h)", title="Average JCT")
    fair.set(xlabel="lease (s)", ylabel="share of jobs with F_j in [0.95, 1/0.95]", title="Job-fair share")
    for ax in (jct, fair):
        ax.set_xscale("log")
        ax.set_xticks(LEASES_S, [str(s) for s in LEASES_S])
        ax.minorticks_off()
    jct.legend(loc="center right")
    fig.suptitle(f"Philly trace ({TRACE.name}), 140 nodes × 8 GPUs: lease term × policy")
    figure.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(figure, dpi=120)
    print(f"{len(table.point.unique())} runs; figure: {figure}")


if __name__ == "__main__":
    main()
