//! One strategy's run over the horizon: iterations with the injected events, the detectors, and
//! the strategy's reaction. Simulated time is integer nanoseconds ([`crate::units`]).
//!
//! Events are applied by the furthest iteration reached (a restart re-runs iterations but does
//! not undo a failure): an event is active from `at_iteration` until `until_iteration`.
//! Per iteration: if the plan uses a dead GPU the job hangs until the heartbeat timeout, then the
//! strategy recovers its own way (do nothing, restart and Greyhound: checkpoint restart on the
//! healthy GPUs, re-running the iterations since the checkpoint; Oobleck: pipeline templates on
//! the surviving nodes; ReCycle: reroute the failed stages' micro-batches; ResiHP: re-plan and
//! reshard from DP peers) and the lost iteration is run again. Otherwise the iteration runs and
//! every detector sees it; only the strategy's own detector acts: ResiHP's alarm leads to its
//! re-plan when the predicted gain over the remaining iterations beats the cost, a change that
//! Greyhound's detector reports to its verification and escalation ([`Greyhound`]); the
//! fail-stop-only strategies never react to a fail-slow.

use alloc::string::String;
use alloc::vec::Vec;

use super::detect::{
    Alarm, Change, ChangePoint, Naive, Observation, ResihpDetector, SlowDetection,
};
use super::job::{jitter, unit, Job, MicroBatch, Plan, PlanEval};
use super::params::{GreyhoundSpec, LinkKind, ResilienceParams};
use super::plan::{self, greyhound as gh, Health, StrategyKind};
use crate::scenario::ScenarioError;
use crate::units::nanos_from_f64;

/// A pause charged to a run's timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Pause {
    /// Start, ns from the job start.
    pub start_ns: u64,
    /// Duration, ns.
    pub dur_ns: u64,
    /// What it was (`heartbeat timeout`, `re-plan`, `restart`, …).
    pub what: String,
    /// Category: `timeout`, `reconfigure`, `restart`, `verify`.
    pub cat: &'static str,
    /// Index in `own_alarms` of the strategy's own fail-slow alarm that caused it, if one did.
    pub alarm: Option<usize>,
}

/// One executed iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// Logical iteration index (a restart re-runs indices).
    pub iteration: u32,
    /// Start, ns from the job start.
    pub start_ns: u64,
    /// Duration, ns.
    pub dur_ns: u64,
    /// ResiHP's predicted time, ns (`None` while warming up).
    pub predicted_ns: Option<f64>,
}

/// Outcome of one strategy over the horizon.
#[derive(Clone, Debug)]
pub struct StrategyRun {
    /// The strategy.
    pub kind: StrategyKind,
    /// Executed iterations in order.
    pub steps: Vec<Step>,
    /// Pauses in order.
    pub pauses: Vec<Pause>,
    /// ResiHP detector alarms (fail-slow), recorded in every run.
    pub alarms: Vec<Alarm>,
    /// Naive detector alarms.
    pub naive_alarms: Vec<Alarm>,
    /// Change-point (CUSUM) detector alarms.
    pub changepoint_alarms: Vec<Alarm>,
    /// Greyhound's detector's reports (slower or faster), recorded in every run.
    pub greyhound_alarms: Vec<Alarm>,
    /// The strategy's own fail-slow alarms (ResiHP's for ResiHP, its detector's for Greyhound;
    /// none for the fail-stop-only strategies).
    pub own_alarms: Vec<Alarm>,
    /// ResiHP localisations that found no outlier (uniform slowdowns).
    pub uniform_verdicts: u32,
    /// Fail-stops detected: (iteration, detection delay ns).
    pub fail_stops: Vec<(u32, u64)>,
    /// Plans adopted after the initial one.
    pub replans: u32,
    /// Training-state bytes moved by re-plans.
    pub reshard_bytes: f64,
    /// Iterations completed (the horizon unless the job stalled).
    pub completed: u32,
    /// Wall time, ns.
    pub total_ns: u64,
    /// Wall time at which the first failure's iteration started, ns (`None` without events).
    pub onset_ns: Option<u64>,
    /// The plan at the end.
    pub final_plan: Plan,
}

