//! The execution-graph IR: what one GPU runs in one step of a model-parallel job.
//!
//! A [`Graph`] is a DAG (petgraph `StableDiGraph`) of [`Node`]s:
//!
//! * [`NodeKind::Compute`]: a kernel on the compute stream (GEMM, attention, a memory-bound op),
//!   with its FLOPs and HBM bytes;
//! * [`NodeKind::CollectiveStart`]: launches a collective on a communication stream; it runs
//!   asynchronously and produces nothing the compute stream can read yet;
//! * [`NodeKind::Wait`]: joins one collective back into the compute stream; the collective's
//!   result tensor is produced here, so a consumer that depends on the result depends on the
//!   wait.
//!
//! Edges are dependencies. [`Tensor`]s have sizes, a producer and consumers, so lifetimes (and
//! the memory ledger) follow from the graph. `order` is the schedule: the order in which the host
//! issues nodes (passes in the overlap lab rewrite it). Every pass must keep the graph valid
//! ([`validate::validate`]), and property tests use the validator as their oracle.
//!
//! The graph describes one representative rank of an SPMD job: every rank of a group runs the
//! same graph, so a collective's time is its time on any member.

pub mod build;
pub mod sim;
pub mod validate;

use alloc::string::String;
use alloc::vec::Vec;

use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use serde::{Deserialize, Serialize};

use crate::cost::{CollectiveKind, ComputeWork};

/// Index of a tensor in [`Graph::tensors`].
pub type TensorId = usize;
/// Index of a communication group in [`Graph::groups`].
pub type GroupId = usize;

/// A communication group (a TP, SP, CP, EP or DP group).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupSpec {
    /// Short name, e.g. `tp`, `dp`.
    pub name: String,
    /// Ranks in the group.
    pub ranks: u32,
    /// Ranks of the group that share a node (the rest are reached over the inter-node link).
    pub ranks_per_node: u32,
}

/// A tensor: a buffer with a size, written by one node and read by others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tensor {
    /// Name for timelines and errors, e.g. `L3.attn.qkv`.
    pub name: String,
    /// Size in bytes on this rank.
    pub bytes: u64,
    /// The node that writes it; `None` for graph inputs and weights.
    pub producer: Option<NodeIndex>,
    /// Weights and other buffers that live for the whole step: not in the activation ledger.
    pub persistent: bool,
}

/// What a node does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum NodeKind {
    /// A kernel on the compute stream.
    Compute(ComputeWork),
    /// Launch of a collective on `group` moving `bytes` (the per-rank message size in the
    /// NCCL-tests convention: the input size for AllReduce/AllToAll/ReduceScatter, the output
    /// size for AllGather).
    CollectiveStart {
        /// Which collective.
        kind: CollectiveKind,
        /// The group it runs on.
        group: GroupId,
        /// Message size, bytes.
        bytes: u64,
    },
    /// Blocks the compute stream until the collective started by `start` has finished.
    Wait {
        /// The matching [`NodeKind::CollectiveStart`].
        start: NodeIndex,
    },
}

/// One operator of the graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Name, e.g. `L0.fwd.qkv` (layer, direction, op).
    pub name: String,
    /// What it does.
    pub kind: NodeKind,
    /// Tensors it reads.
    pub inputs: Vec<TensorId>,
    /// Tensors it writes.
    pub outputs: Vec<TensorId>,
}

/// A dependency edge: data (a tensor flows) or control (ordering only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Edge {
    /// The target reads a tensor the source writes.
    Data,
    /// The target must wait for the source (e.g. a wait after its collective's start).
    Control,
}

/// An execution graph with its tensors, groups and issue order.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Graph {
    /// The DAG.
    pub dag: StableDiGraph<Node, Edge>,
    /// Every tensor.
    pub tensors: Vec<Tensor>,
    /// Communication groups.
    pub groups: Vec<GroupSpec>,
    /// Issue order of the nodes (a topological order of `dag`).
    pub order: Vec<NodeIndex>,
}

impl Graph {
    /// An empty graph.
    #[must_use]
    pub fn new() -> Graph {
        Graph::default()
    }

    /// Adds a group and returns its id.
    pub fn add_group(&mut self, name: &str, ranks: u32, ranks_per_node: u32) -> GroupId {
        self.groups.push(GroupSpec {
            name: name.into(),
            ranks,
            ranks_per_node,
        });
        self.groups.len() - 1
    }

    /// Adds a graph input or weight (no producer).
    pub fn add_input(&mut self, name: &str, bytes: u64, persistent: bool) -> TensorId {
        self.tensors.push(Tensor {
            name: name.into(),
            bytes,
            producer: None,
            persistent,
        });
        self.tensors.len() - 1
    }

    /// Adds a node reading `inputs` and writing new tensors named and sized by `outputs`;
    /// data edges from the inputs' producers are added, and the node is appended to `order`.
    /// Returns the node and its output tensors.
    pub fn add_node(
        &mut self,
        name: &str,
        kind: NodeKind,
        inputs: &[TensorId],
        outputs: &[(&str, u64)],
    ) -> (NodeIndex, Vec<TensorId>) {
        let index = self.dag.add_node(Node {
            name: name.into(),
            kind,
            inputs: inputs.to_vec(),
            outputs: Vec::new(),
        });
        let mut out = Vec::with_capacity(outputs.len());
        for (tensor_name, bytes) in outputs {
            self.tensors.push(Tensor {
                name: (*tensor_name).into(),
                bytes: *bytes,
                producer: Some(index),
                persistent: false,
            });
            out.push(self.tensors.len() - 1);
        }
        self.dag[index].outputs.clone_from(&out);
        for &t in inputs {
            if let Some(producer) = self.tensors.get(t).and_then(|t| t.producer) {
                if !self.dag.contains_edge(producer, index) {
                    self.dag.add_edge(producer, index, Edge::Data);
                }
            }
        }
        self.order.push(index);
        (index, out)
    }

    /// Adds a compute node; returns its single output tensor.
    pub fn compute(
        &mut self,
        name: &str,
        work: ComputeWork,
        inputs: &[TensorId],
        out_bytes: u64,
    ) -> TensorId {
        let (_, out) = self.add_node(name, NodeKind::Compute(work), inputs, &[(name, out_bytes)]);
        out[0]
    }

    /// Adds a collective start on `group` reading `input` and its wait producing a result of
    /// `out_bytes`, with the wait issued immediately (no overlap; passes move it later).
    /// Returns (start, wait, result tensor).
    pub fn collective(
        &mut self,
        name: &str,
        kind: CollectiveKind,
        group: GroupId,
        bytes: u64,
        input: TensorId,
        out_bytes: u64,
    ) -> (NodeIndex, NodeIndex, TensorId) {
        let (start, _) = self.add_node(
            name,
            NodeKind::CollectiveStart { kind, group, bytes },
            &[input],
            &[],
        );
        let wait_name = alloc::format!("{name}.wait");
        let (wait, out) = self.add_node(
            &wait_name,
            NodeKind::Wait { start },
            &[],
            &[(name, out_bytes)],
        );
        self.dag.add_edge(start, wait, Edge::Control);
        (start, wait, out[0])
    }

    /// Adds a control edge (ordering only).
    pub fn control(&mut self, from: NodeIndex, to: NodeIndex) {
        if !self.dag.contains_edge(from, to) {
            self.dag.add_edge(from, to, Edge::Control);
        }
    }

    /// Number of nodes.
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.dag.node_count()
    }
}
