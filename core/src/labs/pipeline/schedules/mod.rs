//! Pipeline schedules: each decides, for every device, the order in which it runs its forward
//! and backward ops. Timing is not decided here: the engine runs the orders against the
//! dependencies and the op times. One file per schedule; [`ScheduleKind`] lists them.

mod gpipe;
mod interleaved;
mod one_f_one_b;
mod zb_h1;

use alloc::string::String;
use alloc::vec::Vec;

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

    /// Whether the backward runs as separate B and W ops.
    #[must_use]
    pub fn splits_backward(self) -> bool {
        matches!(self, ScheduleKind::ZbH1)
    }

    /// Model chunks per device under this schedule.
    #[must_use]
    pub fn chunks(self, virtual_stages: u32) -> u32 {
        if self == ScheduleKind::Interleaved {
            virtual_stages
        } else {
            1
        }
    }

    /// Compute ops one iteration runs: forward and backward (plus W when split) of every
    /// micro-batch on every stage and chunk.
    #[must_use]
    pub fn op_count(self, stages: u32, micro_batches: u32, virtual_stages: u32) -> u64 {
        let per_micro_batch = if self.splits_backward() { 3 } else { 2 };
        per_micro_batch
            * u64::from(stages)
            * u64::from(micro_batches)
            * u64::from(self.chunks(virtual_stages))
    }

    /// The op order of every device: `orders[d]` is device d's program.
    #[must_use]
    pub fn device_orders(
        self,
        stages: u32,
        micro_batches: u32,
        virtual_stages: u32,
    ) -> Vec<Vec<Op>> {
        (0..stages)
            .map(|d| match self {
                ScheduleKind::Gpipe => gpipe::order(micro_batches),
                ScheduleKind::OneFOneB => one_f_one_b::order(stages, micro_batches, d),
                ScheduleKind::Interleaved => {
                    interleaved::order(stages, micro_batches, virtual_stages, d)
                }
                ScheduleKind::ZbH1 => zb_h1::order(stages, micro_batches, d),
            })
            .collect()
    }
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
    /// Model chunk on this device, 0-based (always 0 except for interleaved 1F1B).
    pub chunk: u32,
}

impl Op {
    pub(crate) fn f(mb: u32) -> Op {
        Op {
            kind: OpKind::Forward,
            mb,
            chunk: 0,
        }
    }
    pub(crate) fn b(mb: u32) -> Op {
        Op {
            kind: OpKind::Backward,
            mb,
            chunk: 0,
        }
    }
}