impl StrategyRun {
    /// Useful throughput: tokens of the completed iterations per second of wall time.
    #[must_use]
    pub fn throughput_tokens_per_s(&self, tokens_per_iteration: f64) -> f64 {
        if self.total_ns == 0 {
            return 0.0;
        }
        f64::from(self.completed) * tokens_per_iteration / (self.total_ns as f64 / 1e9)
    }

    /// Throughput from the first failure's onset to the end: the iterations from `onset` on
    /// per second of wall time since the onset (`None` without a failure or if it never came).
    #[must_use]
    pub fn throughput_after_onset(&self, onset: u32, tokens_per_iteration: f64) -> Option<f64> {
        let start = self.onset_ns?;
        let iterations = self.completed.checked_sub(onset)?;
        let dt = self.total_ns.checked_sub(start)?;
        (dt > 0).then(|| f64::from(iterations) * tokens_per_iteration / (dt as f64 / 1e9))
    }
}

/// Mean micro-batch of the drawn data (what the planner plans for).
#[must_use]
pub fn typical(batches: &[Vec<MicroBatch>]) -> MicroBatch {
    let mut n = 0.0;
    let mut tokens = 0.0;
    let mut sum_sq = 0.0;
    for mb in batches.iter().flatten() {
        n += 1.0;
        tokens += mb.tokens as f64;
        sum_sq += mb.sum_sq;
    }
    if n == 0.0 {
        return MicroBatch {
            tokens: 0,
            sum_sq: 0.0,
        };
    }
    MicroBatch {
        tokens: libm::round(tokens / n) as u64,
        sum_sq: sum_sq / n,
    }
}

/// The truth at the furthest iteration `reached`: every event active then.
fn truth_at(params: &ResilienceParams, gpus: u32, reached: u32) -> Health {
    let mut h = Health::healthy(gpus);
    let mut events: Vec<_> = params.events.iter().collect();
    events.sort_by_key(|e| e.at_iteration);
    for e in events {
        if e.at_iteration > reached {
            continue;
        }
        let active = e.until_iteration.is_none_or(|u| reached < u);
        for g in e.gpus(params.cluster.gpus_per_node) {
            let i = g as usize;
            if e.dead {
                if let Some(a) = h.alive.get_mut(i) {
                    *a = false;
                }
                continue;
            }
            let v = if active { e.slowdown } else { 1.0 };
            let slot = match e.link {
                None => h.slowdown.get_mut(i),
                Some(LinkKind::Nvlink) => h.nvlink.get_mut(i),
                Some(LinkKind::Nic) => h.nic.get_mut(i),
            };
            if let Some(s) = slot {
                *s = v;
            }
        }
    }
    h
}

/// Greyhound's root-cause verdict from its micro-benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reason {
    /// A computation straggler (or a mild one): S2.
    Compute,
    /// A communication straggler: S3.
    Comm,
}

/// What Greyhound's micro-benchmarks found.
#[derive(Clone, Debug)]
struct Bench {
    reason: Option<Reason>,
    /// Per replica of the plan: its slowest GPU's compute benchmark.
    replica_compute: Vec<f64>,
    /// Median GPU compute benchmark.
    median: f64,
    /// Per stage (over all replicas): the slowest communication benchmark.
    stage_comm: Vec<f64>,
    /// GPUs (compute) or GPUs with a slow link above `slow_ratio` × the median.
    slow_gpus: Vec<u32>,
}

/// Keys of the noise draws (hashed with the lengths' seed, so every strategy sees the same).
const COMM_NOISE: u64 = 0x636f_6d6d;
const STALL_NOISE: u64 = 0x7374_616c;
const SPIKE_NOISE: u64 = 0x7370_696b;
/// Longest kernel spike, iterations.
const MAX_SPIKE: u32 = 8;

