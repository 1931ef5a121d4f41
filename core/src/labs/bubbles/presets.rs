//! The bubbles lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

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
