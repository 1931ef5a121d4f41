//! The metrics of one policy's run (formulas in docs/MODEL.md, "Fairness lab").

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::params::FairnessParams;
use super::sim::PolicyRun;

/// A job is treated fairly when its F_j lies within [`FAIR_LOW`, 1/`FAIR_LOW`].
pub const FAIR_LOW: f64 = 0.95;

/// Summary numbers of one run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PolicyMetrics {
    /// Jobs that finished.
    pub finished: usize,
    /// Jobs that never finished (could not be placed).
    pub unfinished: usize,
    /// Mean job completion time (finish − submit), s.
    pub avg_jct_s: f64,
    /// 99th percentile JCT (nearest rank), s.
    pub p99_jct_s: f64,
    /// Mean queueing delay (first start − submit), s.
    pub avg_queue_s: f64,
    /// Last finish − first submission, s.
    pub makespan_s: f64,
    /// Busy GPU-time / (G × makespan), 0–1.
    pub utilisation: f64,
    /// Time-averaged mean shortfall of tenants, mean_u max(0, 1 − F_u) over samples.
    pub tenant_unfairness: f64,
    /// Time-averaged standard deviation of F_u across tenants.
    pub tenant_spread: f64,
    /// Share of (tenant, sample) pairs with F_u < 0.95, averaged per tenant then over tenants.
    pub below_share: f64,
    /// Share of finished jobs with F_j in [0.95, 1/0.95] (the artifact's "fair").
    pub job_fair_share: f64,
    /// Share of finished jobs with F_j < 0.95 (the artifact's "loss"): job-level unfairness.
    pub job_loss_share: f64,
    /// Share of finished jobs with F_j > 1/0.95 (the artifact's "benefit").
    pub job_benefit_share: f64,
    /// Finished jobs' F_j = gⱼ·durationⱼ / D_j at their finish, sorted.
    pub job_f_sorted: Vec<f64>,
    /// Jain's index of tenants' normalised service U_u/D_u over the whole run.
    pub jain: f64,
    /// Preemptions.
    pub preemptions: u64,
    /// Time-averaged share of free GPUs on partly used nodes, 0–1.
    pub fragmentation: f64,
    /// Sorted JCTs, s.
    pub jcts_s: Vec<f64>,
    /// Jobs with a deadline, and what became of them.
    pub deadlines: DeadlineMetrics,
}

/// Deadlines met and missed (Chronus' metrics: the deadline miss rate of SLO jobs and the JCT of
/// best-effort ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeadlineMetrics {
    /// Jobs with a deadline (SLO jobs).
    pub slo_jobs: usize,
    /// SLO jobs that finished by their deadline.
    pub met: usize,
    /// SLO jobs a policy with admission control admitted (0 for the others).
    pub admitted: usize,
    /// Admitted SLO jobs that finished by their deadline.
    pub admitted_met: usize,
    /// Jobs without a deadline (best-effort).
    pub best_effort_jobs: usize,
    /// Best-effort jobs that finished.
    pub best_effort_finished: usize,
    /// Mean JCT of the finished best-effort jobs, s (0 with none).
    pub best_effort_avg_jct_s: f64,
    /// SLO jobs with later (soft) deadlines.
    pub soft_jobs: usize,
    /// Value lost over the SLO jobs: per job 0 when it finished by its first deadline, 1 − the
    /// value of the first later deadline it finished by, 1 when it met none (the Chronus
    /// artifact's `miss_ddl`, `time_aware_with_lease.py` lines 1036–1042).
    pub value_lost: f64,
}

impl DeadlineMetrics {
    /// Share of SLO jobs that missed their deadline (unfinished ones included), 0–1; 0 with
    /// no SLO job.
    #[must_use]
    pub fn miss_rate(&self) -> f64 {
        if self.slo_jobs == 0 {
            0.0
        } else {
            (self.slo_jobs - self.met) as f64 / self.slo_jobs as f64
        }
    }

