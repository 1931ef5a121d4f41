//! CONCUR's agent-level admission control (Chen et al., "CONCUR: High-Throughput Agentic Batch
//! Inference of LLM via Congestion-Based Concurrency Control", ICML 2026, arXiv:2601.22705,
//! §4.3, Eq. 1): the number of active agents W is steered by two engine signals read at every
//! control interval, the KV-cache usage U (blocks referenced by running requests / all blocks,
//! the "proactive" signal) and the engine's cache hit rate H over the interval (prompt tokens
//! served from the prefix cache / prompt tokens looked up, i.e. hit / (hit + prefilled); the
//! "reactive" signal):
//!
//! - W ← W + α        if U < U_low;
//! - W ← ⌈β · W⌉      if U > U_high and H < H_thresh;
//! - W ← W            otherwise (the dead band between U_low and U_high).
//!
//! Constants of §5.1, the same for every model, workload and engine in the paper: α = 2,
//! β = 0.5, U_low = 0.2, U_high = 0.5, H_thresh = 0.2.
//!
//! What the paper leaves open and this file decides (docs/MODEL.md): the product β·W is
//! rounded up and kept ≥ 1 (a window of 0 would admit nobody and never observe the cache
//! again); W is the number of active agents, so it never exceeds the agents not yet finished;
//! an interval without any prompt lookup has no H and cannot trigger the cut; the initial
//! window and the control interval are fields (defaults: W₀ = α, the interval of the scenario).
//! Agents are paused and resumed only at turn boundaries by the simulator, never mid-generation;
//! a paused agent keeps its state and its KV is not pinned.

use alloc::format;

use serde::{Deserialize, Serialize};

use super::Signals;
use crate::labs::agentic::params::field;
use crate::scenario::check_range;
use crate::scenario::ScenarioError;

/// CONCUR's constants (Eq. 1, §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConcurParams {
    /// W₀: active agents at the start (the paper does not state it; default α).
    pub initial_window: u32,
    /// α: agents added when U < U_low.
    pub additive_increase: u32,
    /// β: factor applied to W when U > U_high and H < H_thresh.
    pub decrease_factor: f64,
    /// U_low: KV usage below which the window grows, fraction.
    pub usage_low: f64,
    /// U_high: KV usage above which a low hit rate cuts the window, fraction.
    pub usage_high: f64,
    /// H_thresh: cache hit rate below which high usage counts as thrashing, fraction.
    pub hit_rate_threshold: f64,
}

impl Default for ConcurParams {
    fn default() -> Self {
        ConcurParams {
            initial_window: 2,
            additive_increase: 2,
            decrease_factor: 0.5,
            usage_low: 0.2,
            usage_high: 0.5,
            hit_rate_threshold: 0.2,
        }
    }
}

impl ConcurParams {
    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `agentic.<path>.<field>`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check_range(
            "agentic",
            &format!("{path}.initial_window"),
            self.initial_window,
            1,
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
            &format!("{path}.usage_low"),
            self.usage_low,
            0.0,
            1.0,
        )?;
        check_range(
            "agentic",
            &format!("{path}.usage_high"),
            self.usage_high,
            0.0,
            1.0,
        )?;
        if self.usage_high < self.usage_low {
            return Err(field(
                &format!("{path}.usage_high"),
                format!(
                    "must be at least usage_low ({}), got {}",
                    self.usage_low, self.usage_high
                ),
            ));
        }
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

/// What Eq. 1 did at one interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// U < U_low: W + α.
    Increase,
    /// U > U_high and H < H_thresh: ⌈β·W⌉.
    Decrease,
    /// Otherwise.
    Hold,
}

/// The controller's state: the window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Concur {
    params: ConcurParams,
    window: u32,
}

impl Concur {
    /// Starts at W₀.
    #[must_use]
    pub fn new(params: &ConcurParams) -> Concur {
        Concur {
            params: *params,
            window: params.initial_window.max(1),
        }
    }

    /// The current window W.
    #[must_use]
    pub fn window(&self) -> u32 {
        self.window
    }

    /// Eq. 1 on one interval's U and H (`None`: no prompt was looked up in the interval).
    #[must_use]
    pub fn decide(&self, usage: f64, hit_rate: Option<f64>) -> Move {
        let p = &self.params;
        if usage < p.usage_low {
            Move::Increase
        } else if usage > p.usage_high && hit_rate.is_some_and(|h| h < p.hit_rate_threshold) {
            Move::Decrease
        } else {
            Move::Hold
        }
    }

    /// One control interval: Eq. 1, then W ≤ the agents not finished (and ≥ 1).
    pub fn on_interval(&mut self, s: &Signals) -> Move {
        let p = &self.params;
        let step = self.decide(s.kv_usage, s.hit_rate());
        self.window = match step {
            Move::Increase => self.window.saturating_add(p.additive_increase),
            Move::Decrease => libm::ceil(f64::from(self.window) * p.decrease_factor) as u32,
            Move::Hold => self.window,
        };
        self.window = self.window.min(s.unfinished_agents).max(1);
        step
    }
}
