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

pub mod compare;
pub mod cost;
pub mod csv;
pub mod edit;
pub mod engine;
pub mod fields;
pub mod graph;
pub mod hw;
pub mod kinds;
pub mod kineto;
pub mod labs;
pub mod lp;
pub mod presets;
pub mod report;
pub mod scenario;
pub mod share;
pub mod sweep;
pub mod tour;
pub mod trace;
pub mod trial;
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
    run_with_progress(scenario, &mut |_, _| {})
}

/// [`run`], calling `progress(done, total)` at the lab's natural steps, the same callback the
/// CLI's progress bars and the page's worker use: one step per policy in the fairness lab, one
/// per training run in the tuning lab
/// ([`labs::tuning::run_with_progress`]), one per controller and sweep cap in the agentic lab
/// ([`labs::agentic::run_workload_with_progress`]), one per pass and strategy in the overlap
/// lab, one per strategy in the resilience lab (these three keep their runs for the page
/// through [`scenario::KeepsRuns`]); the other labs (each one simulation of well
/// under a second) report `(0, 1)` before and `(1, 1)` after their run. The Report does not
/// depend on the callback.
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    scenario: &Scenario,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    scenario.validate()?;
    scenario.run_lab(progress)
}

/// [`run_with_progress`] on input files: each names one of the lab's slots
/// ([`Scenario::input_slots`]) and is read by the lab's own reader, so the CLI's `--input` and
/// the page's uploads run the same code. With no files it is [`run_with_progress`].
///
/// # Errors
/// As [`run`], and [`ScenarioError::Field`] naming the slot or the file and row a reader
/// refused.
pub fn run_with_inputs(
    scenario: &Scenario,
    inputs: &[scenario::InputFile<'_>],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    scenario.validate()?;
    scenario.run_lab_with_inputs(inputs, progress)
}
