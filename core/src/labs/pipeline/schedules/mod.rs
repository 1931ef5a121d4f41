//! Pipeline schedules: each decides, for every device, the order in which it runs its forward
//! and backward ops. Timing is not decided here: the engine runs the orders against the
//! dependencies and the op times. One file per schedule; [`ScheduleKind`] lists them.

mod dualpipe;
mod gpipe;
mod interleaved;
mod one_f_one_b;
mod zb_h1;
mod zb_h2;
mod zb_v;

use alloc::string::String;
use alloc::vec::Vec;

use super::params::PipelineParams;
use crate::scenario::ScenarioError;

crate::kinds! {
    /// The schedules the lab knows.
    pub enum ScheduleKind as "schedule" {
        /// GPipe (Huang et al., NeurIPS 2019): all forwards, then all backwards.
        Gpipe = "gpipe", "GPipe";
        /// 1F1B / PipeDream-flush (Narayanan et al., SC 2021): warm up, then alternate one forward
        /// and one backward, so at most p − i micro-batches are in flight on stage i.
        OneFOneB = "1f1b", "1F1B";
        /// Interleaved 1F1B (Megatron-LM, Narayanan et al., SC 2021): each device holds v model
        /// chunks; the bubble shrinks by v at the cost of v× more P2P.
        Interleaved = "interleaved", "Interleaved 1F1B";
        /// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024): the backward is split
        /// into input-gradient B and weight-gradient W; W passes are deferred into the bubbles.
        ZbH1 = "zb-h1", "ZB-H1";
        /// ZB-H2 (Qi et al., ICLR 2024, §2.2): 2p − 1 warm-up forwards on stage 0, then B, W, F
        /// in turn with W passes deferred to the tail; no bubble over each device's span when
        /// t_F = t_B = t_W, at up to 2p − 1 micro-batches of activations.
        ZbH2 = "zb-h2", "ZB-H2";
        /// ZB-V (Qi et al., arXiv 2401.10241 §6; sail-sg `zbv.py`): two half-size chunks per device
        /// in a V (stage d and 2p − 1 − d), ops placed by the source's greedy planner within
        /// 1F1B's activation memory.
        ZbV = "zb-v", "ZB-V";
        /// DualPipe (DeepSeek-V3 report §3.2.1; deepseek-ai/DualPipe `dualpipe.py`): half of the
        /// micro-batches enter at stage 0, half at stage p − 1, every device holds its stage for
        /// both directions (2× parameters); forward and backward of opposite directions run as
        /// overlapped pairs.
        DualPipe = "dualpipe", "DualPipe";
        /// DualPipeV (deepseek-ai/DualPipe `dualpipev.py`, Sea AI Lab's "cut-in-half"): DualPipe
        /// folded onto p devices as a V of 2p half-size stages, every micro-batch entering at
        /// device 0.
        DualPipeV = "dualpipe-v", "DualPipeV";
    }
}

impl ScheduleKind {
    /// Display name with the chunk count where it matters ("Interleaved 1F1B (v=2)").
    #[must_use]
    pub fn label_with(self, virtual_stages: u32) -> String {
        match self {
            ScheduleKind::Interleaved => alloc::format!("{} (v={virtual_stages})", self.label()),
            _ => self.label().into(),
        }
    }

    /// Whether the backward may run as separate B and W ops.
    #[must_use]
    pub fn splits_backward(self) -> bool {
        !matches!(
            self,
            ScheduleKind::Gpipe | ScheduleKind::OneFOneB | ScheduleKind::Interleaved
        )
    }

    /// Model chunks per device under this schedule.
    #[must_use]
    pub fn chunks(self, virtual_stages: u32) -> u32 {
        match self {
            ScheduleKind::Interleaved => virtual_stages,
            ScheduleKind::ZbV | ScheduleKind::DualPipe | ScheduleKind::DualPipeV => 2,
            _ => 1,
        }
    }

    /// Share of a device's layers (and so of its op times and activations) one chunk holds:
    /// 1/v for interleaved, ½ for the V shapes; DualPipe's two chunks are whole stages, one per
    /// direction (the 2× parameters).
    #[must_use]
    pub fn chunk_share(self, virtual_stages: u32) -> f64 {
        match self {
            ScheduleKind::DualPipe => 1.0,
            _ => 1.0 / f64::from(self.chunks(virtual_stages)),
        }
    }

    /// Copies of a device's share of the parameters each device holds: 2 for DualPipe (its
    /// stage for each direction), else 1.
    #[must_use]
    pub fn parameter_copies(self) -> u32 {
        if self == ScheduleKind::DualPipe {
            2
        } else {
            1
        }
    }

    /// Stages one micro-batch crosses: p·v for interleaved, 2p for the V shapes, else p.
    #[must_use]
    pub fn path_len(self, stages: u32, virtual_stages: u32) -> u32 {
        match self {
            ScheduleKind::DualPipe => stages,
            _ => stages * self.chunks(virtual_stages),
        }
    }

