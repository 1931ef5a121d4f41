//! `aimd-history`: an AIMD window on the *history* hit rate and preemptions — this lab's first
//! approximation of CONCUR, kept as a separately named variant because it teaches why CONCUR's
//! Eq. 1 has a usage condition on its cut and a dead band (docs/MODEL.md, "Agentic lab").
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
//! The cut ignores KV usage, so a cache that is mostly idle but misses (histories evicted during
//! long tool calls) still shrinks the window — the sawtooth that keeps recomputing on the
//! synthetic presets and loses on the Mooncake trace. The window never exceeds the agents not
//! yet finished. The thresholds are ours, not the paper's.

use alloc::format;

use serde::{Deserialize, Serialize};

use super::Signals;
use crate::scenario::check_range;
use crate::scenario::ScenarioError;

/// The `aimd-history` variant's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AimdHistoryParams {
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

impl Default for AimdHistoryParams {
    fn default() -> Self {
        AimdHistoryParams {
            initial_window: 8,
            min_window: 1,
            additive_increase: 1,
            decrease_factor: 0.5,
            usage_threshold: 0.9,
            hit_rate_threshold: 0.5,
        }
    }
}

impl AimdHistoryParams {
    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `agentic.<path>.<field>`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check_range(
            "agentic",
            &format!("{path}.min_window"),
            self.min_window,
            1,
            1_000_000,
        )?;
        check_range(
            "agentic",
            &format!("{path}.initial_window"),
            self.initial_window,
            self.min_window,
            1_000_000,
        )?;
        check_range(
            "agentic",
            &format!("{path}.additive_increase"),
            self.additive_increase,
            1,
            1_000_000,
        )?;
        check_range(
            "agentic",
            &format!("{path}.decrease_factor"),
            self.decrease_factor,
            0.01,
            0.99,
        )?;
        check_range(
            "agentic",
            &format!("{path}.usage_threshold"),
            self.usage_threshold,
            0.01,
            1.0,
        )?;
        check_range(
            "agentic",
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
pub struct AimdHistory {
    params: AimdHistoryParams,
    window: u32,
}

impl AimdHistory {
    /// Starts at the initial window.
    #[must_use]
    pub fn new(params: &AimdHistoryParams) -> AimdHistory {
        AimdHistory {
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
