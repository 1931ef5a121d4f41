//! The overlap lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "overlap";

/// The presets of the overlap lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "overlap-gpt3-curie-tp2-sp4",
        "Helix vs serial: GPT-3 6.7B layer, TP=2 × SP=4 (Ulysses), NVLink"
    ),
    preset!(
        "overlap-gpt3-curie-inter-node",
        "The same layer with every group across nodes (InfiniBand)"
    ),
    preset!(
        "overlap-gpt3-curie-whole-step",
        "Whole training step: GPT-3 6.7B, 32 layers + embedding, head, optimizer, TP=2+SP × CP=2 × DP=2, NVLink"
    ),
    preset!(
        "overlap-gpt3-curie-whole-step-inter-node",
        "The same whole step with every group across nodes (InfiniBand)"
    ),
    preset!(
        "overlap-gpt3-175b-vs-asynctp",
        "Helix vs AsyncTP-style: GPT-3 175B layer, TP=8 + SP"
    ),
    preset!(
        "overlap-llama3-70b-vs-asynctp",
        "Helix vs AsyncTP-style: LLaMA-3 70B layer, TP=8 + SP"
    ),
    preset!(
        "overlap-llama3-8b-long-context",
        "Long-context prefill, LLaMA-3 8B, 32k tokens: sequence tiling and peak memory"
    ),
    preset!(
        "overlap-llama3-8b-long-context-whole-model",
        "The whole LLaMA-3 8B's 32k-token prefill (embedding, 32 layers, head): peak activations"
    ),
    preset!(
        "overlap-gpt3-curie-k4-budget",
        "K=4 tiling, bucketing under a generous 64 GiB budget"
    ),
    preset!(
        "overlap-qwen3-moe-mixed",
        "Mixed TP+SP+EP on Qwen3-30B-A3B: one dimension hides under another"
    ),
];
