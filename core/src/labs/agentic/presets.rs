//! The agentic lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

const LAB: &str = "agentic";

/// The presets of the agentic lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "agentic-qwen3-32b-h100",
        "Mid-phase thrashing: unbounded vs CONCUR, 128 agents, Qwen3-32B on 2×H100"
    ),
    preset!(
        "agentic-concur-qwen3-32b-tp8-256-agents",
        "CONCUR's headline (Table 1): 256 agents, Qwen3-32B TP=8 on 8×H100, SGLang; turns fitted to the engine alone's 1,480 s"
    ),
    preset!(
        "agentic-concur-qwen3-32b-tp2-fixed-levels",
        "CONCUR vs fixed agent levels 30/32/64/128 (Fig. 6): Qwen3-32B TP=2 on 2×H100, SGLang; turns fitted to the engine alone's 2,527 s"
    ),
    preset!(
        "agentic-concur-deepseek-v3-tp16-40-agents",
        "CONCUR's 1.9× row (Table 1): 40 agents, DeepSeek-V3 TP=16 on 16×H100, SGLang; turns fitted to the engine alone's 3,877 s"
    ),
    preset!(
        "agentic-deepseek-v3-8xh200",
        "Unbounded vs CONCUR, 128 agents, DeepSeek-V3 on 8×H200"
    ),
    preset!(
        "agentic-cap-sweep-qwen3-32b-h100",
        "CONCUR vs the best static cap in hindsight, Qwen3-32B on 2×H100"
    ),
    preset!(
        "agentic-clipper-aimd-slo-batching",
        "Serving under a 30 ms per-token SLO: Clipper's AIMD batch limit vs a fixed batch, 14 requests/s"
    ),
];
