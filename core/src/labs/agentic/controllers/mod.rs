//! Admission controllers: above the engine, they decide how many agents may be active. An active
//! agent submits its turns; a paused one holds no KV reference and waits. One file per
//! controller; [`ControllerSpec`] lists them and [`Controller`] runs one.
//!
//! The baselines are CONCUR's (§5.1): the engine alone (`unbounded`), the engine with a
//! request-level concurrency cap (`req-cap-N`, SGLang's `--max-running-requests`), and fixed
//! agent-concurrency levels (`cap-N`, §5.3). Beside them, for serving under a latency SLO, the
//! survey's SLO-aware batching family: Clipper's AIMD on the batch size (`clipper-aimd`).

mod aimd_history;
mod clipper_aimd;
mod concur;
mod request_cap;
mod static_cap;
mod unbounded;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

pub use aimd_history::{AimdHistory, AimdHistoryParams};
pub use clipper_aimd::{ClipperAimd, ClipperAimdParams};
pub use concur::{Concur, ConcurParams, Move};
pub use request_cap::RequestCap;
pub use static_cap::StaticCap;
pub use unbounded::Unbounded;

use crate::scenario::{check_range, ScenarioError};

/// The runtime signals a controller reads at each control interval: the ones real engines expose
/// (KV usage — vLLM's `kv_cache_usage_perc`, SGLang's token usage —, prefix-cache hits and
/// queries, preemptions or retractions).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Signals {
    /// Referenced KV blocks / all blocks, now.
    pub kv_usage: f64,
    /// Prompt tokens looked up in the prefix cache during the interval.
    pub prefix_query_tokens: u64,
    /// Of those, tokens found cached.
    pub prefix_hit_tokens: u64,
    /// Reusable history tokens of the requests scheduled during the interval (what the layer
    /// that builds each prompt knows it could reuse).
    pub history_query_tokens: u64,
    /// Of those, tokens the engine served from its cache (each response's `cached_tokens`).
    pub history_hit_tokens: u64,
    /// Requests preempted (vLLM) or retracted (SGLang) during the interval.
    pub preemptions: u64,
    /// Agents active now.
    pub active_agents: u32,
    /// Agents not finished (active or waiting for admission).
    pub unfinished_agents: u32,
}

impl Signals {
    /// Engine-wide prefix hit rate, hits / queries over the interval; `None` without queries.
    #[must_use]
    pub fn hit_rate(&self) -> Option<f64> {
        ratio(self.prefix_hit_tokens, self.prefix_query_tokens)
    }

    /// History hit rate: cached / reusable history tokens over the interval; `None` when no
    /// scheduled request had history to reuse.
    #[must_use]
    pub fn history_hit_rate(&self) -> Option<f64> {
        ratio(self.history_hit_tokens, self.history_query_tokens)
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    if b == 0 {
        None
    } else {
        Some(a as f64 / b as f64)
    }
}

/// A controller as the scenario names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", deny_unknown_fields)]
pub enum ControllerSpec {
    /// Admit every agent at once (the usual batch submission).
    Unbounded,
    /// At most `cap` agents active.
    StaticCap {
        /// Most active agents.
        cap: u32,
    },
    /// Every agent admitted; the engine runs at most `cap` requests at once.
    RequestCap {
        /// Most running requests in the engine.
        cap: u32,
    },
    /// CONCUR's Eq. 1 on KV usage and cache hit rate.
    Concur(ConcurParams),
    /// This lab's earlier AIMD on the history hit rate and preemptions (a named variant).
    AimdHistory(AimdHistoryParams),
    /// Clipper's AIMD on the engine's batch (running-request) limit against the TPOT objective.
    ClipperAimd(ClipperAimdParams),
}

impl ControllerSpec {
    /// Stable id used in metric keys and on the command line: `unbounded`, `cap-8`,
    /// `req-cap-64`, `concur`, `aimd-history`, `clipper-aimd`.
    #[must_use]
    pub fn id(&self) -> String {
        match self {
            ControllerSpec::Unbounded => "unbounded".into(),
            ControllerSpec::StaticCap { cap } => format!("cap-{cap}"),
            ControllerSpec::RequestCap { cap } => format!("req-cap-{cap}"),
            ControllerSpec::Concur(_) => "concur".into(),
            ControllerSpec::AimdHistory(_) => "aimd-history".into(),
            ControllerSpec::ClipperAimd(_) => "clipper-aimd".into(),
        }
    }

