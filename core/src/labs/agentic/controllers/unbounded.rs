//! Unbounded admission: every agent is active from its arrival (the usual batch submission; the
//! engine alone manages the KV cache).

/// Admit everyone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unbounded;

impl Unbounded {
    /// No limit.
    #[must_use]
    pub fn window(&self) -> u32 {
        u32::MAX
    }
}
