//! The labs. Each lab owns its parameters (part of [`crate::Scenario`]), its policies or passes
//! (one file each) and a `run` that returns a [`crate::Report`].

pub mod agentic;
pub mod bubbles;
pub mod cost;
pub mod fairness;
pub mod migration;
pub mod overlap;
pub mod pipeline;
pub mod resilience;
pub mod tuning;
