//! One strategy's run over the horizon: iterations with the injected events, the detectors, and
//! the strategy's reaction. Simulated time is integer nanoseconds ([`crate::units`]).
//!
//! Per iteration: apply the events due; if the plan uses a dead GPU the job hangs until the
//! heartbeat timeout, then the strategy recovers (do nothing and restart: checkpoint restart on
//! the healthy GPUs, re-running the iterations since the checkpoint; drop-replicas: shrink;
//! ResiHP: re-plan and reshard from DP peers) and the lost iteration is run again. Otherwise the
//! iteration runs, every detector sees it, and on a ResiHP alarm the strategy decides: each
//! baseline's plan (or ResiHP's) is adopted only when the predicted gain over the remaining
//! iterations exceeds its cost (pause, resharding, or recovery plus re-run work).

use alloc::string::String;
use alloc::vec::Vec;

use super::detect::{Alarm, ChangePoint, Naive, ResihpDetector};
use super::job::{jitter, Job, MicroBatch, Plan, PlanEval};
use super::params::ResilienceParams;
use super::plan::{self, Health, StrategyKind};
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
    /// Category: `timeout`, `reconfigure`, `restart`.
    pub cat: &'static str,
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
    /// ResiHP detector alarms (fail-slow).
    pub alarms: Vec<Alarm>,
    /// Naive detector alarms.
    pub naive_alarms: Vec<Alarm>,
    /// Change-point detector alarms.
    pub changepoint_alarms: Vec<Alarm>,
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

struct State<'a> {
    job: &'a Job,
    kind: StrategyKind,
    initial: &'a Plan,
    typical: MicroBatch,
    eval: PlanEval,
    t_ns: u64,
    run: StrategyRun,
}

