//! Preset scenarios: the JSON files in `static/presets/`, shared by the page and the CLI.

use crate::scenario::{Scenario, ScenarioError};

/// A named preset scenario.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// File stem, e.g. `pipeline-gpipe-vs-1f1b`.
    pub id: &'static str,
    /// Lab it belongs to.
    pub lab: &'static str,
    /// Menu title.
    pub title: &'static str,
    /// The scenario JSON as stored in `static/presets/<id>.json`.
    pub json: &'static str,
}

impl Preset {
    /// Parses the preset.
    ///
    /// # Errors
    /// Only if a preset file is broken, which a test forbids.
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        Scenario::from_json(self.json)
    }
}

macro_rules! preset {
    ($id:literal, $lab:literal, $title:literal) => {
        Preset {
            id: $id,
            lab: $lab,
            title: $title,
            json: include_str!(concat!("../../static/presets/", $id, ".json")),
        }
    };
}

/// Every preset, in menu order. A lab's first preset is what its page opens with
/// ([`default_for`]).
pub const PRESETS: &[Preset] = &[
    preset!("pipeline-all", "pipeline", "All four schedules, p=4, m=8"),
    preset!(
        "pipeline-gpipe-vs-1f1b",
        "pipeline",
        "GPipe vs 1F1B, p=4, m=8"
    ),
    preset!(
        "pipeline-interleaved",
        "pipeline",
        "1F1B vs interleaved v=2"
    ),
    preset!("pipeline-zb-h1", "pipeline", "1F1B vs ZB-H1, m=12"),
    preset!(
        "pipeline-zero-bubble",
        "pipeline",
        "ZB-H1, ZB-H2 and ZB-V against 1F1B, m=12"
    ),
    preset!(
        "pipeline-dualpipe",
        "pipeline",
        "DualPipe on 8 devices, 20 micro-batches (its README figure)"
    ),
    preset!(
        "pipeline-dualpipe-v",
        "pipeline",
        "DualPipeV on 4 devices, 10 micro-batches (its README figure)"
    ),
    preset!(
        "pipeline-eight",
        "pipeline",
        "All eight schedules side by side, p=4, m=8"
    ),
    preset!(
        "pipeline-slow-stage",
        "pipeline",
        "A 1.5× slow stage 2 with P2P cost"
    ),
    preset!(
        "cost-allreduce-h100",
        "cost",
        "AllReduce of 64 MiB on 8 H100s in one node (NVLink)"
    ),
    preset!(
        "cost-allreduce-two-nodes",
        "cost",
        "The same AllReduce on 16 H100s across two nodes (InfiniBand)"
    ),
    preset!(
        "fairness-contended-15-tenants",
        "fairness",
        "Contended: 15 tenants, 3,000 Philly-shaped jobs of at most a day, offered 1.2× the capacity of 128 GPUs"
    ),
    preset!(
        "fairness-light-load-15-tenants",
        "fairness",
        "Light load: the same tenants with Philly's arrival rate and 60-day tail, 30 % utilisation, every policy alike"
    ),
    preset!(
        "fairness-chronus-deadlines",
        "fairness",
        "Deadlines: slot admission (after Chronus) vs FIFO, SRTF, Tiresias, largest ρ first; 70 % SLO jobs, the contended trace"
    ),
    preset!(
        "fairness-gavel-heterogeneous",
        "fairness",
        "Heterogeneous GPUs: Gavel's max-min LP in 360 s rounds vs fair share and FIFO on 36 V100, 36 P100 and 36 K80, Gavel's 26 job types"
    ),
    preset!(
        "fairness-lyra-colocation",
        "fairness",
        "Training beside inference: a service's 8 servers loaned to the contended trace's training and reclaimed at its daily peak (after Lyra), vs separate clusters and FIFO"
    ),
    preset!(
        "agentic-qwen3-32b-h100",
        "agentic",
        "Mid-phase thrashing: unbounded vs CONCUR, 128 agents, Qwen3-32B on 2×H100"
    ),
    preset!(
        "agentic-concur-qwen3-32b-tp8-256-agents",
        "agentic",
        "CONCUR's headline (Table 1): 256 agents, Qwen3-32B TP=8 on 8×H100, SGLang; turns fitted to the engine alone's 1,480 s"
    ),
    preset!(
        "agentic-concur-qwen3-32b-tp2-fixed-levels",
        "agentic",
        "CONCUR vs fixed agent levels 30/32/64/128 (Fig. 6): Qwen3-32B TP=2 on 2×H100, SGLang; turns fitted to the engine alone's 2,527 s"
    ),
    preset!(
        "agentic-concur-deepseek-v3-tp16-40-agents",
        "agentic",
        "CONCUR's 1.9× row (Table 1): 40 agents, DeepSeek-V3 TP=16 on 16×H100, SGLang; turns fitted to the engine alone's 3,877 s"
    ),
    preset!(
        "agentic-deepseek-v3-8xh200",
        "agentic",
        "Unbounded vs CONCUR, 128 agents, DeepSeek-V3 on 8×H200"
    ),
    preset!(
        "agentic-cap-sweep-qwen3-32b-h100",
        "agentic",
        "CONCUR vs the best static cap in hindsight, Qwen3-32B on 2×H100"
    ),
    preset!(
        "agentic-clipper-aimd-slo-batching",
        "agentic",
        "Serving under a 30 ms per-token SLO: Clipper's AIMD batch limit vs a fixed batch, 14 requests/s"
    ),
    preset!(
        "overlap-gpt3-curie-tp2-sp4",
        "overlap",
        "Helix vs serial: GPT-3 6.7B layer, TP=2 × SP=4 (Ulysses), NVLink"
    ),
    preset!(
        "overlap-gpt3-curie-inter-node",
        "overlap",
        "The same layer with every group across nodes (InfiniBand)"
    ),
    preset!(
        "overlap-gpt3-curie-whole-step",
        "overlap",
        "Whole training step: GPT-3 6.7B, 32 layers + embedding, head, optimizer, TP=2+SP × CP=2 × DP=2, NVLink"
    ),
    preset!(
        "overlap-gpt3-curie-whole-step-inter-node",
        "overlap",
        "The same whole step with every group across nodes (InfiniBand)"
    ),
    preset!(
        "overlap-gpt3-175b-vs-asynctp",
        "overlap",
        "Helix vs AsyncTP-style: GPT-3 175B layer, TP=8 + SP"
    ),
    preset!(
        "overlap-llama3-70b-vs-asynctp",
        "overlap",
        "Helix vs AsyncTP-style: LLaMA-3 70B layer, TP=8 + SP"
    ),
    preset!(
        "overlap-llama3-8b-long-context",
        "overlap",
        "Long-context prefill, LLaMA-3 8B, 32k tokens: sequence tiling and peak memory"
    ),
    preset!(
        "overlap-llama3-8b-long-context-whole-model",
        "overlap",
        "The whole LLaMA-3 8B's 32k-token prefill (embedding, 32 layers, head): peak activations"
    ),
    preset!(
        "overlap-gpt3-curie-k4-budget",
        "overlap",
        "K=4 tiling, bucketing under a generous 64 GiB budget"
    ),
    preset!(
        "overlap-qwen3-moe-mixed",
        "overlap",
        "Mixed TP+SP+EP on Qwen3-30B-A3B: one dimension hides under another"
    ),
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
    preset!(
        "bubbles-gpt-32gpus-resnet18",
        "bubbles",
        "Hydro's setting: GPT on 32 GPUs, 4 stages (1F1B), ResNet-18 trials, F ≤ 16"
    ),
    preset!(
        "bubbles-gpt-32gpus-small-gpt",
        "bubbles",
        "The same GPT job with small GPT-like trials (more memory per trial)"
    ),
    preset!(
        "bubbles-gpt-32gpus-gpt2-surrogate",
        "bubbles",
        "The same GPT job with μP surrogate trials (GPT-2 small ÷8) timed by the tuning lab's fusion model"
    ),
    preset!(
        "bubbles-zb-h1-resnet18",
        "bubbles",
        "ZB-H1 main job: fewer, shorter bubbles to squeeze"
    ),
    preset!(
        "bubbles-pipemorph-a10",
        "bubbles",
        "PipeMorph's 4-stage GPT on A10 (24 GiB): memory for real logs (`--log`)"
    ),
    preset!(
        "tuning-mutransfer-mlp",
        "tuning",
        "μTransfer: MLP widths 32–256, Adam, SP vs μP; GPT-2 small shrunk ÷8; fusion on H100"
    ),
    preset!(
        "migration-7b-tp2-dp4-one-node",
        "migration",
        "Pause/restore a 7B TP=2 × DP=4 job: reserved pool vs active + low point + dedup"
    ),
    preset!(
        "migration-13b-tp4-two-nodes",
        "migration",
        "Migrate a 13B TP=4 × DP=4 job across nodes vs framework checkpoint + restart"
    ),
    preset!(
        "migration-small-cnn-cpu-bound",
        "migration",
        "A small model whose CPU state dominates: where active-only stops paying"
    ),
    preset!(
        "sharing-fgd-openb-shape",
        "sharing",
        "FGD vs its artifact's baselines: openb's common pod shapes on a tenth of its cluster, cloned to 130 %"
    ),
    preset!(
        "sharing-gandiva-packing-over-time",
        "sharing",
        "Over time: packing raises GPU use but slows pods; Gandiva-style unpacking moves the slowest"
    ),
    preset!(
        "elastic-pollux-vs-baselines",
        "elastic",
        "Pollux against Optimus+Oracle and Tiresias on the artifact's workload-6 (a lighter search: 30 individuals × 20 generations)"
    ),
    preset!(
        "elastic-pollux-artifact-search",
        "elastic",
        "The same with the artifact's search, 100 × 100 (about 30 s natively)"
    ),
];

/// The preset with this id.
#[must_use]
pub fn find(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The preset a lab's page opens with: the lab's first in menu order (`None` for a lab
/// without presets).
#[must_use]
pub fn default_for(lab: &str) -> Option<&'static Preset> {
    for_lab(lab).next()
}

/// The presets of one lab.
pub fn for_lab(lab: &str) -> impl Iterator<Item = &'static Preset> + '_ {
    PRESETS.iter().filter(move |p| p.lab == lab)
}
