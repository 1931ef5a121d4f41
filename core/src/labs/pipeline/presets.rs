//! The pipeline lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

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

/// The pipeline lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Pipeline",
    title: "Pipeline bubbles",
    body: CardBody::Lab {
        problem: "With p pipeline stages, each stage idles while it waits for its neighbours: at the start of an iteration, at the end, and wherever a slow stage or link holds the others up.",
        system: "GPipe · 1F1B · interleaved 1F1B (Megatron-LM) · ZB-H1, ZB-H2, ZB-V (zero bubble) · DualPipe, DualPipeV (DeepSeek-V3)",
        idea: "Reorder each stage's forward and backward passes: 1F1B bounds activation memory, interleaving gives each device v model chunks, zero-bubble splits the backward and moves weight gradients into the gaps, DualPipe feeds micro-batches in from both ends.",
        claim: "Bubble ratio (p−1)/(m+p−1) for GPipe and 1F1B; interleaving divides the bubble time by v; ZB-H1 leaves a third of 1F1B's bubble when F = B = W, ZB-H2 and ZB-V none per device span; DualPipe (PP/2−1)(F&B+B−3W).",
    },
};

/// The tours of the pipeline lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("pipeline-bubbles")];
