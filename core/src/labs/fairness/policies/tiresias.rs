//! Tiresias' discretised two-dimensional least-attained-service, 2D-LAS (Gu et al., NSDI'19,
//! §3.1–3.2): a job's attained service is GPUs × executed time; K queues split by thresholds on
//! it; a lower queue always goes first, FIFO (by submission) inside a queue; preemptive. A job
//! is demoted when it crosses a threshold (the simulator wakes up exactly then). Starvation
//! guard (§3.2, PROMOTEKNOB): a waiting job whose wait since it last ran exceeds
//! `promote_knob` × its last run goes back to the highest queue, its attained service counted
//! afresh from there.

use alloc::vec;
use alloc::vec::Vec;

use super::{Emit, KeptOrder, Policy, Preemption};
use crate::labs::fairness::params::TiresiasParams;
use crate::labs::fairness::sim::RoundCtx;

/// Discretised 2D-LAS with a starvation guard.
#[derive(Clone, Debug)]
pub struct Tiresias {
    thresholds_gpu_ns: Vec<u128>,
    promote_knob: f64,
    /// Attained service at the job's last promotion, GPU-ns.
    base: Vec<u128>,
    /// Per queue: its jobs this round (buffers kept across rounds).
    queues: Vec<Vec<usize>>,
    order: KeptOrder,
}

impl Tiresias {
    /// A fresh instance for a trace of `jobs` jobs.
    #[must_use]
    pub fn new(p: &TiresiasParams, jobs: usize) -> Self {
        Tiresias {
            thresholds_gpu_ns: p
                .queue_thresholds_gpu_s
                .iter()
                .map(|s| libm::round(s * 1e9) as u128)
                .collect(),
            promote_knob: p.promote_knob,
            base: vec![0; jobs],
            queues: Vec::new(),
            order: KeptOrder::default(),
        }
    }

    fn attained(&self, ctx: &RoundCtx<'_>, j: usize) -> u128 {
        ctx.jobs[j]
            .attained_gpu_ns(ctx.now_ns)
            .saturating_sub(self.base[j])
    }

    fn queue(&self, ctx: &RoundCtx<'_>, j: usize) -> usize {
        let a = self.attained(ctx, j);
        self.thresholds_gpu_ns
            .iter()
            .take_while(|&&t| a >= t)
            .count()
    }
}

impl Policy for Tiresias {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        // One pass: promote, then file each job in its queue. `ctx.active` ascends by index;
        // when submission times ascend with it (traces are sorted by submission), each queue
        // is already in (submit, index) order and the order is the queues one after another.
        let mut queues = core::mem::take(&mut self.queues);
        queues.resize_with(self.thresholds_gpu_ns.len() + 1, Vec::new);
        queues.iter_mut().for_each(Vec::clear);
        let mut last_submit = 0;
        let mut in_order = true;
        for &j in ctx.active {
            let job = &ctx.jobs[j];
            if self.promote_knob > 0.0 && !job.is_running() && job.executed_ns > 0 {
                let waited = ctx.now_ns - job.last_stop_ns;
                if waited as f64 >= self.promote_knob * job.last_segment_ns as f64 {
                    self.base[j] = job.attained_gpu_ns(ctx.now_ns);
                }
            }
            in_order &= job.submit_ns >= last_submit;
            last_submit = job.submit_ns;
            queues[self.queue(ctx, j)].push(j);
        }
        if in_order {
            'emit: for q in &queues {
                for &j in q {
                    if !emit(j) {
                        break 'emit;
                    }
                }
            }
            self.queues = queues;
            return;
        }
        self.queues = queues;
        let mut order = core::mem::take(&mut self.order);
        order.emit_by_key(
            ctx.active,
            |j| Some((self.queue(ctx, j), ctx.jobs[j].submit_ns)),
            emit,
        );
        self.order = order;
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }

    fn wakeup_after_ns(&self, ctx: &RoundCtx<'_>, j: usize) -> Option<u64> {
        let a = self.attained(ctx, j);
        let next = self.thresholds_gpu_ns.iter().find(|&&t| t > a)?;
        let g = u128::from(ctx.jobs[j].gpus.max(1));
        Some(u64::try_from((next - a).div_ceil(g)).unwrap_or(u64::MAX / 4))
    }
}
