//! The fairness lab: a trace-driven multi-tenant GPU cluster simulator, ASTRAEA's long-term
//! GPU-time fairness and the field's policies.
//!
//! [`job`] holds the input (jobs of tenants), [`traces`] reads real trace formats and generates
//! synthetic ones, [`params`] the scenario ([`fields`] its field table), [`policies`] one file per policy, [`sim`] the
//! event-driven cluster simulator, [`metrics`] and [`report`] what a run measured.

pub mod fields;
pub mod job;
pub mod metrics;
pub mod params;
pub mod policies;
pub mod report;
pub mod sim;
pub mod traces;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

use alloc::format;
use alloc::vec::Vec;

pub use job::{Job, LaterDeadline, Trace};
pub use params::{
    AstraeaParams, ClusterSpec, FairnessParams, GandivaFairParams, GpuTypeSpec, Placement,
    TenantShare, TenantWeights, ThemisParams, TiresiasParams, WindowSpec,
};
pub use policies::PolicyKind;
pub use sim::{occupancy_at, occupancy_of, run_policy, PolicyRun, Segment};

use crate::report::Report;
use crate::scenario::{
    check_slots, files_in, input_error, InputFile, InputSlot, KeepsRuns, ScenarioError, Simulation,
};

/// Most jobs one run may simulate (summed over policies: jobs × policies).
pub const MAX_JOB_RUNS: u64 = 2_000_000;

/// Runs every chosen policy on the scenario's synthetic trace.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn run(params: &FairnessParams) -> Result<Report, ScenarioError> {
    run_with_progress(params, &mut |_, _| {})
}

/// [`run`], calling `progress(policies done, policies)` as [`KeepsRuns::simulate`] does.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn run_with_progress(
    params: &FairnessParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    params
        .simulate(&synthetic_trace(params)?, progress)
        .map(|s| s.report)
}

/// The seeded synthetic trace that `params.synthetic` describes, once `params` are valid.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn synthetic_trace(params: &FairnessParams) -> Result<Trace, ScenarioError> {
    params.validate()?;
    Ok(traces::synthetic::generate(&params.synthetic))
}

/// Runs every chosen policy on `trace` (an uploaded or real trace; the synthetic spec is
/// ignored).
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters or a trace too large for one run.
pub fn run_trace(params: &FairnessParams, trace: &Trace) -> Result<Report, ScenarioError> {
    params.simulate(trace, &mut |_, _| {}).map(|s| s.report)
}

/// What the fairness lab keeps of a run (the page draws its cluster view and share charts from
/// it).
#[derive(Clone, Debug)]
pub struct FairnessRuns {
    /// The trace as simulated (jobs no GPU type can hold left out).
    pub trace: Trace,
    /// One run per policy, in the scenario's order.
    pub runs: Vec<PolicyRun>,
}

impl KeepsRuns for FairnessParams {
    /// The trace the policies run on (an uploaded or real trace, or [`synthetic_trace`]).
    type Input = Trace;
    type Runs = FairnessRuns;

