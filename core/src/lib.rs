//! # bubblelab-core
//!
//! The algorithms and simulators of bubblelab, a laboratory for the scheduling problems of GPU
//! clusters. Every lab follows one path:
//!
//! ```text
//! Scenario --validate--> run(&Scenario) --> Report --> page / CLI / Chrome trace
//! ```
//!
//! The crate is `#![no_std]` + `alloc`: it has no I/O, no clock and no threads, so the same code
//! gives byte-identical Reports natively and in WebAssembly. Simulated time is integer
//! nanoseconds ([`units::Nanos`]); randomness, where a lab needs it, comes from a seeded portable
//! generator carried in the Scenario.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod cost;
pub mod engine;
pub mod graph;
pub mod hw;
pub mod kineto;
pub mod labs;
pub mod presets;
pub mod report;
pub mod scenario;
pub mod share;
pub mod trace;
pub mod units;

pub use report::Report;
pub use scenario::{Scenario, ScenarioError};

/// Runs a validated scenario and returns its Report.
///
/// This is the one entry point that the page, the CLI and the tests share.
///
/// # Errors
/// Returns a [`ScenarioError`] when the scenario fails validation or a lab cannot complete
/// (for example a schedule that would deadlock).
pub fn run(scenario: &Scenario) -> Result<Report, ScenarioError> {
    scenario.validate()?;
    match scenario {
        Scenario::Pipeline(params) => labs::pipeline::run(params),
        Scenario::Cost(params) => labs::cost::run(params),
        Scenario::Fairness(params) => labs::fairness::run(params),
        Scenario::Agentic(params) => labs::agentic::run(params),
        Scenario::Bubbles(params) => labs::bubbles::run(params),
        Scenario::Overlap(params) => labs::overlap::run(params),
        Scenario::Resilience(params) => labs::resilience::run(params),
        Scenario::Tuning(params) => labs::tuning::run(params),
        Scenario::Migration(params) => labs::migration::run(params),
    }
}