    /// Display label.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            ControllerSpec::Unbounded => "unbounded".into(),
            ControllerSpec::StaticCap { cap } => format!("static cap {cap}"),
            ControllerSpec::RequestCap { cap } => format!("request cap {cap}"),
            ControllerSpec::Concur(_) => "CONCUR".into(),
            ControllerSpec::AimdHistory(_) => "AIMD on history hits".into(),
            ControllerSpec::ClipperAimd(_) => "Clipper AIMD batching".into(),
        }
    }

    /// Most requests the engine may run under this fixed controller (`engine_limit` otherwise;
    /// a batch controller sets its own limit, [`Controller::running_limit`]).
    #[must_use]
    pub fn running_limit(&self, engine_limit: u32) -> u32 {
        match self {
            ControllerSpec::RequestCap { cap } => (*cap).min(engine_limit),
            _ => engine_limit,
        }
    }

    /// Parses a comma-separated list of ids (`unbounded, cap-16, req-cap-64, concur,
    /// aimd-history, clipper-aimd`); `concur`, `aimd-history` and `clipper-aimd` take their
    /// knobs from the first controller of that kind in `template`, or the defaults. Repeats
    /// are kept once.
    ///
    /// # Errors
    /// A message naming the unknown id.
    pub fn parse_list(
        text: &str,
        template: &[ControllerSpec],
    ) -> Result<Vec<ControllerSpec>, String> {
        let concur = template
            .iter()
            .find(|c| matches!(c, ControllerSpec::Concur(_)))
            .cloned()
            .unwrap_or(ControllerSpec::Concur(ConcurParams::default()));
        let aimd = template
            .iter()
            .find(|c| matches!(c, ControllerSpec::AimdHistory(_)))
            .cloned()
            .unwrap_or(ControllerSpec::AimdHistory(AimdHistoryParams::default()));
        let clipper = template
            .iter()
            .find(|c| matches!(c, ControllerSpec::ClipperAimd(_)))
            .cloned()
            .unwrap_or(ControllerSpec::ClipperAimd(ClipperAimdParams::default()));
        let cap = |prefix: &str, id: &str| -> Option<u32> {
            id.strip_prefix(prefix)?
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
        };
        let mut out: Vec<ControllerSpec> = Vec::new();
        for id in text.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let c = match id {
                "unbounded" => ControllerSpec::Unbounded,
                "concur" => concur.clone(),
                "aimd-history" => aimd.clone(),
                "clipper-aimd" => clipper.clone(),
                _ => {
                    if let Some(n) = cap("req-cap-", id) {
                        ControllerSpec::RequestCap { cap: n }
                    } else if let Some(n) = cap("cap-", id) {
                        ControllerSpec::StaticCap { cap: n }
                    } else {
                        return Err(format!(
                            "unknown controller `{id}`; expected unbounded, concur, aimd-history, clipper-aimd, cap-N (N agents) or req-cap-N (N requests), N ≥ 1"
                        ));
                    }
                }
            };
            if !out.contains(&c) {
                out.push(c);
            }
        }
        if out.is_empty() {
            return Err("name at least one controller".into());
        }
        Ok(out)
    }

    /// Checks the controller's own parameters.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `agentic.<path>.<field>`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            ControllerSpec::Unbounded => Ok(()),
            ControllerSpec::StaticCap { cap } | ControllerSpec::RequestCap { cap } => {
                check_range("agentic", &format!("{path}.cap"), *cap, 1, 1_000_000)
            }
            ControllerSpec::Concur(p) => p.validate(path),
            ControllerSpec::AimdHistory(p) => p.validate(path),
            ControllerSpec::ClipperAimd(p) => p.validate(path),
        }
    }

    /// A fresh controller on an engine that runs at most `engine_limit` requests, with a
    /// latency objective of `step_objective_ns` per engine step (the TPOT objective).
    #[must_use]
    pub fn build(&self, step_objective_ns: u64, engine_limit: u32) -> Controller {
        match self {
            ControllerSpec::Unbounded => Controller::Unbounded(Unbounded),
            ControllerSpec::StaticCap { cap } => Controller::StaticCap(StaticCap { cap: *cap }),
            ControllerSpec::RequestCap { cap } => Controller::RequestCap(RequestCap { cap: *cap }),
            ControllerSpec::Concur(p) => Controller::Concur(Concur::new(p)),
            ControllerSpec::AimdHistory(p) => Controller::AimdHistory(AimdHistory::new(p)),
            ControllerSpec::ClipperAimd(p) => {
                Controller::ClipperAimd(ClipperAimd::new(p, step_objective_ns, engine_limit))
            }
        }
    }
}

/// A running controller.
#[derive(Clone, Debug, PartialEq)]
pub enum Controller {
    /// See [`Unbounded`].
    Unbounded(Unbounded),
    /// See [`StaticCap`].
    StaticCap(StaticCap),
    /// See [`RequestCap`].
    RequestCap(RequestCap),
    /// See [`Concur`].
    Concur(Concur),
    /// See [`AimdHistory`].
    AimdHistory(AimdHistory),
    /// See [`ClipperAimd`].
    ClipperAimd(ClipperAimd),
}

impl Controller {
    /// Most agents that may be active now (`u32::MAX` = no limit).
    #[must_use]
    pub fn window(&self) -> u32 {
        match self {
            Controller::Unbounded(c) => c.window(),
            Controller::StaticCap(c) => c.window(),
            Controller::RequestCap(c) => c.window(),
            Controller::Concur(c) => c.window(),
            Controller::AimdHistory(c) => c.window(),
            Controller::ClipperAimd(c) => c.window(),
        }
    }

    /// Reads the signals of the interval that just ended and updates the window.
    pub fn on_interval(&mut self, signals: &Signals) {
        match self {
            Controller::Unbounded(_)
            | Controller::StaticCap(_)
            | Controller::RequestCap(_)
            | Controller::ClipperAimd(_) => {}
            Controller::Concur(c) => {
                c.on_interval(signals);
            }
            Controller::AimdHistory(c) => c.on_interval(signals),
        }
    }

    /// After an engine step of `step_ns`: a controller of the batch (Clipper's) updates its
    /// limit; the others act only at control intervals.
    pub fn on_step(&mut self, step_ns: u64) {
        if let Controller::ClipperAimd(c) = self {
            c.on_step(step_ns);
        }
    }

    /// The engine's running-request limit this controller sets now, if it sets one.
    #[must_use]
    pub fn running_limit(&self) -> Option<u32> {
        match self {
            Controller::ClipperAimd(c) => Some(c.batch()),
            _ => None,
        }
    }
}
