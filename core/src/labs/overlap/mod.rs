//! The overlap lab: Helix (communication-computation overlap as graph scheduling) against the
//! baselines, on the per-rank execution graph of a real model's layers (or an imported graph).
//!
//! [`params`] is the scenario (the pass pipeline is data), [`passes`] holds Helix's tiling,
//! segmented round-robin reordering and DP bucketing, [`baselines`] serial, eager and
//! AsyncTP-style, [`schedule`] the list scheduler they share, [`interp`] the f32 interpreter
//! that proves the passes keep the math, and [`report`] the comparison.

pub mod baselines;
pub mod fields;
pub mod interp;
pub mod params;
pub mod passes;
pub mod report;
pub mod schedule;
pub mod sweep;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

pub use params::{OverlapParams, PassSpec, Placement};

use crate::cost::CostModel;
use crate::graph::sim::{simulate, GraphSim};
use crate::graph::validate::{validate, GraphError};
use crate::graph::{build, Graph};
use crate::report::Report;
use crate::scenario::{KeepsRuns, ScenarioError, Simulation};

/// Bytes per GiB.
pub const GIB: f64 = 1_073_741_824.0;

/// The strategies every run compares, in table order.
pub const STRATEGIES: [Strategy; 4] = [
    Strategy::Serial,
    Strategy::Eager,
    Strategy::AsyncTp,
    Strategy::Helix,
];

crate::kinds! {
    /// A way to schedule the graph.
    pub enum Strategy as "overlap strategy" {
        /// Every collective waited for at once.
        Serial = "serial", "serial";
        /// Starts raised, waits sunk (PyTorch Inductor).
        Eager = "eager", "eager";
        /// AllGather→GEMM(s) / GEMM→ReduceScatter fused into ring steps, forward and backward
        /// (PyTorch Inductor's `micro_pipeline_tp`).
        AsyncTp = "async_tp", "AsyncTP-style";
        /// The scenario's pass pipeline.
        Helix = "helix", "Helix";
    }
}

/// One pass of the pipeline as run: its name, its output and what it reported.
#[derive(Clone, Debug)]
pub struct PassStep {
    /// `tile`, `reorder` or `bucket`.
    pub pass: String,
    /// The graph after the pass.
    pub graph: Graph,
    /// Its simulation.
    pub sim: GraphSim,
    /// What the pass did, in words.
    pub note: String,
}

/// A whole run: every strategy's graph and simulation, and Helix's pass steps.
#[derive(Clone, Debug)]
pub struct OverlapRun {
    /// The graph as built or imported.
    pub original: Graph,
    /// Its simulation.
    pub original_sim: GraphSim,
    /// (strategy, graph, simulation) in [`STRATEGIES`] order.
    pub strategies: Vec<(Strategy, Graph, GraphSim)>,
    /// Helix's passes in order.
    pub steps: Vec<PassStep>,
    /// Memory budget of the last bucket pass, bytes.
    pub budget_bytes: Option<u64>,
    /// Operators tiling left whole, with reasons (first of each reason).
    pub refused: Vec<passes::tile::Refusal>,
    /// What the AsyncTP-style baseline fused.
    pub async_tp: baselines::async_tp::Fused,
}

fn run_error(e: &GraphError) -> ScenarioError {
    ScenarioError::Run(e.to_string())
}

/// The cost model of a scenario.
#[must_use]
pub fn cost_model(params: &OverlapParams) -> CostModel {
    CostModel::new(params.gpu)
}

/// The graph of a scenario: imported, or built from the model and layout.
///
/// # Errors
/// [`ScenarioError::Field`] for a bad layout or graph.
pub fn graph_of(params: &OverlapParams) -> Result<Graph, ScenarioError> {
    match &params.graph {
        Some(value) => crate::graph::json::from_value(value)
            .map_err(|e| ScenarioError::field(format!("overlap.graph.{}", e.path), e.message)),
        None => {
            build::build(&params.model.spec(), &params.layout(), &params.workload).map_err(|e| {
                ScenarioError::field(format!("overlap.parallelism.{}", e.field), e.message)
            })
        }
    }
}

/// What [`run_passes`] returns: the steps, tiling's refusals, the last bucket budget (bytes).
pub type PipelineRun = (Vec<PassStep>, Vec<passes::tile::Refusal>, Option<u64>);