    /// Mean value lost per SLO job ([`DeadlineMetrics::value_lost`]), 0–1; equal to the miss
    /// rate without soft deadlines.
    #[must_use]
    pub fn value_lost_rate(&self) -> f64 {
        if self.slo_jobs == 0 {
            0.0
        } else {
            self.value_lost / self.slo_jobs as f64
        }
    }
}

/// Counts the deadlines met by a run's jobs.
#[must_use]
pub fn deadline_metrics(run: &PolicyRun) -> DeadlineMetrics {
    let mut m = DeadlineMetrics::default();
    let mut be_jct_s = 0.0;
    for j in &run.jobs {
        if let Some(d) = j.deadline_ns {
            m.slo_jobs += 1;
            let met = j.finish_ns <= d;
            m.met += usize::from(met);
            m.soft_jobs += usize::from(!j.later_deadlines.is_empty());
            if !met {
                let later = j.later_deadlines.iter().find(|l| j.finish_ns <= l.at_ns);
                m.value_lost += 1.0 - later.map_or(0.0, |l| l.value);
            }
            if j.admitted == Some(true) {
                m.admitted += 1;
                m.admitted_met += usize::from(met);
            }
        } else {
            m.best_effort_jobs += 1;
            if j.finish_ns != u64::MAX {
                m.best_effort_finished += 1;
                be_jct_s += (j.finish_ns - j.submit_ns) as f64 / 1e9;
            }
        }
    }
    if m.best_effort_finished > 0 {
        m.best_effort_avg_jct_s = be_jct_s / m.best_effort_finished as f64;
    }
    m
}

/// Nearest-rank percentile of sorted values (q in 0–1).
#[must_use]
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    crate::units::nearest_rank(sorted.len(), q).map_or(0.0, |i| sorted[i])
}

/// Per sample: (mean shortfall, std of F_u, lowest F_u) over tenants with a defined F_u.
#[must_use]
pub fn sample_stats(fs: &[Option<f64>]) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = fs.iter().flatten().copied().collect();
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let short = v.iter().map(|f| (1.0 - f).max(0.0)).sum::<f64>() / n;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|f| (f - mean) * (f - mean)).sum::<f64>() / n;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    Some((short, libm::sqrt(var), min))
}

