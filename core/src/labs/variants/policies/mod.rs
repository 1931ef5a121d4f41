//! How a query finds its variant and instance: INFaaS's model-less selection ([`infaas`])
//! against a user's fixed choice per application ([`fixed`]). A policy sees the catalogue's
//! profiles and what the monitors last reported of each instance ([`InstanceView`]) and
//! machine ([`MachineView`]), never the queues themselves.

pub mod fixed;
pub mod infaas;

use alloc::boxed::Box;
use alloc::vec::Vec;

use rand_pcg::Pcg64Mcg;

use super::params::{App, Hardware, Variant, VariantsParams};

crate::kinds! {
    /// The variants lab's policies.
    pub enum SelectionPolicy as "selection policy" {
        /// INFaaS (Romero et al., ATC'21): each query names its use-case, accuracy floor and
        /// SLO; the master picks a variant and an instance (`gpar_lat_acc_search`).
        Infaas = "infaas", "INFaaS";
        /// Each application served by the cheapest variant whose profile meets its accuracy
        /// and SLO, one instance loaded at the start.
        FixedCheapest = "fixed-cheapest", "Fixed, cheapest that fits";
        /// Each application served by the fastest variant that meets its accuracy, one
        /// instance loaded at the start.
        FixedFastest = "fixed-fastest", "Fixed, fastest";
    }
}

impl SelectionPolicy {
    /// A fresh policy for `params`.
    #[must_use]
    pub fn build(self, params: &VariantsParams) -> Box<dyn Selector> {
        match self {
            SelectionPolicy::Infaas => Box::new(infaas::Infaas::default()),
            SelectionPolicy::FixedCheapest => Box::new(fixed::Fixed::cheapest(params)),
            SelectionPolicy::FixedFastest => Box::new(fixed::Fixed::fastest(params)),
        }
    }
}

/// What the load monitor of one instance last reported (INFaaS's `query_executor.cc`
/// l. 599–735: every second, the queries per second it received and whether its variant is
/// blacklisted there), and whether it is registered as running.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstanceView {
    /// The variant it holds (index into the catalogue).
    pub variant: usize,
    /// The machine it is loaded on (index into the machines).
    pub machine: usize,
    /// Queries per second it received in the last monitor period.
    pub qps: f64,
    /// Whether the monitor marked it overloaded or interfered.
    pub blacklisted: bool,
    /// Whether its load has ended, so that it is registered as running.
    pub ready: bool,
}

/// What the monitors last reported of one machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MachineView {
    /// Its hardware.
    pub hardware: Hardware,
    /// Busy fraction of the last monitor period (0–1).
    pub utilisation: f64,
}

/// The monitors' last reports: every instance and every machine.
#[derive(Clone, Copy, Debug)]
pub struct Views<'a> {
    /// The time of the query, ns.
    pub now_ns: u64,
    /// Every instance, in the order they were loaded.
    pub instances: &'a [InstanceView],
    /// Every machine.
    pub machines: &'a [MachineView],
}

/// Where a query goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// To this running instance (index into the instances).
    To(usize),
    /// To the instance of `variant` on `machine`, loaded first if the machine lacks it.
    Load {
        /// The variant (index into the catalogue).
        variant: usize,
        /// The machine (index into the machines).
        machine: usize,
    },
    /// Nowhere: no variant meets the query's requirements ("No model can satisfy this
    /// request").
    Fail,
}

/// A selection policy.
pub trait Selector {
    /// The instances it loads before the first query: (variant, machine).
    fn preload(&self, machines: &[MachineView]) -> Vec<(usize, usize)>;

    /// Where a query of application `app_index` (`app`) with `batch` items goes, given the
    /// catalogue and the monitors' last reports; `rng` for the policy's own random choices.
    fn route(
        &mut self,
        app_index: usize,
        app: &App,
        batch: u32,
        variants: &[Variant],
        views: Views<'_>,
        rng: &mut Pcg64Mcg,
    ) -> Route;
}

/// Profiled latency of `variant` for a batch of `batch` items, ms: slope · batch + intercept
/// (`modelreg_server.cc` l. 48–70 fits them on batches 1, 4 and 8).
#[must_use]
pub fn profiled_ms(variant: &Variant, batch: u32) -> f64 {
    variant.slope_ms * f64::from(batch) + variant.intercept_ms
}
