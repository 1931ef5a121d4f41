//! The sharing lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "sharing";

/// The presets of the sharing lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "sharing-fgd-openb-shape",
        "FGD vs its artifact's baselines: openb's common pod shapes on a tenth of its cluster, cloned to 130 %"
    ),
    preset!(
        "sharing-gandiva-packing-over-time",
        "Over time: packing raises GPU use but slows pods; Gandiva-style unpacking moves the slowest"
    ),
];
