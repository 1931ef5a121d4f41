//! The agents of a batch: each a sequence of turns (a request whose prompt is the agent's history
//! plus new tokens, its output, then a tool call), and the seeded synthetic generator.
//!
//! Randomness: `rand_pcg::Pcg64Mcg` seeded from [`SyntheticSpec::seed`]; transcendental math
//! through `libm`. Per agent, in this order: one uniform draw for its turn count, then per turn
//! two Box–Muller pairs (observation and output tokens: z = √(−2 ln(1 − U₁))·cos(2π U₂)) and one
//! for the tool latency; every log-normal value is median·exp(σ z), clamped to [0, max]; token
//! counts are rounded, and a turn generates at least 1 token.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::params::field;
use crate::scenario::check_range;
use crate::scenario::ScenarioError;
use crate::units::nanos_from_f64;

/// Most agents in one workload.
pub const MAX_AGENTS: u32 = 100_000;
/// Most turns of one agent.
pub const MAX_TURNS: u32 = 1_000;
/// Most agents × turns in one workload.
pub const MAX_TURNS_TOTAL: u64 = 2_000_000;
/// Most tokens of one request (prompt + output).
pub const MAX_REQUEST_TOKENS: u64 = 10_000_000;
/// Longest tool latency, s.
pub const MAX_TOOL_S: f64 = 86_400.0;

/// One turn of an agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Prompt tokens of the request (the history it reuses plus the new tokens).
    pub prompt_tokens: u64,
    /// Leading prompt tokens equal to the agent's previous sequence (previous prompt + output):
    /// the part a prefix cache can serve. 0 for a first turn.
    pub shared_prefix_tokens: u64,
    /// Tokens the request generates.
    pub output_tokens: u64,
    /// Tool call after this turn's output, ns, before the next turn (0 after the last turn).
    pub tool_ns: u64,
}

/// One agent: its arrival and its turns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    /// Arrival of its first request, ns from the workload's start (used with `arrivals: trace`).
    pub arrival_ns: u64,
    /// Turns in order.
    pub turns: Vec<Turn>,
}

impl Agent {
    /// Longest sequence (prompt + output) of any of its requests, tokens: the KV it needs at once.
    #[must_use]
    pub fn max_sequence_tokens(&self) -> u64 {
        self.turns
            .iter()
            .map(|t| t.prompt_tokens + t.output_tokens)
            .max()
            .unwrap_or(0)
    }

    /// Tokens the agent's sequence ends with (first-time KV computations over all its turns):
    /// Σ (prompt − shared prefix + output).
    #[must_use]
    pub fn unique_tokens(&self) -> u64 {
        self.turns
            .iter()
            .map(|t| {
                t.prompt_tokens - t.shared_prefix_tokens.min(t.prompt_tokens) + t.output_tokens
            })
            .sum()
    }
}

/// The agents of one batch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// Where it came from (`synthetic (seed 1)`, a file name).
    pub source: String,
    /// The agents, by id.
    pub agents: Vec<Agent>,
}

impl Workload {
    /// Turns over all agents.
    #[must_use]
    pub fn total_turns(&self) -> u64 {
        self.agents.iter().map(|a| a.turns.len() as u64).sum()
    }
}

/// A log-normal token count or duration: median · exp(σ z), clamped to [0, max].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogNormal {
    /// Median (tokens, or s for latencies).
    pub median: f64,
    /// σ of the underlying normal (0 = always the median).
    pub sigma: f64,
    /// Largest value kept.
    pub max: f64,
}

impl LogNormal {
    fn sample(&self, rng: &mut Pcg64Mcg) -> f64 {
        let z = crate::units::standard_normal(rng);
        (self.median * libm::exp(self.sigma * z)).clamp(0.0, self.max)
    }

    fn validate(&self, path: &str, max: f64) -> Result<(), ScenarioError> {
        check_range(
            "agentic",
            &format!("{path}.max"),
            self.max,
            self.median,
            max,
        )?;
        Ok(())
    }
}

/// The recipe of a synthetic agentic batch (the `agentic.synthetic` part of a scenario).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SyntheticSpec {
    /// Seed of the generator; the same spec always gives the same agents.
    pub seed: u64,
    /// Number of agents.
    pub agents: u32,
    /// Fewest turns of an agent.
    pub min_turns: u32,
    /// Most turns of an agent (turn counts are uniform in [min, max]).
    pub max_turns: u32,
    /// Tokens of an agent's first prompt (system prompt + task).
    pub initial_prompt_tokens: u64,
    /// Tokens each later turn appends to the history (the tool observation).
    pub observation_tokens: LogNormal,
    /// Tokens each turn generates (reasoning + tool call).
    pub output_tokens: LogNormal,
    /// Tool latency after each turn but the last, s.
    pub tool_latency_s: LogNormal,
    /// Mean time between agents' arrivals, s (used with `arrivals: trace`; 0 = all at once).
    pub mean_interarrival_s: f64,
}