/// Computes every metric of a run.
#[must_use]
pub fn compute(run: &PolicyRun) -> PolicyMetrics {
    let mut jcts = Vec::new();
    let mut queue_sum = 0.0;
    let mut fs: Vec<f64> = Vec::new();
    for (i, j) in run.jobs.iter().enumerate() {
        if j.finish_ns == u64::MAX {
            continue;
        }
        jcts.push((j.finish_ns - j.submit_ns) as f64 / 1e9);
        queue_sum += (j.first_start_ns - j.submit_ns) as f64 / 1e9;
        // U_j = gⱼ × the job's run time at the finish (work done, without lost progress or
        // overheads), as the artifact's `finish_job`.
        let d = run.job_deserved_gpu_ns[i];
        if d > 0.0 {
            fs.push(f64::from(j.gpus) * j.duration_ns as f64 / d);
        }
    }
    fs.sort_by(f64::total_cmp);
    let judged = fs.len();
    let fair = fs
        .iter()
        .filter(|f| (FAIR_LOW..=1.0 / FAIR_LOW).contains(*f))
        .count();
    let loss = fs.iter().filter(|&&f| f < FAIR_LOW).count();
    let benefit = judged - fair - loss;
    let of = |c: usize, empty: f64| {
        if judged > 0 {
            c as f64 / judged as f64
        } else {
            empty
        }
    };
    jcts.sort_by(f64::total_cmp);
    let finished = jcts.len();
    let n = finished.max(1) as f64;
    let makespan_ns = run.last_finish_ns.saturating_sub(run.first_submit_ns);
    let utilisation = if makespan_ns > 0 {
        run.busy_gpu_ns as f64 / (run.total_gpus as f64 * makespan_ns as f64)
    } else {
        0.0
    };
    // Tenant fairness over the samples; a run shorter than one bucket uses its totals.
    let whole: Vec<Option<f64>> = run
        .tenants
        .iter()
        .map(|u| (u.deserved_total > 0).then(|| u.used_total as f64 / u.deserved_total as f64))
        .collect();
    let samples: Vec<&[Option<f64>]> = if run.samples.is_empty() {
        alloc::vec![whole.as_slice()]
    } else {
        run.samples.iter().map(|s| s.tenant_f.as_slice()).collect()
    };
    let (mut short, mut spread, mut count) = (0.0, 0.0, 0usize);
    let tenants = run.tenants.len();
    let mut below = alloc::vec![(0usize, 0usize); tenants];
    for fs in &samples {
        if let Some((s, sd, _)) = sample_stats(fs) {
            short += s;
            spread += sd;
            count += 1;
        }
        for (u, f) in fs.iter().enumerate() {
            if let Some(f) = f {
                below[u].1 += 1;
                if *f < FAIR_LOW {
                    below[u].0 += 1;
                }
            }
        }
    }
    let c = count.max(1) as f64;
    let judged_tenants: Vec<f64> = below
        .iter()
        .filter(|b| b.1 > 0)
        .map(|b| b.0 as f64 / b.1 as f64)
        .collect();
    let below_share = if judged_tenants.is_empty() {
        0.0
    } else {
        judged_tenants.iter().sum::<f64>() / judged_tenants.len() as f64
    };
    let xs: Vec<f64> = whole.iter().flatten().copied().collect();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    let jain = if sq > 0.0 {
        let s: f64 = xs.iter().sum();
        s * s / (xs.len() as f64 * sq)
    } else {
        1.0
    };
    PolicyMetrics {
        finished,
        unfinished: run.jobs.len() - finished,
        avg_jct_s: jcts.iter().sum::<f64>() / n,
        p99_jct_s: percentile(&jcts, 0.99),
        avg_queue_s: queue_sum / n,
        makespan_s: makespan_ns as f64 / 1e9,
        utilisation,
        tenant_unfairness: short / c,
        tenant_spread: spread / c,
        below_share,
        job_fair_share: of(fair, 1.0),
        job_loss_share: of(loss, 0.0),
        job_benefit_share: of(benefit, 0.0),
        job_f_sorted: fs,
        jain,
        preemptions: run.preemptions,
        fragmentation: if makespan_ns > 0 {
            run.fragmentation_integral / makespan_ns as f64
        } else {
            0.0
        },
        jcts_s: jcts,
        deadlines: deadline_metrics(run),
    }
}

/// What an inference service beside the training jobs got, and what training paid for sharing
/// the servers (docs/MODEL.md, "Training beside inference").
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ColocationMetrics {
    /// The service's replicas (a server for one interval of its demand).
    pub replicas: usize,
    /// Replicas that did not serve within the SLO of the step that asked for them, or were
    /// interrupted (preempted) once serving.
    pub late: usize,
    /// Server-hours the service asked for and did not get: Σ over replicas of (finish −
    /// submission − interval + checkpoint wait), h.
    pub unserved_server_h: f64,
    /// The longest a replica waited to serve (checkpoint wait included), s.
    pub worst_wait_s: f64,
    /// Training jobs.
    pub training_jobs: usize,
    /// Mean JCT of the finished training jobs, s.
    pub training_avg_jct_s: f64,
    /// Mean queueing delay (first start − submission) of the finished training jobs, s.
    pub training_avg_queue_s: f64,
    /// Preemptions of training jobs.
    pub training_preemptions: u64,
    /// GPU-hours training lost to those preemptions (each costs its checkpoint and resume), h.
    pub preemption_lost_gpu_h: f64,
    /// GPU-hours training ran on the service's servers (capacity loaned), h.
    pub loaned_gpu_h: f64,
}

impl ColocationMetrics {
    /// Share of replicas late or interrupted, 0–1 (0 with none).
    #[must_use]
    pub fn slo_violation_rate(&self) -> f64 {
        if self.replicas == 0 {
            0.0
        } else {
            self.late as f64 / self.replicas as f64
        }
    }
}