    /// Runs every chosen policy on `trace` and keeps the runs; `progress(policies done,
    /// policies)` is called before the first and after each policy.
    fn simulate(
        &self,
        trace: &Trace,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Simulation<FairnessRuns>, ScenarioError> {
        self.simulate_with(trace, progress, &mut run_in_turn)
    }
}

/// Carries out the `i`-th run of [`FairnessParams::simulate_with`]: one of the scenario's
/// policies on its trace, the runs numbered in the order they should start
/// ([`PolicyKind::longest_first`]).
pub type RunOne<'a> = dyn Fn(usize) -> PolicyRun + Sync + 'a;

/// Carries out the runs of [`FairnessParams::simulate_with`]: given their count `n` and
/// `run_one`, returns the `n` runs in order, calling `progress(runs done, n)` as each ends.
/// The runs are independent of each other, so whatever order or threads carry them out, the
/// runs — and the Report — are the same.
pub type RunAll<'a> =
    dyn FnMut(usize, &RunOne<'_>, &mut dyn FnMut(usize, usize)) -> Vec<PolicyRun> + 'a;

/// The runs one after the other, on this thread (what [`KeepsRuns::simulate`] does).
pub fn run_in_turn(
    n: usize,
    run_one: &RunOne<'_>,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<PolicyRun> {
    (0..n)
        .map(|i| {
            let run = run_one(i);
            progress(i + 1, n);
            run
        })
        .collect()
}

impl FairnessParams {
    /// [`KeepsRuns::simulate`], with the policies' runs carried out by `run_all` (the native
    /// CLI runs them on several threads).
    ///
    /// # Errors
    /// As [`KeepsRuns::simulate`].
    pub fn simulate_with(
        &self,
        trace: &Trace,
        progress: &mut dyn FnMut(usize, usize),
        run_all: &mut RunAll<'_>,
    ) -> Result<Simulation<FairnessRuns>, ScenarioError> {
        let params = self;
        let (usable, dropped) = params.usable_trace(trace)?;
        let total = params.policies.len();
        progress(0, total);
        // The runs are started longest first ([`PolicyKind::longest_first`]), and put back in
        // the policies' order.
        let started = PolicyKind::longest_first(&params.policies);
        let run_one = |i: usize| run_policy(params, &usable, params.policies[started[i]]);
        let in_start_order = run_all(total, &run_one, progress);
        if in_start_order.len() != total {
            return Err(ScenarioError::Run(alloc::format!(
                "{} runs came back for {total} policies",
                in_start_order.len()
            )));
        }
        let mut runs: Vec<Option<PolicyRun>> = (0..total).map(|_| None).collect();
        for (run, &i) in in_start_order.into_iter().zip(&started) {
            runs[i] = Some(run);
        }
        let runs: Vec<PolicyRun> = runs.into_iter().flatten().collect();
        let digests: Vec<report::RunDigest> = runs
            .iter()
            .map(|run| report::digest(params, &usable, run))
            .collect();
        let report = report::build(params, &report::TraceFacts::of(&usable), &digests, dropped);
        Ok(Simulation {
            runs: FairnessRuns {
                trace: usable,
                runs,
            },
            report,
        })
    }

    /// The trace every policy runs ([`usable_jobs`]) and the jobs left out, once the scenario
    /// and the trace's size are valid.
    ///
    /// # Errors
    /// As [`KeepsRuns::simulate`].
    pub fn usable_trace(&self, trace: &Trace) -> Result<(Trace, Dropped), ScenarioError> {
        let params = self;
        params.validate_simulation()?;
        traces::colocation::check_size(
            trace,
            &params.colocation,
            MAX_JOB_RUNS / params.policies.len().max(1) as u64,
        )?;
        let (usable, dropped) = usable_jobs(params, trace);
        let runs_count = usable.jobs.len() as u64 * params.policies.len() as u64;
        if runs_count > MAX_JOB_RUNS {
            return Err(ScenarioError::field(
                "fairness.policies",
                alloc::format!(
                    "jobs × policies must be at most {MAX_JOB_RUNS}, got {} jobs × {} policies",
                    usable.jobs.len(),
                    params.policies.len()
                ),
            ));
        }
        Ok((usable, dropped))
    }

    /// One share of a run carried out in pieces (the playground's several workers): the
    /// policies at positions `which` of `self.policies` run on `trace`'s usable jobs, each
    /// with its digest. [`FairnessParams::assemble`] builds from all the pieces the Report that
    /// [`KeepsRuns::simulate`] builds in one go, byte for byte.
    ///
    /// # Errors
    /// As [`KeepsRuns::simulate`]; a position past the policies is a field error.
    pub fn simulate_some(
        &self,
        trace: &Trace,
        which: &[usize],
    ) -> Result<FairnessPiece, ScenarioError> {
        if let Some(&i) = which.iter().find(|&&i| i >= self.policies.len()) {
            return Err(ScenarioError::field(
                "fairness.policies",
                alloc::format!("no policy at position {i} of {}", self.policies.len()),
            ));
        }
        let (usable, dropped) = self.usable_trace(trace)?;
        let mut runs = Vec::with_capacity(which.len());
        let mut digests = Vec::with_capacity(which.len());
        for &i in which {
            let run = run_policy(self, &usable, self.policies[i]);
            digests.push((i, report::digest(self, &usable, &run)));
            runs.push(run);
        }
        Ok(FairnessPiece {
            facts: report::TraceFacts::of(&usable),
            dropped,
            digests,
            runs: FairnessRuns {
                trace: usable,
                runs,
            },
        })
    }

    /// The Report of a run carried out in pieces ([`FairnessParams::simulate_some`]): the
    /// digests of every policy, each once, with the trace's facts and dropped jobs (the same in
    /// every piece).
    ///
    /// # Errors
    /// [`ScenarioError::Run`] when a policy's digest is missing, repeated or of another
    /// policy.
    pub fn assemble(
        &self,
        facts: &report::TraceFacts,
        dropped: Dropped,
        mut digests: Vec<(usize, report::RunDigest)>,
    ) -> Result<Report, ScenarioError> {
        digests.sort_by_key(|(i, _)| *i);
        let fits = digests.len() == self.policies.len()
            && digests
                .iter()
                .enumerate()
                .all(|(k, (i, d))| *i == k && d.kind == self.policies[k]);
        if !fits {
            return Err(ScenarioError::Run(alloc::format!(
                "the pieces hold {} digests for {} policies, not one of each",
                digests.len(),
                self.policies.len()
            )));
        }
        let digests: Vec<report::RunDigest> = digests.into_iter().map(|(_, d)| d).collect();
        Ok(report::build(self, facts, &digests, dropped))
    }
}

/// What [`FairnessParams::simulate_some`] produced: the digests of its policies, tagged with
/// their positions in the scenario, and the runs themselves.
#[derive(Clone, Debug)]
pub struct FairnessPiece {
    /// The usable trace's facts.
    pub facts: report::TraceFacts,
    /// Jobs left out of every run.
    pub dropped: Dropped,
    /// (position in `policies`, digest) of each policy run.
    pub digests: Vec<(usize, report::RunDigest)>,
    /// The runs, in the order of `digests`.
    pub runs: FairnessRuns,
}

/// Jobs of a trace left out of a run, and why.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Dropped {
    /// Jobs no GPU type of the cluster can hold, or that ask for no GPU.
    pub too_large: usize,
    /// Jobs of a tenant missing from the share list (the artifact's "jobs without valid user
    /// share", `dispatch_new_job`).
    pub no_share: usize,
    /// Jobs larger than their tenant's quota Q_u, dropped (only when an ASTRAEA-family policy
    /// runs, which could never start them) as the artifact drops them (`dispatch_new_job`).
    pub over_quota: usize,
    /// GPU-time those over-quota jobs asked for, GPU-hours.
    pub over_quota_gpu_h: f64,
}

impl Dropped {
    /// Jobs dropped for any reason.
    #[must_use]
    pub fn total(&self) -> usize {
        self.too_large + self.no_share + self.over_quota
    }
}

/// The trace as every policy of `params` runs it: with deadlines given as `params.deadlines`
/// says to the jobs that have none ([`traces::deadlines`]); without the jobs no GPU type of
/// the cluster can hold (or that ask for no GPU; with an inference service, no GPU type of the
/// nodes outside its own); with a share list, with exactly its tenants in its order (jobs of
/// other tenants dropped); with the service's replicas ([`traces::colocation`]); with an
/// ASTRAEA-family policy among `params.policies`, without the jobs larger than their tenant's
/// quota (so that every policy runs the same jobs).
#[must_use]
pub fn usable_jobs(params: &FairnessParams, trace: &Trace) -> (Trace, Dropped) {
    let mut dropped = Dropped::default();
    let types = params.cluster.node_types();
    let mut per_type = alloc::vec![0u64; params.cluster.type_count()];
    // With an inference service, training jobs must fit beside its own servers (separate
    // clusters could never run a larger one).
    let training_nodes = types
        .len()
        .saturating_sub(params.colocation.servers_peak as usize);
    for &t in &types[..training_nodes] {
        per_type[t as usize] += u64::from(params.cluster.gpus_per_node);
    }
    let largest = per_type.into_iter().max().unwrap_or(0);
    let mut out = trace.clone();
    traces::deadlines::assign(&mut out, &params.deadlines);
    traces::throughputs::assign(&mut out, &params.throughputs, &params.cluster.gpu_types);
    out.jobs
        .retain(|j| j.gpus > 0 && u64::from(j.gpus) <= largest);
    dropped.too_large = trace.jobs.len() - out.jobs.len();
    if let TenantWeights::Shares(shares) = &params.tenant_weights {
        // Tenant index in the share list of each trace tenant (None: not listed).
        let map: Vec<Option<u32>> = out
            .tenants
            .iter()
            .map(|name| {
                shares
                    .iter()
                    .position(|s| &s.name == name)
                    .map(|i| i as u32)
            })
            .collect();
        let before = out.jobs.len();
        out.jobs
            .retain(|j| map.get(j.tenant as usize).copied().flatten().is_some());
        dropped.no_share = before - out.jobs.len();
        for j in &mut out.jobs {
            j.tenant = map[j.tenant as usize].unwrap_or(0);
        }
        out.tenants = shares.iter().map(|s| s.name.clone()).collect();
    }
    // Tenants named by the jobs but missing from the names list get placeholder names.
    let max_tenant = out
        .jobs
        .iter()
        .map(|j| j.tenant as usize + 1)
        .max()
        .unwrap_or(0);
    while out.tenants.len() < max_tenant {
        let n = out.tenants.len();
        out.tenants.push(alloc::format!("tenant {n}"));
    }
    // After the size and share filters, which are about training jobs; the quota filter below
    // (ASTRAEA's machinery) drops a replica larger than the service tenant's quota, and counts
    // it, as any job.
    traces::colocation::add_service(&mut out, &params.colocation, params.cluster.gpus_per_node);
    if params.policies.iter().any(|p| p.uses_quotas()) {
        let weights = sim::tenant_weights(params, &out);
        let quotas = sim::tenant_quotas(params, &weights, params.cluster.total_gpus());
        let before = out.jobs.len();
        let mut gpu_s = 0.0;
        out.jobs.retain(|j| {
            let keep = u64::from(j.gpus) <= quotas[j.tenant as usize];
            if !keep {
                gpu_s += f64::from(j.gpus) * j.duration_ns as f64 / 1e9;
            }
            keep
        });
        dropped.over_quota = before - out.jobs.len();
        dropped.over_quota_gpu_h = gpu_s / 3600.0;
    }
    (out, dropped)
}

impl crate::scenario::LabParams for FairnessParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        run_with_progress(self, progress)
    }

    const INPUTS: &'static [InputSlot] = &[
        InputSlot {
            name: "trace",
            help: "the jobs: a DIR-LAB, Tiresias, Chronus-artifact, Helios, Philly or Alibaba trace (format told from its header)",
            many: false,
            carried: false,
        },
        InputSlot {
            name: "shares",
            help: "tenant shares (name,share), as the ASTRAEA artifact writes them",
            many: false,
            carried: true,
        },
        InputSlot {
            name: "names",
            help: "tenant names one per line, in the trace's tenant order (orders the shares)",
            many: false,
            carried: true,
        },
    ];

    fn run_with_inputs(
        &self,
        inputs: &[InputFile<'_>],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Report, ScenarioError> {
        let (params, trace) = self.read_inputs(inputs, None, &traces::ReadOptions::default())?;
        params.simulate(&trace, progress).map(|s| s.report)
    }

    /// The shares file applied, ordered by the names file if given (a names file alone orders
    /// the shares the scenario holds); a trace file is read when the lab runs
    /// ([`FairnessParams::read_inputs`]).
    fn with_inputs(&self, inputs: &[InputFile<'_>]) -> Result<Self, ScenarioError> {
        check_slots::<Self>(inputs)?;
        let mut params = self.clone();
        if let Some(file) = files_in(inputs, "shares").next() {
            let list = traces::shares::parse_shares(file.text).map_err(|e| input_error(file, e))?;
            params.tenant_weights = TenantWeights::Shares(list);
        }
        if let Some(names) = files_in(inputs, "names").next() {
            // The names order the shares: the file's, or the ones the scenario already holds.
            let TenantWeights::Shares(list) = &params.tenant_weights else {
                return Err(ScenarioError::field(
                    "input",
                    "`names` orders tenant shares: give `shares` too",
                ));
            };
            let ordered = traces::shares::order_by_names(list, names.text)
                .map_err(|e| input_error(names, e))?;
            params.tenant_weights = TenantWeights::Shares(ordered);
        }
        params.validate()?;
        Ok(params)
    }
}

impl FairnessParams {
    /// These parameters with the shares file applied
    /// ([`crate::scenario::LabParams::with_inputs`]), and the
    /// trace: the trace file read in `format` (or the format its header shows) with `options`,
    /// or the synthetic trace.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the slot, or the file and row a reader refused.
    pub fn read_inputs(
        &self,
        inputs: &[InputFile<'_>],
        format: Option<traces::TraceFormat>,
        options: &traces::ReadOptions,
    ) -> Result<(FairnessParams, Trace), ScenarioError> {
        let params = crate::scenario::LabParams::with_inputs(self, inputs)?;
        let Some(file) = files_in(inputs, "trace").next() else {
            let trace = synthetic_trace(&params)?;
            return Ok((params, trace));
        };
        let Some(format) = format.or_else(|| traces::detect(file.text)) else {
            return Err(input_error(
                file,
                format!(
                    "cannot tell the trace format from its header (it reads {})",
                    traces::TraceFormat::IDS.join(", ")
                ),
            ));
        };
        let mut trace = traces::parse(format, file.text, options)
            .map_err(|e| input_error(file, e))?;
        if trace.source.is_empty() {
            trace.source = file.source.into();
        }
        Ok((params, trace))
    }
}
