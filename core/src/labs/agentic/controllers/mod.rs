//! Admission controllers: above the engine, they decide how many agents may be active. An active
//! agent submits its turns; a paused one holds no KV reference and waits. One file per
//! controller; [`ControllerSpec`] lists them and [`Controller`] runs one.

mod concur;
mod static_cap;
mod unbounded;

use alloc::format;
use alloc::string::String;

use serde::{Deserialize, Serialize};

pub use concur::{Concur, ConcurParams};
pub use static_cap::StaticCap;
pub use unbounded::Unbounded;

use crate::scenario::ScenarioError;

/// The runtime signals a controller reads at each control interval: the ones real engines expose
/// (vLLM's `kv_cache_usage_perc`, prefix-cache hits and queries, preemptions).
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
    /// Requests preempted during the interval.
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
    /// CONCUR's AIMD window on cache signals.
    Concur(ConcurParams),
}

impl ControllerSpec {
    /// Stable id used in metric keys: `unbounded`, `cap-8`, `concur`.
    #[must_use]
    pub fn id(&self) -> String {
        match self {
            ControllerSpec::Unbounded => "unbounded".into(),
            ControllerSpec::StaticCap { cap } => format!("cap-{cap}"),
            ControllerSpec::Concur(_) => "concur".into(),
        }
    }

    /// Display label.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            ControllerSpec::Unbounded => "unbounded".into(),
            ControllerSpec::StaticCap { cap } => format!("static cap {cap}"),
            ControllerSpec::Concur(_) => "CONCUR".into(),
        }
    }

    /// Checks the controller's own parameters.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `agentic.<path>.<field>`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            ControllerSpec::Unbounded => Ok(()),
            ControllerSpec::StaticCap { cap } => {
                super::params::check_u32(&format!("{path}.cap"), *cap, 1, 1_000_000)
            }
            ControllerSpec::Concur(p) => p.validate(path),
        }
    }

    /// A fresh controller.
    #[must_use]
    pub fn build(&self) -> Controller {
        match self {
            ControllerSpec::Unbounded => Controller::Unbounded(Unbounded),
            ControllerSpec::StaticCap { cap } => Controller::StaticCap(StaticCap { cap: *cap }),
            ControllerSpec::Concur(p) => Controller::Concur(Concur::new(p)),
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
    /// See [`Concur`].
    Concur(Concur),
}

impl Controller {
    /// Most agents that may be active now (`u32::MAX` = no limit).
    #[must_use]
    pub fn window(&self) -> u32 {
        match self {
            Controller::Unbounded(c) => c.window(),
            Controller::StaticCap(c) => c.window(),
            Controller::Concur(c) => c.window(),
        }
    }

    /// Reads the signals of the interval that just ended and updates the window.
    pub fn on_interval(&mut self, signals: &Signals) {
        match self {
            Controller::Unbounded(_) | Controller::StaticCap(_) => {}
            Controller::Concur(c) => c.on_interval(signals),
        }
    }
}
