//! The agentic lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

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

/// The agentic lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Agents",
    title: "KV-cache thrashing of agents",
    body: CardBody::Lab {
        problem: "Tool-calling agents keep long histories in the KV cache. Admitted all at once, they congest it mid-batch: the engine evicts histories that live agents need again, recomputes them, and throughput collapses before memory is formally full.",
        system: "CONCUR, against unbounded admission and static caps",
        idea: "Control how many agents are active above the engine: grow the window additively while the cache is healthy, halve it when the hit rate on histories falls or requests are preempted.",
        claim: "CONCUR's throughput up to 4.09× unbounded admission on Qwen3-32B and 1.9× on DeepSeek-V3 (seed's numbers; ours, smaller, are on the lab page and in docs/CLAIMS.md).",
    },
};

/// The tours of the agentic lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("agentic-concur")];
