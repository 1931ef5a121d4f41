//! The resilience lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

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

/// The resilience lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Resilience",
    title: "Fail-slow GPUs",
    body: CardBody::Lab {
        problem: "In hybrid-parallel training one slow GPU drags its TP group, its pipeline stage and every data-parallel replica; raw iteration time is a poor alarm because packed sequences of varied length make healthy iterations vary.",
        system: "ResiHP, against a naive z-score and a CUSUM change-point detector, and against doing nothing, dropping replicas and checkpoint-restart",
        idea: "Predict each iteration from the work it actually holds (α·tokens + β·Σ length²), flag only persistent excess, find the slow GPU, then re-plan TP groups, pipeline layers and DP shares together.",
        claim: "About 99.4 % detection accuracy with almost no false alarms; training throughput 1.13–2.22× over the resilient baselines (seed's numbers; ours, smaller, are on the lab page and in docs/CLAIMS.md).",
    },
};

/// The tours of the resilience lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("resilience-resihp")];
