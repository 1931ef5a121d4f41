//! The resilience lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "resilience";

/// The presets of the resilience lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "resilience-slow-gpu-2x",
        "One GPU 2× slow: ResiHP vs Greyhound, Oobleck, ReCycle, restart, 256 H100s"
    ),
    preset!(
        "resilience-slow-gpu-1.5x",
        "One GPU 1.5× slow: ResiHP vs Greyhound, Oobleck, ReCycle, restart, 256 H100s"
    ),
    preset!(
        "resilience-slow-gpu-4x",
        "One GPU 4× slow: ResiHP vs Greyhound, Oobleck, ReCycle, restart, 256 H100s"
    ),
    preset!(
        "resilience-slow-node",
        "A whole node 2× slow, 256 H100s"
    ),
    preset!(
        "resilience-fail-stop",
        "One GPU dies (fail-stop), 256 H100s"
    ),
    preset!(
        "resilience-combined",
        "A slow GPU, then a slow node, then a dead GPU, 256 H100s"
    ),
    preset!(
        "resilience-multi-gpu",
        "Four slow GPUs in different replicas and stages (2×, 3×, 2×, 4×), 256 H100s"
    ),
    preset!(
        "resilience-slow-node-tp4",
        "A 2× node spanning two TP groups (TP4 × PP8 × DP8), 256 H100s"
    ),
    preset!(
        "resilience-slow-link-nic",
        "Communication fail-slow: one node's InfiniBand NICs 10× slower (P2P, DP all-reduce)"
    ),
    preset!(
        "resilience-slow-link-nvlink",
        "Communication fail-slow: one GPU's NVLink 4× slower (its TP group's all-reduces)"
    ),
    preset!(
        "resilience-fail-stop-during-fail-slow",
        "A 2× node from iteration 200, then a GPU dies at 300"
    ),
    preset!(
        "resilience-intermittent",
        "Intermittent stragglers: three 3× windows of one GPU and a 3× NIC window"
    ),
    preset!(
        "resilience-no-failure",
        "No failure, heavy length variation: false alarms of each detector"
    ),
];