impl Default for SyntheticSpec {
    /// A ReAct-style agent: a 2,000-token system prompt and task, 10–30 turns of a few hundred
    /// generated tokens and a tool observation of ~600 tokens, tool calls of ~2 s (the shapes of
    /// CONCUR's Figure 1: inputs grow linearly with the turns). 128 agents, seed 1.
    fn default() -> Self {
        SyntheticSpec {
            seed: 1,
            agents: 128,
            min_turns: 10,
            max_turns: 30,
            initial_prompt_tokens: 2_000,
            observation_tokens: LogNormal {
                median: 600.0,
                sigma: 0.6,
                max: 8_000.0,
            },
            output_tokens: LogNormal {
                median: 250.0,
                sigma: 0.5,
                max: 2_000.0,
            },
            tool_latency_s: LogNormal {
                median: 2.0,
                sigma: 0.8,
                max: 60.0,
            },
            mean_interarrival_s: 0.0,
        }
    }
}

impl SyntheticSpec {
    /// Checks the rules the agentic field table cannot state (bounds set by other fields, an
    /// agent's longest history); [`super::AgenticParams::validate`] checks the ranges first.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path `agentic.synthetic.<field>`.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        check_range(
            "agentic",
            "synthetic.max_turns",
            self.max_turns,
            self.min_turns,
            MAX_TURNS,
        )?;
        if u64::from(self.agents) * u64::from(self.max_turns) > MAX_TURNS_TOTAL {
            return Err(field(
                "synthetic.agents",
                format!(
                    "agents × max_turns must be at most {MAX_TURNS_TOTAL}, got {} × {}",
                    self.agents, self.max_turns
                ),
            ));
        }
        self.observation_tokens
            .validate("synthetic.observation_tokens", 1e6)?;
        self.output_tokens
            .validate("synthetic.output_tokens", 1e6)?;
        self.tool_latency_s
            .validate("synthetic.tool_latency_s", MAX_TOOL_S)?;
        let longest = self.initial_prompt_tokens as f64
            + f64::from(self.max_turns) * (self.observation_tokens.max + self.output_tokens.max);
        if longest > MAX_REQUEST_TOKENS as f64 {
            return Err(field(
                "synthetic.max_turns",
                format!(
                    "an agent's history could reach {longest} tokens; keep initial + max_turns × (observation max + output max) ≤ {MAX_REQUEST_TOKENS}"
                ),
            ));
        }
        Ok(())
    }
}

/// Draws the agents of `spec` (assumed valid).
#[must_use]
pub fn generate(spec: &SyntheticSpec) -> Workload {
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    let mut agents = Vec::with_capacity(spec.agents as usize);
    let mut arrival_s = 0.0_f64;
    for i in 0..spec.agents {
        if i > 0 && spec.mean_interarrival_s > 0.0 {
            let u: f64 = rng.random();
            arrival_s += -spec.mean_interarrival_s * libm::log(1.0 - u);
        }
        let span = spec.max_turns - spec.min_turns + 1;
        let u: f64 = rng.random();
        let turns_n = spec.min_turns + ((u * f64::from(span)) as u32).min(span - 1);
        let mut turns = Vec::with_capacity(turns_n as usize);
        let mut history = 0u64;
        for k in 0..turns_n {
            let obs = libm::round(spec.observation_tokens.sample(&mut rng)) as u64;
            let out = libm::round(spec.output_tokens.sample(&mut rng)) as u64;
            let tool_s = spec.tool_latency_s.sample(&mut rng);
            let (prompt, shared) = if k == 0 {
                (spec.initial_prompt_tokens, 0)
            } else {
                (history + obs, history)
            };
            turns.push(Turn {
                prompt_tokens: prompt,
                shared_prefix_tokens: shared,
                output_tokens: out.max(1),
                tool_ns: if k + 1 == turns_n {
                    0
                } else {
                    nanos_from_f64(tool_s * 1e9).0
                },
            });
            history = prompt + out.max(1);
        }
        agents.push(Agent {
            arrival_ns: nanos_from_f64(arrival_s * 1e9).0,
            turns,
        });
    }
    Workload {
        source: format!("synthetic (seed {})", spec.seed),
        agents,
    }
}
