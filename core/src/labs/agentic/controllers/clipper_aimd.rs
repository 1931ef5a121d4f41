//! SLO-aware dynamic batching after Clipper (Crankshaw et al., "Clipper: A Low-Latency Online
//! Prediction Serving System", NSDI'17, §4.3, "Dynamic Batch Size"): the largest batch a model
//! container may run is found online by additive increase, multiplicative decrease. The batch
//! limit grows by a fixed amount while the latency of processing a batch stays within the
//! latency objective; when a batch takes longer than the objective, the limit is cut by a small
//! multiplicative backoff of 10 %.
//!
//! On an LLM engine with continuous batching the batch is the set of running requests and each
//! engine step processes it once, producing one token of every decoding request; a step's
//! duration is therefore the per-token latency every request in the batch sees, and the latency
//! objective is the scenario's TPOT objective (`slo.tpot_ms`). The controller sets the engine's
//! running-request limit (vLLM's `max_num_seqs`, SGLang's `--max-running-requests`) after every
//! step, as Clipper adjusts after every batch. It admits every agent: it bounds the batch, not
//! the agents.
//!
//! What the paper leaves open and this file decides (docs/MODEL.md): the additive amount
//! (default 1 request per step) and the initial limit (default 1); the cut rounds down and keeps
//! the limit ≥ 1; the limit never exceeds the engine's own `max_running_requests`. Requests
//! already running when the limit falls are not preempted: the batch shrinks as they finish.

use alloc::format;

use serde::{Deserialize, Serialize};

use crate::scenario::check_range;
use crate::scenario::ScenarioError;

/// Clipper's AIMD knobs (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClipperAimdParams {
    /// Running-request limit at the start, requests (not stated by the paper; default 1).
    pub initial_batch: u32,
    /// Requests added to the limit after a step within the objective (the paper's "fixed
    /// amount", not stated; default 1).
    pub additive_increase: u32,
    /// Fraction of the limit removed after a step over the objective (the paper's 10 %).
    pub backoff: f64,
}

impl Default for ClipperAimdParams {
    fn default() -> Self {
        ClipperAimdParams {
            initial_batch: 1,
            additive_increase: 1,
            backoff: 0.1,
        }
    }
}

impl ClipperAimdParams {
    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `agentic.<path>.<field>`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check_range(
            "agentic",
            &format!("{path}.initial_batch"),
            self.initial_batch,
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
        check_range("agentic", &format!("{path}.backoff"), self.backoff, 0.001, 0.999)
    }
}

/// Clipper's AIMD on the engine's running-request limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipperAimd {
    params: ClipperAimdParams,
    /// The latency objective of one step (one batch), ns.
    objective_ns: u64,
    /// The engine's own limit, requests.
    engine_limit: u32,
    /// The current limit, requests.
    batch: u32,
}

impl ClipperAimd {
    /// A fresh controller for a step objective of `objective_ns` on an engine that runs at most
    /// `engine_limit` requests; its limit starts at the initial batch, within [1, engine limit].
    #[must_use]
    pub fn new(p: &ClipperAimdParams, objective_ns: u64, engine_limit: u32) -> Self {
        let engine_limit = engine_limit.max(1);
        ClipperAimd {
            params: *p,
            objective_ns,
            engine_limit,
            batch: p.initial_batch.clamp(1, engine_limit),
        }
    }

    /// No agent-level limit.
    #[must_use]
    pub fn window(&self) -> u32 {
        u32::MAX
    }

    /// The running-request limit now.
    #[must_use]
    pub fn batch(&self) -> u32 {
        self.batch
    }

    /// After a step (one batch) of `step_ns`: cut the limit by the backoff when the step took
    /// longer than the objective, else add the fixed amount.
    pub fn on_step(&mut self, step_ns: u64) {
        if step_ns > self.objective_ns {
            let cut = libm::floor(f64::from(self.batch) * (1.0 - self.params.backoff));
            self.batch = (cut as u32).clamp(1, self.engine_limit);
        } else {
            self.batch = self
                .batch
                .saturating_add(self.params.additive_increase)
                .min(self.engine_limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_by_the_fixed_amount_and_cuts_ten_percent_rounding_down() {
        let p = ClipperAimdParams {
            initial_batch: 20,
            additive_increase: 2,
            backoff: 0.1,
        };
        let mut c = ClipperAimd::new(&p, 1_000, 64);
        c.on_step(1_000);
        assert_eq!(c.batch(), 22);
        c.on_step(1_001);
        assert_eq!(c.batch(), 19); // ⌊22 × 0.9⌋ = ⌊19.8⌋
        for _ in 0..100 {
            c.on_step(10);
        }
        assert_eq!(c.batch(), 64, "never above the engine's own limit");
        let mut one = ClipperAimd::new(&ClipperAimdParams::default(), 1_000, 64);
        one.on_step(5_000);
        assert_eq!(one.batch(), 1, "never below one request");
    }
}
