//! The pipeline lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "pipeline";

/// The presets of the pipeline lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!("pipeline-all", "All four schedules, p=4, m=8"),
    preset!(
        "pipeline-gpipe-vs-1f1b",
        "GPipe vs 1F1B, p=4, m=8"
    ),
    preset!(
        "pipeline-interleaved",
        "1F1B vs interleaved v=2"
    ),
    preset!("pipeline-zb-h1", "1F1B vs ZB-H1, m=12"),
    preset!(
        "pipeline-zero-bubble",
        "ZB-H1, ZB-H2 and ZB-V against 1F1B, m=12"
    ),
    preset!(
        "pipeline-dualpipe",
        "DualPipe on 8 devices, 20 micro-batches (its README figure)"
    ),
    preset!(
        "pipeline-dualpipe-v",
        "DualPipeV on 4 devices, 10 micro-batches (its README figure)"
    ),
    preset!(
        "pipeline-eight",
        "All eight schedules side by side, p=4, m=8"
    ),
    preset!(
        "pipeline-slow-stage",
        "A 1.5× slow stage 2 with P2P cost"
    ),
];