impl State<'_> {
    fn pause(&mut self, dur_ns: u64, what: String, cat: &'static str) {
        self.run.pauses.push(Pause {
            start_ns: self.t_ns,
            dur_ns,
            what,
            cat,
        });
        self.t_ns += dur_ns;
    }

    fn adopt(&mut self, plan: Plan) {
        let (_, bytes) = plan::reshard_cost(self.job, &self.eval.plan, &plan);
        self.run.reshard_bytes += bytes;
        self.run.replans += 1;
        self.eval = PlanEval::new(self.job, plan);
    }

    /// The strategy's candidate plan for `known` health.
    fn candidate(&self, known: &Health) -> Option<Plan> {
        match self.kind {
            StrategyKind::Nothing => Some(plan::nothing(&self.eval.plan)),
            StrategyKind::DropReplicas => plan::drop_replicas(&self.eval.plan, known),
            StrategyKind::Restart => plan::restart(self.job, self.initial, known),
            StrategyKind::Resihp => plan::resihp(self.job, self.initial, known, self.typical),
        }
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
    let mut truth = Health::healthy(job.gpus);
    let mut detector = ResihpDetector::new(job.gpus, d.threshold, d.persistence, d.fit_window);
    let mut naive = Naive::new(d.window, d.z_threshold);
    let mut cusum = ChangePoint::new(d.window, d.cusum_k, d.cusum_h);
    let mut events: Vec<_> = params.events.iter().collect();
    events.sort_by_key(|e| e.at_iteration);
    let mut next_event = 0usize;
    let mut st = State {
        job,
        kind,
        initial: &initial,
        typical: typical(batches),
        eval: PlanEval::new(job, initial.clone()),
        t_ns: 0,
        run: StrategyRun {
            kind,
            steps: Vec::new(),
            pauses: Vec::new(),
            alarms: Vec::new(),
            naive_alarms: Vec::new(),
            changepoint_alarms: Vec::new(),
            uniform_verdicts: 0,
            fail_stops: Vec::new(),
            replans: 0,
            reshard_bytes: 0.0,
            completed: 0,
            total_ns: 0,
            final_plan: initial.clone(),
        },
    };
    let timeout_ns = nanos_from_f64(d.heartbeat_timeout_s * 1e9).0;
    let pause_ns = nanos_from_f64(params.planner.pause_s * 1e9).0;
    let recovery_ns = nanos_from_f64(params.planner.restart_recovery_s * 1e9).0;
    let ckpt = params.planner.checkpoint_interval;
    let mut checkpoint = 0u32;
    let mut it = 0u32;
    // Bound on executed iterations (restarts re-run work): a stuck run ends as stalled.
    let max_steps = u64::from(horizon) * 4 + 1000;
    let mut stalled = false;
    while it < horizon {
        if st.run.steps.len() as u64 > max_steps {
            stalled = true;
            break;
        }
        while next_event < events.len() && events[next_event].at_iteration <= it {
            let e = events[next_event];
            let gpus: Vec<u32> = match (e.gpu, e.node) {
                (Some(g), _) => alloc::vec![g],
                (None, Some(n)) => (n * job.gpus_per_node..(n + 1) * job.gpus_per_node).collect(),
                _ => Vec::new(),
            };
            for g in gpus {
                if let Some(s) = truth.slowdown.get_mut(g as usize) {
                    *s = e.slowdown;
                }
                if e.dead {
                    if let Some(a) = truth.alive.get_mut(g as usize) {
                        *a = false;
                    }
                }
            }
            next_event += 1;
        }
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
            );
            st.run.fail_stops.push((it, timeout_ns));
            for &g in &dead {
                if let Some(a) = detector.known.alive.get_mut(g as usize) {
                    *a = false;
                }
            }
            let known = detector.known.clone();
            let next = match kind {
                StrategyKind::Nothing | StrategyKind::Restart => {
                    let p = plan::restart(job, &initial, &known);
                    if p.is_some() {
                        st.pause(recovery_ns, "checkpoint restart".into(), "restart");
                        it = checkpoint;
                    }
                    p
                }
                StrategyKind::DropReplicas => {
                    let p = plan::drop_replicas(&st.eval.plan, &known);
                    if p.is_some() {
                        st.pause(pause_ns, "drop replicas".into(), "reconfigure");
                    }
                    p
                }
                StrategyKind::Resihp => {
                    let p = plan::resihp(job, &initial, &known, st.typical);
                    if let Some(p) = &p {
                        let (reshard_ns, _) = plan::reshard_cost(job, &st.eval.plan, p);
                        st.pause(
                            pause_ns + nanos_from_f64(reshard_ns).0,
                            "re-plan".into(),
                            "reconfigure",
                        );
                    }
                    p
                }
            };
            match next {
                Some(p) => st.adopt(p),
                None => {
                    stalled = true;
                    break;
                }
            }
            continue;
        }
        let gpu_factor: Vec<f64> = (0..job.gpus)
            .map(|g| {
                truth.slowdown[g as usize]
                    * jitter(params.lengths.seed, it, g, params.lengths.jitter_sigma)
            })
            .collect();
        let factors: Vec<Vec<f64>> = st
            .eval
            .plan
            .replicas
            .iter()
            .map(|r| {
                r.stages
                    .iter()
                    .map(|s| {
                        s.gpus
                            .iter()
                            .map(|&g| gpu_factor[g as usize])
                            .fold(0.0, f64::max)
                    })
                    .collect()
            })
            .collect();
        let mbs = batches.get(it as usize).map_or(&[][..], Vec::as_slice);
        let timing = st
            .eval
            .iteration(mbs, job.alpha_ns, job.beta_ns, &factors)?;
        let before = detector.localisations.len();
        let (predicted, alarm) =
            detector.observe(job, it, &st.eval, mbs, &gpu_factor, timing.total_ns)?;
        if detector.localisations.len() > before && alarm.is_none() {
            st.run.uniform_verdicts += 1;
        }
        st.run.steps.push(Step {
            iteration: it,
            start_ns: st.t_ns,
            dur_ns: timing.total_ns,
            predicted_ns: predicted,
        });
        st.t_ns += timing.total_ns;
        let time_s = timing.total_ns as f64 / 1e9;
        if let Some(a) = naive.observe(it, time_s) {
            st.run.naive_alarms.push(a);
        }
        if let Some(a) = cusum.observe(it, time_s) {
            st.run.changepoint_alarms.push(a);
        }
        it += 1;
        if it.is_multiple_of(ckpt) {
            checkpoint = it;
        }
        if let Some(alarm) = alarm {
            st.run.alarms.push(alarm);
            let known = detector.known.clone();
            if let Some(candidate) = st.candidate(&known) {
                if candidate != st.eval.plan {
                    let remaining = f64::from(horizon - it);
                    let now = plan::predicted_ns(job, &st.eval.plan, &known, st.typical);
                    let then = plan::predicted_ns(job, &candidate, &known, st.typical);
                    let (cost_ns, restart) = match kind {
                        StrategyKind::Restart => {
                            let rework = f64::from(it - checkpoint) * then;
                            (recovery_ns as f64 + rework, true)
                        }
                        StrategyKind::Resihp => {
                            let (reshard_ns, _) =
                                plan::reshard_cost(job, &st.eval.plan, &candidate);
                            (pause_ns as f64 + reshard_ns, false)
                        }
                        _ => (pause_ns as f64, false),
                    };
                    let gain_ns = if now.is_finite() {
                        (now - then) * remaining
                    } else {
                        f64::INFINITY
                    };
                    if then.is_finite() && gain_ns > cost_ns {
                        if restart {
                            st.pause(recovery_ns, "checkpoint restart".into(), "restart");
                            it = checkpoint;
                        } else {
                            let label = if kind == StrategyKind::Resihp {
                                "re-plan"
                            } else {
                                "drop replicas"
                            };
                            let extra = cost_ns as u64 - pause_ns.min(cost_ns as u64);
                            st.pause(pause_ns + extra, label.into(), "reconfigure");
                        }
                        st.adopt(candidate);
                    }
                }
            }
        }
    }
    st.run.completed = if stalled { it } else { horizon };
    st.run.total_ns = st.t_ns;
    st.run.final_plan = st.eval.plan.clone();
    Ok(st.run)
}
