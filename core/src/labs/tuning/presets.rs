//! The tuning lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "tuning";

/// The presets of the tuning lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "tuning-mutransfer-mlp",
        "μTransfer: MLP widths 32–256, Adam, SP vs μP; GPT-2 small shrunk ÷8; fusion on H100"
    ),
];
