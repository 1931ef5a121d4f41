//! An inference service beside the training jobs (the survey's "mixed training and inference"
//! family; Lyra, Li et al., EuroSys'23: separate inference and training clusters, idle
//! inference servers loaned to training and reclaimed when the service needs them).
//!
//! The service runs on its own cluster of `servers_peak` whole servers, the last nodes of the
//! cluster. Its demand follows a stated diurnal curve, the number of servers it needs in step
//! k (of `step_s`, starting at t_k = k·step):
//!
//!   d(k) = trough + round((peak − trough) · (1 − cos(2π·t_k / period)) / 2)
//!
//! (trough at t = 0, peak half a period later). Every server the service needs is a *replica*:
//! a job of the service's tenant holding one whole server from the step its demand rises above
//! the replica's rank until the step it falls to it (replica i is up while d(k) > i), flagged
//! [`Job::service`]. The curve spans the training trace's submissions (first to last, at least
//! one period). No public trace in `../shared/data` gives a diurnal inference demand (the Azure
//! LLM inference trace covers 30 minutes, the Helios VC table daily quotas), so the curve is
//! an input, not fitted.

use alloc::string::String;

use serde::{Deserialize, Serialize};

use super::ns_from_s;
use crate::labs::fairness::job::{Job, Trace};
use crate::scenario::{check_range, check_range_in, ScenarioError};

/// Largest number of servers the service may need.
pub const MAX_SERVICE_SERVERS: u32 = 10_000;

/// The inference service (the `fairness.colocation` part of a scenario).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ColocationSpec {
    /// Servers the service needs at its daily peak, and the size of its own cluster (0: no
    /// service; the default, which leaves a trace as it is).
    pub servers_peak: u32,
    /// Servers it needs at the trough.
    pub servers_trough: u32,
    /// Length of the demand cycle, s (a day).
    pub period_s: f64,
    /// The service scales its replicas every this many s (an autoscaler's interval).
    pub step_s: f64,
    /// A replica must be serving within this many s of the step that asks for it, or the
    /// step is an SLO violation of the service.
    pub slo_s: f64,
}

impl Default for ColocationSpec {
    fn default() -> Self {
        ColocationSpec {
            servers_peak: 0,
            servers_trough: 0,
            period_s: 86_400.0,
            step_s: 3_600.0,
            slo_s: 60.0,
        }
    }
}

impl ColocationSpec {
    /// True when there is no service.
    #[must_use]
    pub fn is_off(&self) -> bool {
        self.servers_peak == 0
    }

    /// The service's own servers in a cluster of `nodes` nodes: the last `servers_peak`,
    /// `lo..hi`.
    #[must_use]
    pub fn service_nodes(&self, nodes: u32) -> (u32, u32) {
        (nodes.saturating_sub(self.servers_peak), nodes)
    }

    /// Servers needed in the step that starts at `t_s` seconds.
    #[must_use]
    pub fn demand_servers(&self, t_s: f64) -> u32 {
        let swing = f64::from(self.servers_peak - self.servers_trough.min(self.servers_peak));
        let phase = 2.0 * core::f64::consts::PI * t_s / self.period_s;
        let above = libm::round(swing * (1.0 - libm::cos(phase)) / 2.0) as u32;
        self.servers_trough.min(self.servers_peak) + above
    }

    /// Checks the rules the field table ([`crate::labs::fairness::fields`]) cannot state, each
    /// bound by another field: `servers_peak` below `cluster_nodes` (and at most
    /// [`MAX_SERVICE_SERVERS`]), `servers_trough` at most `servers_peak`, `step_s` from 1 s to
    /// `period_s`; the table checks `period_s` and `slo_s`.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the first bad field (`fairness.colocation.…`).
    pub fn validate(&self, cluster_nodes: u32) -> Result<(), ScenarioError> {
        let lab = "fairness";
        check_range(
            lab,
            "colocation.servers_peak",
            self.servers_peak,
            0,
            MAX_SERVICE_SERVERS.min(cluster_nodes.saturating_sub(1)),
        )?;
        check_range(
            lab,
            "colocation.servers_trough",
            self.servers_trough,
            0,
            self.servers_peak,
        )?;
        check_range_in(
            lab,
            "colocation.step_s",
            self.step_s,
            1.0,
            self.period_s,
            " s",
        )
    }
}

/// Name of the service's tenant.
pub const SERVICE_TENANT: &str = "inference service";

/// Most demand steps a service may span (its curve is evaluated once per step).
pub const MAX_SERVICE_STEPS: u64 = 1_000_000;

/// The first and last submission of `trace` and the number of `step_s` steps the service spans.
fn span(trace: &Trace, spec: &ColocationSpec) -> (u64, u64, u64) {
    let first_ns = trace.jobs.iter().map(|j| j.submit_ns).min().unwrap_or(0);
    let last_ns = trace.jobs.iter().map(|j| j.submit_ns).max().unwrap_or(0);
    let step_ns = ns_from_s(spec.step_s).max(1);
    let span_ns = (last_ns - first_ns).max(ns_from_s(spec.period_s));
    (first_ns, step_ns, span_ns.div_ceil(step_ns))
}