/// The service's and the training jobs' figures of a run on a trace with a service
/// (`params.colocation`); `None` without one. A replica given a server at t serves once the
/// training jobs preempted there at t have written their checkpoints
/// ([`FairnessParams::checkpoint_save_s`]).
#[must_use]
pub fn colocation_metrics(params: &FairnessParams, run: &PolicyRun) -> Option<ColocationMetrics> {
    if params.colocation.is_off() {
        return None;
    }
    let (lo, hi) = params.colocation.service_nodes(params.cluster.nodes);
    let mut m = ColocationMetrics::default();
    let (mut jct_s, mut queue_s) = (0.0, 0.0);
    let mut finished = 0usize;
    // First segment of each job (segments are pushed in time order).
    let mut first_seg: BTreeMap<usize, usize> = BTreeMap::new();
    // Segments of training jobs that ended in a preemption, by their end time.
    let mut stopped_at: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, seg) in run.segments.iter().enumerate() {
        first_seg.entry(seg.job).or_insert(i);
        let job = &run.jobs[seg.job];
        if !job.service {
            let on: u32 = seg
                .alloc
                .iter()
                .filter(|(n, _)| (lo..hi).contains(n))
                .map(|(_, c)| c)
                .sum();
            m.loaned_gpu_h += f64::from(on) * (seg.end_ns - seg.start_ns) as f64 / 3.6e12;
            if job.finish_ns != seg.end_ns {
                stopped_at.entry(seg.end_ns).or_default().push(i);
            }
        }
    }
    // The checkpoint costs per GPU count (the migration lab's model is evaluated once each).
    let mut costs: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    let mut cost = |g: u32| {
        *costs
            .entry(g)
            .or_insert_with(|| (params.preemption_cost_s(g), params.checkpoint_save_s(g)))
    };
    for (j, job) in run.jobs.iter().enumerate() {
        if !job.service {
            m.training_jobs += 1;
            m.training_preemptions += u64::from(job.preemptions);
            if job.preemptions > 0 {
                m.preemption_lost_gpu_h +=
                    f64::from(job.preemptions) * cost(job.gpus).0 * f64::from(job.gpus) / 3600.0;
            }
            if job.finish_ns != u64::MAX {
                finished += 1;
                jct_s += (job.finish_ns - job.submit_ns) as f64 / 1e9;
                queue_s += (job.first_start_ns - job.submit_ns) as f64 / 1e9;
            }
            continue;
        }
        m.replicas += 1;
        if job.finish_ns == u64::MAX {
            m.late += 1;
            continue;
        }
        let start = job.first_start_ns;
        // The checkpoints written on this replica's first servers when it got them.
        let nodes: Vec<u32> = first_seg
            .get(&j)
            .map(|&i| run.segments[i].alloc.iter().map(|a| a.0).collect())
            .unwrap_or_default();
        let mut save_s: f64 = 0.0;
        for &i in stopped_at.get(&start).map_or(&[][..], Vec::as_slice) {
            let s = &run.segments[i];
            if s.alloc.iter().any(|a| nodes.contains(&a.0)) {
                save_s = save_s.max(cost(run.jobs[s.job].gpus).1);
            }
        }
        let wait_s = (start - job.submit_ns) as f64 / 1e9 + save_s;
        m.worst_wait_s = m.worst_wait_s.max(wait_s);
        if wait_s > params.colocation.slo_s || job.preemptions > 0 {
            m.late += 1;
        }
        let behind_ns = (job.finish_ns - job.submit_ns).saturating_sub(job.duration_ns);
        m.unserved_server_h += (behind_ns as f64 / 1e9 + save_s) / 3600.0;
    }
    if finished > 0 {
        m.training_avg_jct_s = jct_s / finished as f64;
        m.training_avg_queue_s = queue_s / finished as f64;
    }
    Some(m)
}