/// GPU `g`'s kernel-spike multiplier at iteration `it` (1 outside spikes): a spike starts with
/// chance `rate` per GPU and iteration and lasts 1 + Geometric(0.8) iterations (at most
/// [`MAX_SPIKE`]) at × U(1.3, 2.5).
fn spike(seed: u64, rate: f64, it: u32, g: u32) -> f64 {
    if rate <= 0.0 {
        return 1.0;
    }
    let mut factor = 1.0;
    for back in 0..MAX_SPIKE.min(it + 1) {
        let start = it - back;
        if unit(seed ^ SPIKE_NOISE, start, g) >= rate {
            continue;
        }
        let key = |i: u32| g.wrapping_mul(MAX_SPIKE + 2).wrapping_add(i);
        let len = 1 + (1..MAX_SPIKE)
            .take_while(|&i| unit(seed ^ SPIKE_NOISE ^ 1, start, key(i)) < 0.2)
            .count() as u32;
        if len > back {
            factor *= 1.3 + 1.2 * unit(seed ^ SPIKE_NOISE ^ 2, start, key(0));
        }
    }
    factor
}

/// Runs iteration `it` of `eval`'s plan as it really goes: each GPU at its true slowdown × its
/// jitter × its kernel spike, the links at their true speed × this iteration's communication
/// jitter, plus a host stall with `noise.stall_probability`. Returns the wall time and what the
/// job logs of its GPUs (each one's kernel time), ns.
fn run_iteration(
    job: &Job,
    params: &ResilienceParams,
    eval: &PlanEval,
    truth: &Health,
    it: u32,
    mbs: &[MicroBatch],
) -> Result<(u64, Vec<u64>), ScenarioError> {
    let seed = params.lengths.seed;
    let noise = &params.noise;
    let gpu_factor = |g: u32| {
        truth.slowdown.get(g as usize).copied().unwrap_or(1.0)
            * jitter(seed, it, g, params.lengths.jitter_sigma)
            * spike(seed, noise.spike_rate, it, g)
    };
    let factors: Vec<Vec<f64>> = eval
        .plan
        .replicas
        .iter()
        .map(|r| {
            r.stages
                .iter()
                .map(|s| s.gpus.iter().map(|&g| gpu_factor(g)).fold(0.0, f64::max))
                .collect()
        })
        .collect();
    let mut comm = truth.comm_factors(job, &eval.plan);
    for (r, (tp, p2p)) in comm.tp.iter_mut().zip(&mut comm.p2p).enumerate() {
        let x = jitter(seed ^ COMM_NOISE, it, r as u32, noise.comm_sigma);
        tp.iter_mut().chain(p2p.iter_mut()).for_each(|v| *v *= x);
    }
    comm.dp = comm.dp.max(1.0) * jitter(seed ^ COMM_NOISE, it, u32::MAX, noise.comm_sigma);
    let timing = eval.iteration(mbs, job.alpha_ns, job.beta_ns, &factors, &comm)?;
    let stall_ns = if unit(seed ^ STALL_NOISE, it, 0) < noise.stall_probability {
        let u = unit(seed ^ STALL_NOISE, it, 1);
        nanos_from_f64(-noise.stall_mean_s * 1e9 * libm::log(1.0 - u)).0
    } else {
        0
    };
    let kernel_ns = eval.kernel_ns(mbs, job.alpha_ns, job.beta_ns, job.gpus, gpu_factor);
    Ok((timing.total_ns + stall_ns, kernel_ns))
}

fn median_of(v: &[f64]) -> f64 {
    let mut x = v.to_vec();
    super::detect::median(&mut x)
}

