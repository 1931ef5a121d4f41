//! The bubbles lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

const LAB: &str = "bubbles";

/// The presets of the bubbles lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "bubbles-gpt-32gpus-resnet18",
        "Hydro's setting: GPT on 32 GPUs, 4 stages (1F1B), ResNet-18 trials, F ≤ 16"
    ),
    preset!(
        "bubbles-gpt-32gpus-small-gpt",
        "The same GPT job with small GPT-like trials (more memory per trial)"
    ),
    preset!(
        "bubbles-gpt-32gpus-gpt2-surrogate",
        "The same GPT job with μP surrogate trials (GPT-2 small ÷8) timed by the tuning lab's fusion model"
    ),
    preset!(
        "bubbles-zb-h1-resnet18",
        "ZB-H1 main job: fewer, shorter bubbles to squeeze"
    ),
    preset!(
        "bubbles-pipemorph-a10",
        "PipeMorph's 4-stage GPT on A10 (24 GiB): memory for real logs (`--log`)"
    ),
];

/// The bubbles lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Bubbles",
    title: "Tuning trials in pipeline bubbles",
    body: CardBody::Lab {
        problem: "A pipeline-parallel training job leaves short, repeated windows on every stage where only NCCL runs (SM activity around 2 %) while memory may be free. Colocating other work blindly slows the large job.",
        system: "Hydro's Bubble Squeezer, against the main job alone and blind colocation",
        idea: "Fuse small tuning trials into one bundle, run it only inside safe bubbles that have the memory, and pause it at a hook before each bubble ends, so the main job never waits.",
        claim: "Bubble-period SM activity from ~2 % to ~50 %, a fused bundle at ~15 % of its exclusive throughput, no slowdown against ~12 % for blind colocation, tuning 2.7× faster (seed's numbers; ours are on the lab page and in docs/CLAIMS.md).",
    },
};

/// The tours of the bubbles lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("bubbles-hydro")];
