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
pub mod json;
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
    /// Logical shape in elements, `[sequence, batch, features]` (Megatron's sequence-major
    /// layout), where the builder knows it; passes that split tensors (tiling) need it, the
    /// numeric interpreter reads it. `None` for weights, gradient buckets and imported graphs
    /// that carry no shapes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
}

/// A tensor's shape in elements: `[sequence, batch, features]`.
pub type Shape = [u64; 3];

/// A dimension of a [`Shape`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dim {
    /// Tokens of one sequence (dimension 0).
    Sequence,
    /// Sequences of the micro-batch (dimension 1).
    Batch,
    /// Hidden features (dimension 2).
    Features,
}

impl Dim {
    /// Index into a [`Shape`].
    #[must_use]
    pub fn index(self) -> usize {
        match self {
            Dim::Sequence => 0,
            Dim::Batch => 1,
            Dim::Features => 2,
        }
    }

    /// The id used in JSON (`sequence`, `batch`, `features`).
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Dim::Sequence => "sequence",
            Dim::Batch => "batch",
            Dim::Features => "features",
        }
    }
}

/// What a node computes, for the numeric interpreter (`labs::overlap::interp`) and for the
/// passes that must know whether an op may be split along a dimension. Shapes are
/// `[sequence, batch, features]`; every op acts on each batch index independently.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "op")]
pub enum Op {
    /// `out = x · W` per token, `W` the node's persistent input (features_in × features_out).
    Linear,
    /// Element-wise sum of the inputs (a residual connection).
    Add,
    /// GELU (tanh form, Hendrycks & Gimpel 2016) element-wise.
    Gelu,
    /// SwiGLU (Shazeer 2020): the input's first half of features is the gate `a`, the second
    /// the value `b`; `out = silu(a) · b`.
    SwiGlu,
    /// LayerNorm over each token's features (no affine parameters, ε = 1e-5).
    LayerNorm,
    /// RMSNorm over each token's features (no gain, ε = 1e-5).
    RmsNorm,
    /// Causal softmax attention of each sequence, input `[q | k | v]` features with `heads`
    /// query heads and `kv_heads` key/value heads of `head_dim` (grouped-query attention).
    Attention {
        /// Query heads on this rank.
        heads: u64,
        /// Key/value heads on this rank.
        kv_heads: u64,
        /// Size of one head.
        head_dim: u64,
    },
    /// MoE dispatch: each token repeated `top_k` times along the sequence dimension (a fixed,
    /// data-independent routing: copy j of token s is row s·top_k + j).
    Permute {
        /// Copies per token.
        top_k: u64,
    },
    /// MoE combine: `out[s] = Σ_j softmax(router[s][0..top_k])_j · y[s·top_k + j]`; inputs
    /// `[y, router]`.
    Unpermute {
        /// Copies per token.
        top_k: u64,
    },
    /// Part `index` of `parts` equal parts of the input along `dim` (a view: no kernel).
    Slice {
        /// Split dimension.
        dim: Dim,
        /// Which part.
        index: u64,
        /// How many parts.
        parts: u64,
    },
    /// Concatenation of the inputs along `dim` (a view over buffers allocated together: no
    /// kernel).
    Concat {
        /// Concatenated dimension.
        dim: Dim,
    },
    /// Gradient of the training loss ½‖y‖² with respect to the last layer's output y: y itself
    /// (the backward pass's seed).
    LossGrad,
    /// Weight gradient of a linear: `dW = Σ_tokens xᵀ · dy` over every sequence position and
    /// batch index, inputs `[x, dy]`; a third input is a partial sum to add (the accumulating
    /// tiles of a batch-tiled weight gradient). The output has no `[sequence, batch, features]`
    /// shape: it is features_in × features_out.
    WeightGrad,
    /// Input gradient of a linear: `dx = dy · Wᵀ` per token, `W` the graph input named `weight`
    /// (features_in × features_out, as [`Op::Linear`] reads it).
    InputGrad {
        /// Name of the forward linear's weight tensor.
        weight: String,
    },
    /// Backward of the forward op `of`: the vector-Jacobian product `dx = dy · ∂of/∂x`, inputs
    /// `[x, dy]` (`[y, router, dy]` for [`Op::Unpermute`]; for [`Op::Add`] the gradient of its
    /// first input, which is `dy`). The router's own gradient is not propagated (the builder's
    /// backward carries one gradient per op).
    Grad {
        /// The forward op.
        of: alloc::boxed::Box<Op>,
    },
    /// Concatenation along the sequence of the `p` parts a ring of `group` produced (AsyncTP's
    /// AllGather→GEMM): part i was computed from the shard of the member i hops behind on the
    /// ring, so it lands at position (c − i) mod p, c this rank's coordinate in the group.
    RingConcat {
        /// The ring's group.
        group: GroupId,
    },
    /// `of` ([`Op::Linear`] or [`Op::InputGrad`]) on chunk (c − step − 1) mod p of p equal
    /// sequence chunks of the input, p the size of `group` and c this rank's coordinate in it:
    /// the rows a ring reduce-scatter step adds before passing them on (AsyncTP's
    /// GEMM→ReduceScatter).
    RingChunk {
        /// The ring's group.
        group: GroupId,
        /// The ring step, 0-based.
        step: u64,
        /// The op computed on the chunk.
        of: alloc::boxed::Box<Op>,
    },
}

