#!/usr/bin/env python3
"""Runs the Pollux artifact's own simulator (petuum/adaptdl @de25dcc, `simulator/`) for one
baseline on one workload file and prints its mean JCT: with the artifact's profile tables, or
(MODEL=fitted) with every true step time replaced by the throughput model the elastic lab uses
(fitted by the artifact's `fit_perf_params` on every profiled row, as
`scripts/pollux_profiles.py` does). A check of the lab's port: the same simulator with the same
step times must give the lab's figure.

Usage, from the artifact's `simulator/` directory (numpy, scipy, pandas, autograd installed;
pymoo is stubbed, so `tiresias` and `optimus` only):
    python3 <repo>/scripts/pollux_artifact_run.py tiresias workloads/workload-6.csv
    MODEL=fitted python3 <repo>/scripts/pollux_artifact_run.py tiresias workloads/workload-6.csv
Two shims let the 2021 code run on today's numpy and pandas (`np.int`, `DataFrame.append`).
"""
import os, sys, types
import numpy as np
np.int = int
np.float = float
import pandas
if not hasattr(pandas.DataFrame, "append"):
    def _append(self, other, ignore_index=False):
        return pandas.concat([self, other], ignore_index=ignore_index)
    pandas.DataFrame.append = _append
sys.path.insert(0, os.getcwd())
# pymoo is only needed by pollux.py; stub it for baselines.
for name in ["pymoo", "pymoo.model", "pymoo.model.crossover", "pymoo.model.mutation", "pymoo.model.problem", "pymoo.model.repair", "pymoo.optimize", "pymoo.algorithms", "pymoo.algorithms.nsga2", "pymoo.operators", "pymoo.operators.crossover", "pymoo.operators.crossover.util", "pymoo.util", "pymoo.util.nds", "pymoo.util.nds.non_dominated_sorting"]:
    m = types.ModuleType(name); sys.modules[name] = m
class _B: 
    def __init__(self, *a, **k): pass
sys.modules["pymoo.model.crossover"].Crossover = _B
sys.modules["pymoo.model.mutation"].Mutation = _B
sys.modules["pymoo.model.problem"].Problem = _B
sys.modules["pymoo.model.repair"].Repair = _B
sys.modules["pymoo.algorithms.nsga2"].NSGA2 = _B
sys.modules["pymoo.operators.crossover.util"].crossover_mask = None
sys.modules["pymoo.util.nds.non_dominated_sorting"].NonDominatedSorting = _B
for name in list(sys.modules):
    if name.startswith("pymoo.") :
        parent, child = name.rsplit(".", 1)
        setattr(sys.modules[parent], child, sys.modules[name])
import applications, goodput
if os.environ.get("MODEL") == "fitted":
    fitted = {}
    for name, app in applications.APPLICATIONS.items():
        p = app.placements; s = app.scalability
        nodes = np.concatenate([p.num_nodes.values, s.num_nodes.values]); reps = np.concatenate([p.num_replicas.values, s.num_replicas.values])
        bsz = np.concatenate([p.local_bsz.values, s.local_bsz.values]); step = np.concatenate([p.step_time.values, s.step_time.values]); sync = np.concatenate([p.sync_time.values, s.sync_time.values])
        fitted[name] = goodput.fit_perf_params(nodes, reps, bsz, step - sync, step)
    def get_throughput(self, placement, local_bsz):
        placement = tuple(filter(None, placement)); n, r = len(placement), sum(placement)
        pp = fitted[self.name]
        acc = pp.alpha_c + pp.beta_c * local_bsz
        net = (pp.alpha_n if n > 1 else pp.alpha_r if r > 1 else 1e-8) + (pp.beta_n if n > 1 else pp.beta_r if r > 1 else 1e-8) * max(r - 2, 1e-8)
        opt = (acc ** pp.gamma + net ** pp.gamma) ** (1 / pp.gamma)
        return np.array([opt, opt - acc])
    applications.Application.get_throughput = get_throughput
import simulator
class A: pass
args = A(); args.workload = sys.argv[2]; args.policy = sys.argv[1]; args.min_nodes = 16; args.max_nodes = None; args.interval = 60; args.interference = 0.0; args.num_gpus = 4; args.low_util = None; args.high_util = None; args.output = None
import io, contextlib
with contextlib.redirect_stdout(io.StringIO()):
    logs, jcts = simulator.simulate(args)
print(sys.argv[1], os.environ.get("MODEL", "tables"), len(jcts), sum(jcts.values()) / len(jcts))
