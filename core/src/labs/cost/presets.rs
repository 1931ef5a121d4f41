//! The cost lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "cost";

/// The presets of the cost lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "cost-allreduce-h100",
        "AllReduce of 64 MiB on 8 H100s in one node (NVLink)"
    ),
    preset!(
        "cost-allreduce-two-nodes",
        "The same AllReduce on 16 H100s across two nodes (InfiniBand)"
    ),
];
