//! The variants lab: choosing a model variant per query, after INFaaS (Romero et al.,
//! "INFaaS: Automated Model-less Inference Serving", USENIX ATC'21; artifact
//! stanford-mast/INFaaS). Queries of several applications state an accuracy floor and a
//! latency SLO; a policy picks a variant of the use-case and an instance of it; instances
//! serve their queries in order after loading; a load monitor per instance blacklists
//! overloaded ones.
//!
//! [`params`] holds the scenario, [`policies`] INFaaS's selection and the fixed baselines,
//! [`sim`] the serving simulation, [`report`] the comparison.

pub mod fields;
pub mod params;
pub mod policies;
mod presets;
pub mod report;
pub mod sim;
pub use presets::{CARD, PRESETS, TOURS};

pub use params::{App, Hardware, Prices, Variant, VariantsParams};
pub use policies::SelectionPolicy;

use alloc::vec::Vec;

use crate::report::Report;
use crate::scenario::ScenarioError;

/// Runs every policy on the same arrivals and builds the comparison Report, calling
/// `progress(done, total)` after each policy.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn run(
    params: &VariantsParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    params.validate()?;
    let arrivals = sim::arrivals(params);
    let mut runs = Vec::with_capacity(params.policies.len());
    for (i, &policy) in params.policies.iter().enumerate() {
        runs.push(sim::simulate(params, policy, &arrivals));
        progress(i + 1, params.policies.len());
    }
    Ok(report::build(params, &runs))
}

impl crate::scenario::LabParams for VariantsParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        run(self, progress)
    }
}
