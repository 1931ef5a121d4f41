//! The overlap lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

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

/// The overlap lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Overlap",
    title: "Hidden communication",
    body: CardBody::Lab {
        problem: "Tensor, sequence and expert parallelism put collectives between the GEMMs of every layer; waiting for each one leaves the GPU idle, and hand-written overlap kernels cover one pattern each.",
        system: "Helix (tile, segmented round-robin reorder, DP bucketing under a memory budget), against serial, eager and AsyncTP-style",
        idea: "Treat overlap as scheduling the compiled graph: split operators into tile streams, interleave the streams so one's communication runs under another's computation, merge tiles back where the simulator says it pays.",
        claim: "Layer-level exposed communication cut by more than 60 % against serial; 4–9 % faster iterations inside a node, 12–30 % across nodes (seed's numbers; ours are on the lab page and in docs/CLAIMS.md).",
    },
};

/// The tours of the overlap lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("overlap-helix")];