impl Op {
    /// Whether the op may be split into parts along `dim` with each part computed alone;
    /// `Err` names the reason it may not.
    ///
    /// # Errors
    /// The reason, in words, when the op couples positions along `dim`.
    pub fn splittable(&self, dim: Dim) -> Result<(), &'static str> {
        match (self, dim) {
            (_, Dim::Features) => Err("features are split by tensor parallelism, not by tiling"),
            (_, Dim::Batch) => Ok(()),
            (Op::Grad { of }, _) => of.splittable(dim),
            (
                Op::Linear
                | Op::Add
                | Op::Gelu
                | Op::SwiGlu
                | Op::LayerNorm
                | Op::RmsNorm
                | Op::LossGrad
                | Op::InputGrad { .. }
                | Op::Slice { .. }
                | Op::Concat { .. },
                Dim::Sequence,
            ) => Ok(()),
            (Op::WeightGrad, Dim::Sequence) => {
                Err("a weight gradient sums over every position of the sequence")
            }
            (Op::RingConcat { .. } | Op::RingChunk { .. }, Dim::Sequence) => {
                Err("a ring step's rows depend on the rank's place on the ring")
            }
            (Op::Attention { .. }, Dim::Sequence) => {
                Err("attention reduces over the sequence (each query reads every earlier key)")
            }
            (Op::Permute { .. } | Op::Unpermute { .. }, Dim::Sequence) => {
                Err("MoE routing places token copies along the sequence dimension")
            }
        }
    }
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
    /// What it computes, where known (the interpreter needs it; timing does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<Op>,
    /// Which tile stream it belongs to after tiling (`None`: not tiled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile: Option<TileTag>,
}

/// The place of a node in a tiled graph: tile `stream` of `streams` of the original operator
/// `origin` (nodes with one `origin` are siblings, the candidates of bucketing).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileTag {
    /// Tile stream, 0-based.
    pub stream: u32,
    /// Number of tile streams, K.
    pub streams: u32,
    /// Name of the original (untiled) operator.
    pub origin: String,
    /// Dimension the operator was split along.
    pub dim: Dim,
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

    /// An empty graph with room for `nodes` nodes, `edges` edges and `tensors` tensors (a pass
    /// that rebuilds a graph of known size saves the reallocations).
    #[must_use]
    pub fn with_capacity(nodes: usize, edges: usize, tensors: usize) -> Graph {
        Graph {
            dag: StableDiGraph::with_capacity(nodes, edges),
            tensors: Vec::with_capacity(tensors),
            groups: Vec::new(),
            order: Vec::with_capacity(nodes),
        }
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
            shape: None,
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
            op: None,
            tile: None,
        });
        let mut out = Vec::with_capacity(outputs.len());
        for (tensor_name, bytes) in outputs {
            self.tensors.push(Tensor {
                name: (*tensor_name).into(),
                bytes: *bytes,
                producer: Some(index),
                persistent: false,
                shape: None,
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

    /// Adds a copy of `node` (of another graph) with `kind`, reading `inputs` (tensors of this
    /// graph) and writing copies (name, size, shape) of `outputs`; like [`Graph::add_node`],
    /// data edges from the inputs' producers are added and the node is appended to `order`.
    /// For passes that rebuild a graph node by node, without intermediate allocations.
    pub fn add_copy<'t>(
        &mut self,
        node: &Node,
        kind: NodeKind,
        inputs: Vec<TensorId>,
        outputs: impl ExactSizeIterator<Item = &'t Tensor>,
    ) -> NodeIndex {
        let first = self.tensors.len();
        let index = self.dag.add_node(Node {
            name: node.name.clone(),
            kind,
            inputs,
            outputs: (first..first + outputs.len()).collect(),
            op: node.op.clone(),
            tile: node.tile.clone(),
        });
        for t in outputs {
            self.tensors.push(Tensor {
                name: t.name.clone(),
                bytes: t.bytes,
                producer: Some(index),
                persistent: false,
                shape: t.shape,
            });
        }
        for i in 0..self.dag[index].inputs.len() {
            let t = self.dag[index].inputs[i];
            if let Some(producer) = self.tensors.get(t).and_then(|t| t.producer) {
                if !self.dag.contains_edge(producer, index) {
                    self.dag.add_edge(producer, index, Edge::Data);
                }
            }
        }
        self.order.push(index);
        index
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
