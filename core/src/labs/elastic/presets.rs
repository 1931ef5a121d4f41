//! The elastic lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "elastic";

/// The presets of the elastic lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "elastic-pollux-vs-baselines",
        "Pollux against Optimus+Oracle and Tiresias on the artifact's workload-6 (a lighter search: 30 individuals × 20 generations)"
    ),
    preset!(
        "elastic-pollux-artifact-search",
        "The same with the artifact's search, 100 × 100 (about 30 s natively)"
    ),
];
