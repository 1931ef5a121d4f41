//! A static cap: at most N agents active; the next waiting agent is admitted when an active one
//! finishes its last turn.

/// At most `cap` active agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticCap {
    /// Most active agents.
    pub cap: u32,
}

impl StaticCap {
    /// The cap.
    #[must_use]
    pub fn window(&self) -> u32 {
        self.cap
    }
}
