//! CONCUR's agent-level admission control (Chen et al., "CONCUR: High-Throughput Agentic Batch
//! Inference of LLM via Congestion-Based Concurrency Control", ICML 2026, arXiv:2601.22705): an
//! active-agent window adjusted by AIMD from the engine's cache signals, like TCP's congestion
//! window.
//!
//! At the end of each control interval:
//! - **congested** if the history hit rate over the interval (tokens served from the prefix
//!   cache / reusable history tokens of the requests scheduled; a first turn has none) is below
//!   `hit_rate_threshold`, or any request was preempted: window ← max(`min_window`,
//!   ⌊window · `decrease_factor`⌋);
//! - else, **room to grow** if KV usage < `usage_threshold` and the window is in use (active
//!   agents ≥ window, or agents still waiting): window ← window + `additive_increase`;
//! - else the window holds.
//!
//! The history hit rate rather than the engine-wide hits / queries: a first turn has nothing to
//! reuse, so admitting new agents would read as thrashing. A layer that builds the prompts knows
//! the reusable part, and OpenAI-compatible servers (vLLM included) return each request's
//! `cached_tokens`, so the signal is available on a real engine.
//!
//! The window never exceeds the agents not yet finished. The rule and its thresholds are ours
//! (the paper's exact constants are not reproduced); the defaults are chosen once, a priori, and
//! not tuned to the claims (docs/MODEL.md).

use alloc::format;

use serde::{Deserialize, Serialize};

use super::Signals;
use crate::labs::agentic::params::{check_f64, check_u32};
use crate::scenario::ScenarioError;

/// CONCUR's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConcurParams {
    /// Window at the start, agents.
    pub initial_window: u32,
    /// Smallest window, agents.
    pub min_window: u32,
    /// Agents added per healthy interval.
    pub additive_increase: u32,
    /// Factor applied to the window on congestion (TCP: 0.5).
    pub decrease_factor: f64,
    /// KV usage below which the cache has room, fraction.
    pub usage_threshold: f64,
    /// Prefix hit rate below which the cache is thrashing, fraction.
    pub hit_rate_threshold: f64,
}

impl Default for ConcurParams {
    fn default() -> Self {
        ConcurParams {
            initial_window: 8,
            min_window: 1,
            additive_increase: 1,
            decrease_factor: 0.5,
            usage_threshold: 0.9,
            hit_rate_threshold: 0.5,
        }
    }
}

impl ConcurParams {
    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `agentic.<path>.<field>`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check_u32(&format!("{path}.min_window"), self.min_window, 1, 1_000_000)?;
        check_u32(
            &format!("{path}.initial_window"),
            self.initial_window,
            self.min_window,
            1_000_000,
        )?;
        check_u32(
            &format!("{path}.additive_increase"),
            self.additive_increase,
            1,
            1_000_000,
        )?;
        check_f64(
            &format!("{path}.decrease_factor"),
            self.decrease_factor,
            0.01,
            0.99,
        )?;
        check_f64(
            &format!("{path}.usage_threshold"),
            self.usage_threshold,
            0.01,
            1.0,
        )?;
        check_f64(
            &format!("{path}.hit_rate_threshold"),
            self.hit_rate_threshold,
            0.0,
            1.0,
        )?;
        Ok(())
    }
}

/// The AIMD state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Concur {
    params: ConcurParams,
    window: u32,
}

impl Concur {
    /// Starts at the initial window.
    #[must_use]
    pub fn new(params: &ConcurParams) -> Concur {
        Concur {
            params: *params,
            window: params.initial_window.max(params.min_window),
        }
    }

    /// The current window.
    #[must_use]
    pub fn window(&self) -> u32 {
        self.window
    }

    /// One AIMD update.
    pub fn on_interval(&mut self, s: &Signals) {
        let p = &self.params;
        let thrashing = s
            .history_hit_rate()
            .is_some_and(|h| h < p.hit_rate_threshold);
        if thrashing || s.preemptions > 0 {
            let w = libm::floor(f64::from(self.window) * p.decrease_factor) as u32;
            self.window = w.max(p.min_window);
        } else if s.kv_usage < p.usage_threshold
            && (s.active_agents >= self.window || s.unfinished_agents > s.active_agents)
        {
            self.window = self.window.saturating_add(p.additive_increase);
        }
        self.window = self
            .window
            .min(s.unfinished_agents.max(p.min_window))
            .max(p.min_window);
    }
}