/// Runs Greyhound's verification benchmarks on `plan` under `truth` at iteration `it`: the
/// compute benchmark of each GPU is its true slowdown with this iteration's jitter, the
/// communication benchmark of each stage its slowest NVLink or NIC over every replica
/// (the artifact's pre-check and validation, README "Profiling & Validation").
fn benchmark(
    params: &ResilienceParams,
    plan: &Plan,
    truth: &Health,
    it: u32,
    spec: &GreyhoundSpec,
) -> Bench {
    let j = |g: u32| {
        truth.slowdown.get(g as usize).copied().unwrap_or(1.0)
            * jitter(
                params.lengths.seed ^ 0x6772_6579,
                it,
                g,
                params.lengths.jitter_sigma,
            )
    };
    let used = plan.used_gpus();
    let all: Vec<f64> = used.iter().map(|&g| j(g)).collect();
    let median = median_of(&all);
    let replica_compute: Vec<f64> = plan
        .replicas
        .iter()
        .map(|r| {
            r.stages
                .iter()
                .flat_map(|s| s.gpus.iter())
                .map(|&g| j(g))
                .fold(0.0, f64::max)
        })
        .collect();
    let link = |g: u32| {
        let i = g as usize;
        truth
            .nvlink
            .get(i)
            .copied()
            .unwrap_or(1.0)
            .max(truth.nic.get(i).copied().unwrap_or(1.0))
    };
    let stages = plan
        .replicas
        .iter()
        .map(|r| r.stages.len())
        .max()
        .unwrap_or(0);
    let stage_comm: Vec<f64> = (0..stages)
        .map(|s| {
            plan.replicas
                .iter()
                .filter_map(|r| r.stages.get(s))
                .flat_map(|st| st.gpus.iter())
                .map(|&g| link(g))
                .fold(1.0, f64::max)
        })
        .collect();
    let comm_median = median_of(&stage_comm);
    let max_comp = all.iter().copied().fold(0.0, f64::max);
    let max_comm = stage_comm.iter().copied().fold(0.0, f64::max);
    let comm_slow = stage_comm.len() > 1 && max_comm > spec.slow_ratio * comm_median;
    let mut slow_gpus: Vec<u32> = used
        .iter()
        .copied()
        .filter(|&g| j(g) > spec.slow_ratio * median || (comm_slow && link(g) > spec.slow_ratio))
        .collect();
    slow_gpus.sort_unstable();
    let reason = if max_comp > spec.compute_ratio * median {
        Some(Reason::Compute)
    } else if comm_slow {
        Some(Reason::Comm)
    } else if max_comp > spec.slow_ratio * median {
        Some(Reason::Compute)
    } else {
        None
    };
    Bench {
        reason,
        replica_compute,
        median,
        stage_comm,
        slow_gpus,
    }
}

/// Greyhound's mitigation in progress (ski rental): from `start_ns` on, S2 once the time since
/// exceeds the DP adjustment cost and S3 once it exceeds the PP adjustment cost (the artifact's
/// mitigation loop); S4 (checkpoint restart without the slow GPUs, as for a fail-stop) once the
/// time lost to the straggler since then, Σ (iteration − fastest iteration), reaches the restart
/// cost while the job is still slow after S2/S3 (our reading of the ski-rental rule: the
/// artifact's loop stops after S2/S3).
#[derive(Clone, Debug)]
struct Greyhound {
    start_ns: u64,
    lost_ns: u64,
    alarm: usize,
    bench: Bench,
    s2: bool,
    s3: bool,
    s4: bool,
}

struct State<'a> {
    job: &'a Job,
    eval: PlanEval,
    t_ns: u64,
    run: StrategyRun,
}

impl State<'_> {
    fn pause(&mut self, dur_ns: u64, what: String, cat: &'static str, alarm: Option<usize>) {
        self.run.pauses.push(Pause {
            start_ns: self.t_ns,
            dur_ns,
            what,
            cat,
            alarm,
        });
        self.t_ns += dur_ns;
    }

    fn adopt(&mut self, plan: Plan) {
        let (_, bytes) = plan::reshard_cost(self.job, &self.eval.plan, &plan);
        self.run.reshard_bytes += bytes;
        self.run.replans += 1;
        self.eval = PlanEval::new(self.job, plan);
    }
}