/// Checks that the service `spec` asks for over `trace` stays within the simulator's size
/// limits: at most [`MAX_SERVICE_STEPS`] steps and `max_replicas` replicas (each rise of the
/// demand by one server is one replica, at most `servers_peak` per period).
///
/// # Errors
/// [`ScenarioError::Field`] naming `fairness.colocation.step_s` or `.servers_peak`.
pub fn check_size(
    trace: &Trace,
    spec: &ColocationSpec,
    max_replicas: u64,
) -> Result<(), ScenarioError> {
    if spec.is_off() {
        return Ok(());
    }
    let (_, step_ns, steps) = span(trace, spec);
    if steps > MAX_SERVICE_STEPS {
        return Err(ScenarioError::field(
            "fairness.colocation.step_s",
            alloc::format!(
                "the trace spans {steps} steps of {} s; at most {MAX_SERVICE_STEPS} (take a longer step)",
                step_ns as f64 / 1e9
            ),
        ));
    }
    let periods = (steps * step_ns).div_ceil(ns_from_s(spec.period_s).max(1));
    let replicas = u64::from(spec.servers_peak).saturating_mul(periods + 1);
    if replicas > max_replicas {
        return Err(ScenarioError::field(
            "fairness.colocation.servers_peak",
            alloc::format!(
                "{} servers over {periods} periods may need {replicas} replicas; at most {max_replicas}",
                spec.servers_peak
            ),
        ));
    }
    Ok(())
}

/// Adds the service's replicas to `trace` as `spec` says (nothing when it is off): one job of
/// `gpus_per_node` GPUs per replica and interval, in a new tenant [`SERVICE_TENANT`], with ids
/// after the trace's largest; the jobs stay sorted by submission, then id. Costs O(steps +
/// replicas) ([`check_size`] bounds both).
pub fn add_service(trace: &mut Trace, spec: &ColocationSpec, gpus_per_node: u32) {
    if spec.is_off() {
        return;
    }
    let (first_ns, step_ns, steps) = span(trace, spec);
    let tenant = trace.tenants.len() as u32;
    trace.tenants.push(String::from(SERVICE_TENANT));
    let mut next_id = trace.jobs.iter().map(|j| j.id + 1).max().unwrap_or(0);
    // Per replica rank below the current demand: the step its interval began at.
    let mut up_since: alloc::vec::Vec<u64> = alloc::vec::Vec::new();
    for k in 0..=steps {
        let d = if k == steps {
            0
        } else {
            spec.demand_servers((k * step_ns) as f64 / 1e9) as usize
        };
        // Replicas above the new demand end here, the highest rank first.
        while up_since.len() > d {
            let from = up_since.pop().unwrap_or(k);
            trace.jobs.push(Job {
                id: next_id,
                tenant,
                gpus: gpus_per_node,
                submit_ns: first_ns + from * step_ns,
                duration_ns: (k - from) * step_ns,
                speed_by_gpu_type: alloc::vec::Vec::new(),
                deadline_ns: None,
                later_deadlines: alloc::vec::Vec::new(),
                service: true,
            });
            next_id += 1;
        }
        while up_since.len() < d {
            up_since.push(k);
        }
    }
    trace.jobs.sort_by_key(|j| (j.submit_ns, j.id));
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn spec() -> ColocationSpec {
        ColocationSpec {
            servers_peak: 4,
            servers_trough: 1,
            period_s: 24.0 * 3600.0,
            step_s: 3600.0,
            slo_s: 60.0,
        }
    }

    #[test]
    fn the_curve_runs_from_trough_to_peak_and_back() {
        let s = spec();
        assert_eq!(s.demand_servers(0.0), 1);
        assert_eq!(s.demand_servers(12.0 * 3600.0), 4);
        assert_eq!(s.demand_servers(6.0 * 3600.0), 3); // 1 + round(3 · 0.5)
        assert_eq!(s.demand_servers(24.0 * 3600.0), 1);
    }

    #[test]
    fn replicas_cover_the_demand_of_every_step() {
        let mut t = Trace::default();
        add_service(&mut t, &spec(), 8);
        assert_eq!(t.tenants, [SERVICE_TENANT]);
        let s = spec();
        for k in 0..24u64 {
            let at = k * 3_600_000_000_000;
            let up = t
                .jobs
                .iter()
                .filter(|j| j.submit_ns <= at && at < j.submit_ns + j.duration_ns)
                .count() as u32;
            assert_eq!(up, s.demand_servers(at as f64 / 1e9), "step {k}");
        }
        assert!(t.jobs.iter().all(|j| j.service && j.gpus == 8));
        // Replica 0 is up all day: one job of 24 h.
        assert!(t.jobs.iter().any(|j| j.duration_ns == 24 * 3_600_000_000_000));
    }

    #[test]
    fn a_service_too_long_or_too_large_is_refused_by_field() {
        let mut t = Trace::default();
        t.jobs.push(Job {
            id: 0,
            tenant: 0,
            gpus: 1,
            submit_ns: 0,
            duration_ns: 1,
            speed_by_gpu_type: alloc::vec::Vec::new(),
            deadline_ns: None,
            later_deadlines: alloc::vec::Vec::new(),
            service: false,
        });
        t.jobs.push(Job {
            submit_ns: 4_000_000 * 1_000_000_000,
            ..t.jobs[0].clone()
        });
        let mut s = spec();
        s.step_s = 1.0;
        let e = check_size(&t, &s, 1_000_000).unwrap_err().to_string();
        assert!(e.contains("fairness.colocation.step_s"), "{e}");
        s.step_s = 3600.0;
        let e = check_size(&t, &s, 100).unwrap_err().to_string();
        assert!(e.contains("fairness.colocation.servers_peak"), "{e}");
        assert!(check_size(&t, &s, 1_000_000).is_ok());
    }

    #[test]
    fn off_leaves_the_trace_alone() {
        let mut t = Trace::default();
        add_service(&mut t, &ColocationSpec::default(), 8);
        assert_eq!(t, Trace::default());
    }
}
