//! The migration lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "migration";

/// The presets of the migration lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "migration-7b-tp2-dp4-one-node",
        "Pause/restore a 7B TP=2 × DP=4 job: reserved pool vs active + low point + dedup"
    ),
    preset!(
        "migration-13b-tp4-two-nodes",
        "Migrate a 13B TP=4 × DP=4 job across nodes vs framework checkpoint + restart"
    ),
    preset!(
        "migration-small-cnn-cpu-bound",
        "A small model whose CPU state dominates: where active-only stops paying"
    ),
];