/// Runs `kind` over the horizon.
///
/// # Errors
/// [`ScenarioError::Run`] if an iteration cannot be evaluated (a bug).
#[allow(clippy::too_many_lines)]
pub fn run_strategy(
    job: &Job,
    params: &ResilienceParams,
    batches: &[Vec<MicroBatch>],
    kind: StrategyKind,
) -> Result<StrategyRun, ScenarioError> {
    let initial = Plan::initial(params);
    let horizon = params.iterations;
    let d = &params.detector;
    let g = &params.greyhound;
    let typical_mb = typical(batches);
    let mut detector = ResihpDetector::new(job.gpus, d.threshold, d.persistence, d.fit_window);
    let mut naive = Naive::new(d.window, d.z_threshold);
    let mut cusum = ChangePoint::new(d.window, d.cusum_k, d.cusum_h);
    let mut slow = SlowDetection::new(
        g.change_probability,
        g.min_gap_iterations,
        g.min_degradation,
        g.outlier_z,
        nanos_from_f64(g.check_interval_s * 1e9).0,
    );
    // What the strategies other than ResiHP know: dead GPUs (heartbeats) and, for Greyhound,
    // the GPUs its benchmarks found slow before an S4 restart.
    let mut known = Health::healthy(job.gpus);
    let first_onset = params.events.iter().map(|e| e.at_iteration).min();
    let mut st = State {
        job,
        eval: PlanEval::new(job, initial.clone()),
        t_ns: 0,
        run: StrategyRun {
            kind,
            steps: Vec::new(),
            pauses: Vec::new(),
            alarms: Vec::new(),
            naive_alarms: Vec::new(),
            changepoint_alarms: Vec::new(),
            greyhound_alarms: Vec::new(),
            own_alarms: Vec::new(),
            uniform_verdicts: 0,
            fail_stops: Vec::new(),
            replans: 0,
            reshard_bytes: 0.0,
            completed: 0,
            total_ns: 0,
            onset_ns: None,
            final_plan: initial.clone(),
        },
    };
    let timeout_ns = nanos_from_f64(d.heartbeat_timeout_s * 1e9).0;
    let pause_ns = nanos_from_f64(params.planner.pause_s * 1e9).0;
    let recovery_ns = nanos_from_f64(params.planner.restart_recovery_s * 1e9).0;
    let bench_ns = nanos_from_f64(g.benchmark_s * 1e9).0;
    let pp_ns = nanos_from_f64(g.pp_adjust_s * 1e9).0;
    let ckpt = params.planner.checkpoint_interval;
    let mut checkpoint = 0u32;
    let mut it = 0u32;
    let mut reached = 0u32;
    // ReCycle reroutes within the layout it last (re)started with.
    let mut recycle_base = initial.clone();
    let mut mitigation: Option<Greyhound> = None;
    let mut min_iter_ns = u64::MAX;
    // Bound on executed iterations (restarts re-run work): a stuck run ends as stalled.
    let max_steps = u64::from(horizon) * 4 + 1000;
    let mut stalled = false;
    while it < horizon {
        if st.run.steps.len() as u64 > max_steps {
            stalled = true;
            break;
        }
        reached = reached.max(it);
        if st.run.onset_ns.is_none() && first_onset.is_some_and(|o| o <= reached) {
            st.run.onset_ns = Some(st.t_ns);
        }
        let truth = truth_at(params, job.gpus, reached);
        // Fail-stop: a used GPU is dead, the job hangs until the heartbeat timeout.
        let dead: Vec<u32> = st
            .eval
            .plan
            .used_gpus()
            .into_iter()
            .filter(|&g| !truth.alive.get(g as usize).copied().unwrap_or(false))
            .collect();
        if !dead.is_empty() {
            st.pause(
                timeout_ns,
                alloc::format!("heartbeat timeout: GPU {dead:?} dead"),
                "timeout",
                None,
            );
            st.run.fail_stops.push((it, timeout_ns));
            for &g in &dead {
                if let Some(a) = detector.known.alive.get_mut(g as usize) {
                    *a = false;
                }
                if let Some(a) = known.alive.get_mut(g as usize) {
                    *a = false;
                }
            }
            let restart = |st: &mut State, known: &Health, it: &mut u32| {
                let p = plan::restart(job, &initial, known);
                if p.is_some() {
                    st.pause(recovery_ns, "checkpoint restart".into(), "restart", None);
                    *it = checkpoint;
                }
                p
            };
            let next = match kind {
                StrategyKind::Nothing | StrategyKind::Restart | StrategyKind::Greyhound => {
                    mitigation = None;
                    restart(&mut st, &known, &mut it)
                }
                StrategyKind::Oobleck => {
                    let p = plan::oobleck(job, &st.eval.plan, &known);
                    if let Some(p) = &p {
                        let (reshard_ns, _) = plan::reshard_cost(job, &st.eval.plan, p);
                        st.pause(
                            pause_ns + nanos_from_f64(reshard_ns).0,
                            "re-instantiate pipelines from templates".into(),
                            "reconfigure",
                            None,
                        );
                    }
                    p
                }
                StrategyKind::Recycle => {
                    if let Some(p) = plan::recycle(&recycle_base, &known) {
                        st.pause(
                            pause_ns,
                            "reroute micro-batches to DP peers".into(),
                            "reconfigure",
                            None,
                        );
                        Some(p)
                    } else {
                        let p = restart(&mut st, &known, &mut it);
                        if let Some(p) = &p {
                            recycle_base = p.clone();
                        }
                        p
                    }
                }
                StrategyKind::Resihp => {
                    let p = plan::resihp(job, &initial, &detector.known, typical_mb);
                    if let Some(p) = &p {
                        let (reshard_ns, _) = plan::reshard_cost(job, &st.eval.plan, p);
                        st.pause(
                            pause_ns + nanos_from_f64(reshard_ns).0,
                            "re-plan".into(),
                            "reconfigure",
                            None,
                        );
                    }
                    p
                }
            };
            if kind == StrategyKind::Greyhound {
                slow.clear();
            }
            match next {
                Some(p) if p.used_gpus().iter().all(|&g| truth.alive[g as usize]) => st.adopt(p),
                _ => {
                    stalled = true;
                    break;
                }
            }
            continue;
        }
        let mbs = batches.get(it as usize).map_or(&[][..], Vec::as_slice);
        let (wall_ns, kernel_ns) = run_iteration(job, params, &st.eval, &truth, it, mbs)?;
        let obs = Observation {
            iteration: it,
            wall_ns,
            micro_batches: mbs,
            kernel_ns: &kernel_ns,
        };
        let before = detector.localisations.len();
        let (predicted, alarm) = detector.observe(job, &st.eval, &obs)?;
        if detector.localisations.len() > before && alarm.is_none() {
            st.run.uniform_verdicts += 1;
        }
        st.run.steps.push(Step {
            iteration: it,
            start_ns: st.t_ns,
            dur_ns: wall_ns,
            predicted_ns: predicted,
        });
        st.t_ns += wall_ns;
        min_iter_ns = min_iter_ns.min(wall_ns);
        let time_s = wall_ns as f64 / 1e9;
        let bare = |iteration| Alarm {
            iteration,
            gpus: Vec::new(),
            slowdowns: Vec::new(),
        };
        if let Some(a) = naive.observe(it, time_s) {
            st.run.naive_alarms.push(a);
        }
        if let Some(a) = cusum.observe(it, time_s) {
            st.run.changepoint_alarms.push(a);
        }
        // Every reported change is verified, then the buffer starts afresh (the artifact's
        // local controller, in every run).
        let change = slow.observe(time_s, wall_ns);
        if change.is_some() {
            st.run.greyhound_alarms.push(bare(it));
            slow.clear();
        }
        let done = it;
        it += 1;
        if it.is_multiple_of(ckpt) {
            checkpoint = it;
        }
        if let Some(alarm) = &alarm {
            st.run.alarms.push(alarm.clone());
        }
        match kind {
            StrategyKind::Resihp => {
                if let Some(alarm) = alarm {
                    st.run.own_alarms.push(alarm);
                    let index = st.run.own_alarms.len() - 1;
                    resihp_react(
                        &mut st,
                        &initial,
                        &detector.known,
                        typical_mb,
                        horizon - it,
                        pause_ns,
                        index,
                    );
                }
            }
            StrategyKind::Greyhound => {
                let layout_before = layout(&st.eval.plan);
                if let Some(c) = change {
                    st.run.own_alarms.push(bare(done));
                    let index = st.run.own_alarms.len() - 1;
                    st.pause(
                        bench_ns,
                        "verification micro-benchmarks".into(),
                        "verify",
                        Some(index),
                    );
                    let bench = benchmark(params, &st.eval.plan, &truth, done, g);
                    if c == Change::Faster {
                        if st.eval.plan != initial {
                            greyhound_recovered(&mut st, &initial, &bench, pp_ns, &mut mitigation);
                        }
                    } else if bench.reason.is_some() && !bench.slow_gpus.is_empty() {
                        if let Some(m) = &mut mitigation {
                            // A mitigation is under way: it goes on with the new findings.
                            m.bench = bench;
                        } else {
                            let mut m = Greyhound {
                                start_ns: st.t_ns,
                                lost_ns: 0,
                                alarm: index,
                                bench,
                                s2: false,
                                s3: false,
                                s4: false,
                            };
                            // Barely slow: redistribute at once (the artifact's 1.1× shortcut).
                            if wall_ns as f64 <= g.slow_ratio * min_iter_ns as f64 {
                                greyhound_s2(&mut st, &mut m, min_iter_ns, wall_ns, g);
                            }
                            mitigation = Some(m);
                        }
                    }
                }
                if let Some(m) = &mut mitigation {
                    let since = st.t_ns.saturating_sub(m.start_ns);
                    let lost = wall_ns.saturating_sub(min_iter_ns);
                    // The artifact's S2 wait: `get_dp_adjustment_cost(dp_check_interval // 2,
                    // ...)` = (interval // 2) · Δ / 2 (cost_estimator.py:35–39 with
                    // mitigation_plan.py:145), inside its 2 × pp-cost loop (l.157).
                    let dp_cost = u64::from(g.dp_check_interval / 2) * lost / 2;
                    let in_loop = dp_cost <= 2 * pp_ns;
                    if m.bench.reason == Some(Reason::Compute) && !m.s2 && in_loop && since >= dp_cost
                    {
                        greyhound_s2(&mut st, m, min_iter_ns, wall_ns, g);
                    }
                    if m.bench.reason == Some(Reason::Comm) && !m.s3 && since >= pp_ns {
                        m.s3 = true;
                        let caps = gh::stage_caps(job, &st.eval.plan);
                        let next = gh::pp_split(&m.bench.stage_comm, &caps, job.layers)
                            .and_then(|l| gh::with_layers(&st.eval.plan, &l));
                        if let Some(p) = next.filter(|p| *p != st.eval.plan) {
                            st.pause(
                                pp_ns,
                                "S3: pipeline re-split".into(),
                                "reconfigure",
                                Some(m.alarm),
                            );
                            st.adopt(p);
                        }
                    }
                    m.lost_ns += lost;
                    let still_slow = wall_ns as f64 > g.slow_ratio * min_iter_ns as f64;
                    if !m.s4 && still_slow && m.lost_ns >= recovery_ns && (m.s2 || m.s3) {
                        m.s4 = true;
                        for &g in &m.bench.slow_gpus {
                            if let Some(s) = known.slowdown.get_mut(g as usize) {
                                *s = f64::INFINITY;
                            }
                        }
                        if let Some(p) = plan::restart(job, &initial, &known) {
                            st.pause(
                                recovery_ns,
                                "S4: checkpoint restart".into(),
                                "restart",
                                Some(m.alarm),
                            );
                            it = checkpoint;
                            st.adopt(p);
                        }
                        mitigation = None;
                    }
                }
                // Greyhound restarts the job on another layout (S3, S4): its buffer starts afresh.
                // After S2 (new micro-batch shares only) it keeps watching, so it sees the
                // recovery.
                if layout(&st.eval.plan) != layout_before {
                    slow.clear();
                }
            }
            _ => {}
        }
    }
    st.run.completed = if stalled { it } else { horizon };
    st.run.total_ns = st.t_ns;
    st.run.final_plan = st.eval.plan.clone();
    Ok(st.run)
}

