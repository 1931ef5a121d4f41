//! Parameters of the overlap lab: the model and layout whose per-rank graph is scheduled (or an
//! imported graph), the hardware, and the pass pipeline as data.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::graph::build::{self, ModelKind, Parallelism, Workload};
use crate::graph::Dim;
use crate::hw::GpuKind;
use crate::scenario::ScenarioError;

/// Largest tile count K.
pub const MAX_TILES: u32 = 16;
/// Most passes in one pipeline.
pub const MAX_PASSES: usize = 8;
/// Largest memory budget, GiB.
pub const MAX_BUDGET_GIB: f64 = 1.0e6;
/// Most layers a built graph may have (GPT-3 175B has 96).
pub const MAX_LAYERS: u32 = 128;

crate::kinds! {
    /// Where the ranks of every communication group sit.
    #[derive(Default)]
    pub enum Placement as "placement" {
        /// Groups fill DGX nodes (`parallelism.gpus_per_node` GPUs on NVLink).
        #[default]
        IntraNode = "intra-node", "inside a node (NVLink)";
        /// One GPU per node: every collective crosses nodes over InfiniBand.
        InterNode = "inter-node", "across nodes (InfiniBand)";
    }
}

/// One pass of the Helix pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "pass", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PassSpec {
    /// Split operators into `k` tile streams along `dim`.
    Tile {
        /// Tile streams K (1 leaves the graph as it is).
        #[serde(default = "default_k")]
        k: u32,
        /// Split dimension: `batch` (default) or `sequence` (position-wise ops only).
        #[serde(default = "default_dim")]
        dim: Dim,
    },
    /// Segmented round-robin reordering of the tile streams.
    Reorder,
    /// DP bucketing of tile siblings under a memory budget.
    Bucket {
        /// Peak activation memory allowed, GiB (`null`: no budget).
        #[serde(default)]
        memory_budget_gib: Option<f64>,
    },
}

fn default_k() -> u32 {
    2
}

fn default_dim() -> Dim {
    Dim::Batch
}

impl PassSpec {
    /// The id used in JSON and tables.
    #[must_use]
    pub fn id(&self) -> &'static str {
        match self {
            PassSpec::Tile { .. } => "tile",
            PassSpec::Reorder => "reorder",
            PassSpec::Bucket { .. } => "bucket",
        }
    }
}

/// The overlap lab's scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OverlapParams {
    /// Model whose transformer layers are built.
    pub model: ModelKind,
    /// GPU (DGX node: NVLink inside, InfiniBand between nodes).
    pub gpu: GpuKind,
    /// Whether the groups stay inside a node or cross nodes.
    pub placement: Placement,
    /// Degrees of parallelism (TP/SP/CP/EP/DP).
    pub parallelism: Parallelism,
    /// Layers, micro-batch, sequence length, forward or training.
    pub workload: Workload,
    /// The Helix pipeline, in order.
    pub passes: Vec<PassSpec>,
    /// An imported graph in bubblelab's graph JSON (`docs/MODEL.md`, "Graph JSON"); when
    /// given it replaces the built model (`model`, `parallelism`, `workload` are ignored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<serde_json::Value>,
}

impl Default for OverlapParams {
    fn default() -> Self {
        OverlapParams {
            model: ModelKind::Gpt3Curie,
            gpu: GpuKind::H100,
            placement: Placement::IntraNode,
            parallelism: Parallelism {
                tp: 2,
                sp: true,
                ..Parallelism::default()
            },
            workload: Workload {
                layers: 1,
                micro_batch: 4,
                seq_len: 2048,
                backward: true,
                dtype_bytes: 2,
                whole_step: false,
            },
            passes: vec![
                PassSpec::Tile {
                    k: 2,
                    dim: Dim::Batch,
                },
                PassSpec::Reorder,
                PassSpec::Bucket {
                    memory_budget_gib: None,
                },
            ],
            graph: None,
        }
    }
}