    /// The stage of micro-batch `op.mb`'s path that `op` on `device` computes.
    #[must_use]
    pub fn path_stage(self, stages: u32, device: u32, op: &Op) -> u32 {
        match (self, op.chunk) {
            (ScheduleKind::ZbV | ScheduleKind::DualPipeV, 1) => 2 * stages - 1 - device,
            (ScheduleKind::DualPipe, 1) => stages - 1 - device,
            (_, chunk) => chunk * stages + device,
        }
    }

    /// The device that computes stage `stage` of micro-batch `mb`'s path (of `micro_batches`).
    #[must_use]
    pub fn device_at(self, stages: u32, micro_batches: u32, mb: u32, stage: u32) -> u32 {
        match self {
            ScheduleKind::ZbV | ScheduleKind::DualPipeV if stage >= stages => {
                2 * stages - 1 - stage
            }
            ScheduleKind::DualPipe if mb >= micro_batches / 2 => stages - 1 - stage,
            _ => stage % stages,
        }
    }

    /// Compute ops one iteration runs at most: forward and backward (plus W when split) of every
    /// micro-batch on every stage of its path.
    #[must_use]
    pub fn op_count(self, stages: u32, micro_batches: u32, virtual_stages: u32) -> u64 {
        let per_micro_batch = if self.splits_backward() { 3 } else { 2 };
        per_micro_batch
            * u64::from(self.path_len(stages, virtual_stages))
            * u64::from(micro_batches)
    }

    /// The op order of every device: `orders[d]` is device d's program.
    ///
    /// # Errors
    /// [`ScenarioError::Run`] if ZB-V's planner cannot place the ops (it stops where the source's
    /// planner asserts).
    pub fn device_orders(self, params: &PipelineParams) -> Result<Vec<Vec<Op>>, ScenarioError> {
        let (p, m, v) = (params.stages, params.micro_batches, params.virtual_stages);
        Ok(match self {
            ScheduleKind::Gpipe => (0..p).map(|_| gpipe::order(m)).collect(),
            ScheduleKind::OneFOneB => one_f_one_b_orders(p, m),
            ScheduleKind::Interleaved => (0..p).map(|d| interleaved::order(p, m, v, d)).collect(),
            ScheduleKind::ZbH1 => (0..p).map(|d| zb_h1::order(p, m, d)).collect(),
            ScheduleKind::ZbH2 => (0..p).map(|d| zb_h2::order(p, m, d)).collect(),
            ScheduleKind::ZbV => zb_v::orders(params)?,
            ScheduleKind::DualPipe => (0..p).map(|d| dualpipe::dualpipe(p, m, d)).collect(),
            ScheduleKind::DualPipeV => (0..p).map(|d| dualpipe::dualpipe_v(p, m, d)).collect(),
        })
    }
}

/// 1F1B's order for every device of `stages` (also the resilience lab's replicas and the
/// PipeMorph logs' reference).
#[must_use]
pub fn one_f_one_b_orders(stages: u32, micro_batches: u32) -> Vec<Vec<Op>> {
    (0..stages)
        .map(|d| one_f_one_b::order(stages, micro_batches, d))
        .collect()
}

/// What an op computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    /// Forward pass.
    Forward,
    /// Whole backward (B and W together), for schedules that do not split it.
    Backward,
    /// Input-gradient backward (B).
    BackwardInput,
    /// Weight-gradient backward (W).
    BackwardWeight,
}

impl OpKind {
    /// Short letter for spans and legends.
    #[must_use]
    pub fn letter(self) -> &'static str {
        match self {
            OpKind::Forward => "F",
            OpKind::Backward | OpKind::BackwardInput => "B",
            OpKind::BackwardWeight => "W",
        }
    }
}

/// One op in a device's program: `kind` of micro-batch `mb` on the device's model chunk `chunk`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Op {
    /// What it computes.
    pub kind: OpKind,
    /// Micro-batch index, 0-based.
    pub mb: u32,
    /// Model chunk on this device, 0-based (0 except for the schedules with several chunks).
    pub chunk: u32,
    /// Starts only once the next op of the device's program has its inputs too: the forward
    /// of DualPipe's overlapped forward-backward pair, which receives both inputs before
    /// computing either (`dualpipe.py` `_forward_backward_chunk`).
    pub joint: bool,
}

impl Op {
    /// `kind` of micro-batch `mb` on chunk `chunk`.
    #[must_use]
    pub fn new(kind: OpKind, mb: u32, chunk: u32) -> Op {
        Op {
            kind,
            mb,
            chunk,
            joint: false,
        }
    }
    pub(crate) fn f(mb: u32) -> Op {
        Op::new(OpKind::Forward, mb, 0)
    }
    pub(crate) fn b(mb: u32) -> Op {
        Op::new(OpKind::Backward, mb, 0)
    }
}