/// The plan's layout without the micro-batch shares: per replica, each stage's GPUs and layers.
fn layout(plan: &Plan) -> Vec<Vec<(Vec<u32>, u32)>> {
    plan.replicas
        .iter()
        .map(|r| {
            r.stages
                .iter()
                .map(|s| (s.gpus.clone(), s.layers))
                .collect()
        })
        .collect()
}

/// After a faster change on a mitigated plan: if the fresh benchmarks find nothing slow and
/// the plan keeps the original GPUs, Greyhound returns to the original plan (undoing an S3
/// re-split costs its restart from memory).
fn greyhound_recovered(
    st: &mut State,
    initial: &Plan,
    bench: &Bench,
    pp_ns: u64,
    mitigation: &mut Option<Greyhound>,
) {
    let same_gpus = st.eval.plan.used_gpus() == initial.used_gpus();
    if !bench.slow_gpus.is_empty() || !same_gpus {
        return;
    }
    let resplit = st
        .eval
        .plan
        .replicas
        .iter()
        .zip(&initial.replicas)
        .any(|(a, b)| {
            a.stages
                .iter()
                .zip(&b.stages)
                .any(|(x, y)| x.layers != y.layers)
        });
    if resplit {
        st.pause(pp_ns, "undo pipeline re-split".into(), "reconfigure", None);
    }
    st.adopt(initial.clone());
    *mitigation = None;
}

