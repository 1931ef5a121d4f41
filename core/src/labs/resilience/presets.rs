//! The resilience lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

/// The presets of the resilience lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "resilience-slow-gpu-2x",
        "resilience",
        "One GPU 2× slow: ResiHP vs Greyhound, Oobleck, ReCycle, restart, 256 H100s"
    ),
    preset!(
        "resilience-slow-gpu-1.5x",
        "resilience",
        "One GPU 1.5× slow: ResiHP vs Greyhound, Oobleck, ReCycle, restart, 256 H100s"
    ),
    preset!(
        "resilience-slow-gpu-4x",
        "resilience",
        "One GPU 4× slow: ResiHP vs Greyhound, Oobleck, ReCycle, restart, 256 H100s"
    ),
    preset!(
        "resilience-slow-node",
        "resilience",
        "A whole node 2× slow, 256 H100s"
    ),
    preset!(
        "resilience-fail-stop",
        "resilience",
        "One GPU dies (fail-stop), 256 H100s"
    ),
    preset!(
        "resilience-combined",
        "resilience",
        "A slow GPU, then a slow node, then a dead GPU, 256 H100s"
    ),
    preset!(
        "resilience-multi-gpu",
        "resilience",
        "Four slow GPUs in different replicas and stages (2×, 3×, 2×, 4×), 256 H100s"
    ),
    preset!(
        "resilience-slow-node-tp4",
        "resilience",
        "A 2× node spanning two TP groups (TP4 × PP8 × DP8), 256 H100s"
    ),
    preset!(
        "resilience-slow-link-nic",
        "resilience",
        "Communication fail-slow: one node's InfiniBand NICs 10× slower (P2P, DP all-reduce)"
    ),
    preset!(
        "resilience-slow-link-nvlink",
        "resilience",
        "Communication fail-slow: one GPU's NVLink 4× slower (its TP group's all-reduces)"
    ),
    preset!(
        "resilience-fail-stop-during-fail-slow",
        "resilience",
        "A 2× node from iteration 200, then a GPU dies at 300"
    ),
    preset!(
        "resilience-intermittent",
        "resilience",
        "Intermittent stragglers: three 3× windows of one GPU and a 3× NIC window"
    ),
    preset!(
        "resilience-no-failure",
        "resilience",
        "No failure, heavy length variation: false alarms of each detector"
    ),
];