impl OverlapParams {
    /// The layout the graph is built with: `parallelism`, with one GPU per node when
    /// `placement` is inter-node.
    #[must_use]
    pub fn layout(&self) -> Parallelism {
        let mut par = self.parallelism;
        if self.placement == Placement::InterNode {
            par.gpus_per_node = 1;
        }
        par
    }

    /// Checks every parameter: the ranges of the field table (those of the model builder only
    /// when no graph is imported), then the rules between fields.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming `overlap.<field>` and what was expected.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let value = crate::scenario::to_value(self);
        if self.graph.is_none() {
            crate::fields::check("overlap", super::fields::FIELDS, &value)?;
        } else {
            // An imported graph replaces the built model: the builder's fields are not read.
            let read: Vec<crate::fields::Field> = super::fields::FIELDS
                .iter()
                .filter(|f| !super::fields::for_the_builder(f.path))
                .copied()
                .collect();
            crate::fields::check("overlap", &read, &value)?;
        }
        if self.graph.is_none() {
            if !matches!(self.workload.dtype_bytes, 1 | 2 | 4) {
                return Err(ScenarioError::field(
                    "overlap.workload.dtype_bytes",
                    format!("must be 1, 2 or 4, got {}", self.workload.dtype_bytes),
                ));
            }
            build::check(&self.model.spec(), &self.layout(), &self.workload).map_err(|e| {
                let path = match e.field {
                    "workload" | "seq_len" => format!("overlap.workload.{}", e.field),
                    f => format!("overlap.parallelism.{f}"),
                };
                ScenarioError::field(path, e.message)
            })?;
        }
        if self.passes.len() > MAX_PASSES {
            return Err(ScenarioError::field(
                "overlap.passes",
                format!("at most {MAX_PASSES} passes, got {}", self.passes.len()),
            ));
        }
        for (i, pass) in self.passes.iter().enumerate() {
            match pass {
                PassSpec::Tile { k, dim } => {
                    let path = format!("overlap.passes[{i}].k");
                    if *k == 0 || *k > MAX_TILES {
                        return Err(ScenarioError::field(
                            path,
                            format!("must be between 1 and {MAX_TILES}, got {k}"),
                        ));
                    }
                    if *dim == Dim::Features {
                        return Err(ScenarioError::field(
                            format!("overlap.passes[{i}].dim"),
                            "must be `batch` or `sequence`; features are split by tensor parallelism",
                        ));
                    }
                    if self.graph.is_none() {
                        let k64 = u64::from(*k);
                        let (extent, what) = match dim {
                            Dim::Batch => {
                                (self.workload.micro_batch, "sequences of the micro-batch")
                            }
                            _ => (self.shard_tokens(), "tokens of each rank's sequence shard"),
                        };
                        if !extent.is_multiple_of(k64) {
                            return Err(ScenarioError::field(
                                path,
                                format!("must divide the {extent} {what}, got {k}"),
                            ));
                        }
                    }
                }
                PassSpec::Reorder => {}
                PassSpec::Bucket { memory_budget_gib } => {
                    if let Some(b) = memory_budget_gib {
                        if !b.is_finite() || *b <= 0.0 || *b > MAX_BUDGET_GIB {
                            return Err(ScenarioError::field(
                                format!("overlap.passes[{i}].memory_budget_gib"),
                                format!(
                                    "must be a positive number of GiB up to {MAX_BUDGET_GIB}, or null for no budget; got {b}"
                                ),
                            ));
                        }
                    }
                }
            }
        }
        if let Some(value) = &self.graph {
            crate::graph::json::from_value(value).map_err(|e| {
                ScenarioError::field(format!("overlap.graph.{}", e.path), e.message)
            })?;
        }
        Ok(())
    }

    /// Tokens of one rank's sequence shard (the smallest sequence extent a tensor has).
    fn shard_tokens(&self) -> u64 {
        let par = self.layout();
        let mut s = self.workload.seq_len / u64::from(par.cp.max(1));
        if par.sp {
            s /= u64::from(par.tp.max(1));
        }
        s
    }
}