/// Runs the pass pipeline on `graph`.
///
/// # Errors
/// [`ScenarioError::Run`] if a pass produces an invalid graph (a bug).
pub fn run_passes(
    graph: &Graph,
    pipeline: &[PassSpec],
    cost: &CostModel,
    after_pass: &mut dyn FnMut(),
) -> Result<PipelineRun, ScenarioError> {
    let mut current = graph.clone();
    let mut steps = Vec::new();
    let mut refused: Vec<passes::tile::Refusal> = Vec::new();
    let mut budget = None;
    for pass in pipeline {
        let (next, note) = match pass {
            PassSpec::Tile { k, dim } => {
                let t = passes::tile::tile(&current, *k, *dim).map_err(|e| run_error(&e))?;
                for r in t.refused {
                    if !refused.iter().any(|x| x.reason == r.reason) {
                        refused.push(r);
                    }
                }
                let note = format!(
                    "{} operators split into {k} tiles along the {}",
                    t.tiled_ops,
                    dim.id()
                );
                (t.graph, note)
            }
            PassSpec::Reorder => {
                let r = passes::reorder::reorder(&current).map_err(|e| run_error(&e))?;
                let note = format!("{} segments emitted round robin", r.segments);
                (r.graph, note)
            }
            PassSpec::Bucket { memory_budget_gib } => {
                let b = memory_budget_gib.map(|g| (g * GIB) as u64);
                budget = b;
                let out = passes::bucket::bucket(&current, cost, b).map_err(|e| run_error(&e))?;
                let note = passes::bucket::describe(&out);
                (out.graph, note)
            }
        };
        validate(&next).map_err(|e| run_error(&e))?;
        let sim = simulate(&next, cost).map_err(|e| run_error(&e))?;
        steps.push(PassStep {
            pass: pass.id().to_string(),
            graph: next.clone(),
            sim,
            note,
        });
        current = next;
        after_pass();
    }
    Ok((steps, refused, budget))
}

impl KeepsRuns for OverlapParams {
    /// The graph is built or imported from the parameters.
    type Input = ();
    type Runs = OverlapRun;

    /// Builds (or imports) the graph and runs every strategy, calling `progress(done, total)`
    /// after the original graph's simulation, each pass and each strategy (total = 1 + passes
    /// + 4).
    fn simulate(
        &self,
        (): &(),
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Simulation<OverlapRun>, ScenarioError> {
        let run = simulate_all(self, progress)?;
        Ok(Simulation {
            report: report::build(self, &run),
            runs: run,
        })
    }
}

fn simulate_all(
    params: &OverlapParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<OverlapRun, ScenarioError> {
    params.validate()?;
    let total = 1 + params.passes.len() + 4;
    let mut done = 0;
    progress(done, total);
    let cost = cost_model(params);
    let original = graph_of(params)?;
    let original_sim = simulate(&original, &cost).map_err(|e| run_error(&e))?;
    done += 1;
    progress(done, total);
    let (steps, refused, budget_bytes) = run_passes(&original, &params.passes, &cost, &mut || {
        done += 1;
        progress(done, total);
    })?;
    let helix = steps
        .last()
        .map_or_else(|| original.clone(), |s| s.graph.clone());
    let serial = baselines::serial::serial(&original).map_err(|e| run_error(&e))?;
    let eager = baselines::eager::eager(&original).map_err(|e| run_error(&e))?;
    let (async_tp, async_tp_fused) =
        baselines::async_tp::async_tp(&original).map_err(|e| run_error(&e))?;
    let mut strategies = Vec::new();
    for (s, g) in [
        (Strategy::Serial, serial),
        (Strategy::Eager, eager),
        (Strategy::AsyncTp, async_tp),
        (Strategy::Helix, helix),
    ] {
        let sim = simulate(&g, &cost).map_err(|e| run_error(&e))?;
        strategies.push((s, g, sim));
        done += 1;
        progress(done, total);
    }
    Ok(OverlapRun {
        original,
        original_sim,
        strategies,
        steps,
        budget_bytes,
        refused,
        async_tp: async_tp_fused,
    })
}

/// Runs the scenario and returns its Report.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters; [`ScenarioError::Run`] for a bug.
pub fn run(params: &OverlapParams) -> Result<Report, ScenarioError> {
    run_with_progress(params, &mut |_, _| {})
}

/// [`run`] with progress per pass and strategy ([`KeepsRuns::simulate`]).
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    params: &OverlapParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    params.simulate(&(), progress).map(|s| s.report)
}

impl crate::scenario::LabParams for OverlapParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        run_with_progress(self, progress)
    }

    const INPUTS: &'static [crate::scenario::InputSlot] = &[crate::scenario::InputSlot {
        name: "graph",
        help: "an operator graph to schedule instead of the built model (bubblelab graph JSON, docs/MODEL.md)",
        many: false,
        carried: false,
    }];

    /// The graph file becomes the scenario's `graph`, checked as the graph reader reads it.
    fn read_input(&mut self, file: &crate::scenario::InputFile<'_>) -> Result<(), ScenarioError> {
        let value: serde_json::Value = serde_json::from_str(file.text).map_err(|e| {
            crate::scenario::input_error(
                file,
                format!("not valid JSON at line {}, column {}", e.line(), e.column()),
            )
        })?;
        crate::graph::json::from_value(&value).map_err(|e| crate::scenario::input_error(file, e))?;
        self.graph = Some(value);
        Ok(())
    }
}
