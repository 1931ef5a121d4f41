//! A request-level concurrency cap: every agent is admitted at once, and the engine runs at most
//! `cap` requests at a time (SGLang's `--max-running-requests`, vLLM's `max_num_seqs`); the
//! others wait in the engine's queue. CONCUR's "request-level admission control" baseline (§5.1):
//! it bounds the batch, not the agents whose histories stay alive between turns.

/// Admit everyone; the cap is applied by the engine (see `ControllerSpec::running_limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestCap {
    /// Most running requests.
    pub cap: u32,
}

impl RequestCap {
    /// No agent-level limit.
    #[must_use]
    pub fn window(&self) -> u32 {
        u32::MAX
    }
}