/// Greyhound's S2: micro-batches redistributed across the DP replicas by their benchmarked
/// speed (no pause: the new distribution is read at the next DP check).
fn greyhound_s2(
    st: &mut State,
    m: &mut Greyhound,
    min_iter_ns: u64,
    now_ns: u64,
    spec: &GreyhoundSpec,
) {
    m.s2 = true;
    if m.bench.replica_compute.len() != st.eval.plan.replicas.len() {
        return;
    }
    let times = gh::replica_times(
        &m.bench.replica_compute,
        m.bench.median,
        spec.slow_ratio,
        min_iter_ns as f64,
        now_ns as f64,
    );
    let shares = gh::dp_shares(&times, st.eval.plan.total_micro_batches());
    let next = gh::with_shares(&st.eval.plan, &shares);
    if next != st.eval.plan {
        st.adopt(next);
    }
}

/// ResiHP's reaction to its own alarm: adopt its re-plan when (predicted now − with the plan) ×
/// the remaining iterations exceeds the pause plus the resharding time.
fn resihp_react(
    st: &mut State,
    initial: &Plan,
    known: &Health,
    typical_mb: MicroBatch,
    remaining: u32,
    pause_ns: u64,
    alarm: usize,
) {
    let job = st.job;
    let Some(candidate) = plan::resihp(job, initial, known, typical_mb) else {
        return;
    };
    if candidate == st.eval.plan {
        return;
    }
    let now = plan::predicted_ns(job, &st.eval.plan, known, typical_mb);
    let then = plan::predicted_ns(job, &candidate, known, typical_mb);
    let (reshard_ns, _) = plan::reshard_cost(job, &st.eval.plan, &candidate);
    let cost_ns = pause_ns as f64 + reshard_ns;
    let gain_ns = if now.is_finite() {
        (now - then) * f64::from(remaining)
    } else {
        f64::INFINITY
    };
    if then.is_finite() && gain_ns > cost_ns {
        st.pause(
            pause_ns + nanos_from_f64(reshard_ns).0,
            "re-plan".into(),
            "reconfigure",
            Some(alarm),
        );
        st.adopt(candidate);
    }
}
