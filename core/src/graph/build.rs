//! Builders: the per-rank execution graph of transformer layers of real models, forward and
//! backward, under any combination of tensor parallelism (Megatron column/row split with
//! AllReduce, or with sequence parallelism AllGather/ReduceScatter), context parallelism
//! (Ulysses AllToAll, or ring attention P2P), expert parallelism (dispatch/combine AllToAll) and
//! data parallelism (gradient AllReduce or ReduceScatter per bucket).
//!
//! The graph is the *serial* schedule: every TP/CP/EP collective is waited for right after it
//! starts. Data-parallel gradient collectives start as buckets fill during the backward and are
//! waited for at the end of the step (as PyTorch DDP and Megatron do), and ring attention sends
//! the next KV block while it computes on the current one (the algorithm itself overlaps).
//! By default the graph covers the transformer layers of one pipeline stage; with
//! [`Workload::whole_step`] it is the whole step: the vocabulary-parallel embedding, the layers,
//! the final norm, LM head and vocabulary-parallel cross-entropy, the backward and the optimizer
//! step after the data-parallel gradients (Megatron-LM's `VocabParallelEmbedding`,
//! `vocab_parallel_cross_entropy`; ZeRO's mixed-precision Adam accounting).
//!
//! Shapes follow Megatron-LM (Shoeybi et al. 2019; Korthikanti et al. 2022 for sequence
//! parallelism), DeepSpeed-Ulysses (Jacobs et al. 2023), ring attention (Liu et al. 2023) and
//! GShard-style expert parallelism (Lepikhin et al. 2020). Model sizes are the published ones.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;
use serde::{Deserialize, Serialize};

use super::{Graph, GroupId, NodeKind, Op, Shape, TensorId};
use crate::cost::{attention_flops, gemm_flops, CollectiveKind, ComputeKind, ComputeWork};

/// The feed-forward block of a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mlp {
    /// Two GEMMs with GELU between (GPT-3).
    Gelu,
    /// Gate and up projections, SiLU-gated, then down (LLaMA, Qwen).
    SwiGlu,
}

/// Mixture-of-experts layer shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moe {
    /// Routed experts per layer.
    pub experts: u64,
    /// Experts each token is routed to.
    pub top_k: u64,
    /// Intermediate size of one expert.
    pub expert_ffn: u64,
}

/// A transformer model's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Hidden size h.
    pub hidden: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads (fewer than `heads` with grouped-query attention).
    pub kv_heads: u64,
    /// Size of one head.
    pub head_dim: u64,
    /// Intermediate size of the dense MLP.
    pub ffn: u64,
    /// Transformer layers of the whole model.
    pub layers: u64,
    /// Vocabulary size of the tokenizer (the embedding's and LM head's rows; 0 if unknown,
    /// which allows only [`Workload::whole_step`] `false`).
    #[serde(default)]
    pub vocab: u64,
    /// MLP kind.
    pub mlp: Mlp,
    /// Expert layer, if the MLP is a mixture of experts.
    pub moe: Option<Moe>,
}

crate::kinds! {
    /// The models the builders know, with their published shapes.
    pub enum ModelKind as "model" {
        /// GPT-3 6.7B "Curie" (Brown et al. 2020, Table 2.1): 32 layers, h 4096, 32 heads of 128;
        /// GPT-2's byte-level BPE of 50,257 tokens (§2.1 and Radford et al. 2019).
        Gpt3Curie = "gpt3-6.7b", "GPT-3 6.7B (Curie)";
        /// GPT-3 175B (Brown et al. 2020): 96 layers, h 12288, 96 heads of 128.
        Gpt3_175b = "gpt3-175b", "GPT-3 175B";
        /// LLaMA-3 8B (Meta 2024): 32 layers, h 4096, 32 query / 8 KV heads, SwiGLU 14336;
        /// vocabulary 128,256 (LLaMA-3 70B the same).
        Llama3_8b = "llama3-8b", "LLaMA-3 8B";
        /// LLaMA-3 70B (Meta 2024): 80 layers, h 8192, 64 query / 8 KV heads, SwiGLU 28672.
        Llama3_70b = "llama3-70b", "LLaMA-3 70B";
        /// Qwen3-30B-A3B (Qwen team 2025): 48 layers, h 2048, 32 query / 4 KV heads of 128,
        /// 128 experts, top-8, expert size 768; vocabulary 151,936.
        Qwen3Moe = "qwen3-30b-a3b", "Qwen3-30B-A3B (MoE)";
    }
}

impl ModelKind {
    /// The model's shape.
    #[must_use]
    pub fn spec(self) -> ModelSpec {
        match self {
            ModelKind::Gpt3Curie => ModelSpec {
                hidden: 4096,
                heads: 32,
                kv_heads: 32,
                head_dim: 128,
                ffn: 16384,
                layers: 32,
                vocab: 50257,
                mlp: Mlp::Gelu,
                moe: None,
            },
            ModelKind::Gpt3_175b => ModelSpec {
                hidden: 12288,
                heads: 96,
                kv_heads: 96,
                head_dim: 128,
                ffn: 49152,
                layers: 96,
                vocab: 50257,
                mlp: Mlp::Gelu,
                moe: None,
            },
            ModelKind::Llama3_8b => ModelSpec {
                hidden: 4096,
                heads: 32,
                kv_heads: 8,
                head_dim: 128,
                ffn: 14336,
                layers: 32,
                vocab: 128_256,
                mlp: Mlp::SwiGlu,
                moe: None,
            },
            ModelKind::Llama3_70b => ModelSpec {
                hidden: 8192,
                heads: 64,
                kv_heads: 8,
                head_dim: 128,
                ffn: 28672,
                layers: 80,
                vocab: 128_256,
                mlp: Mlp::SwiGlu,
                moe: None,
            },
            ModelKind::Qwen3Moe => ModelSpec {
                hidden: 2048,
                heads: 32,
                kv_heads: 4,
                head_dim: 128,
                ffn: 6144,
                layers: 48,
                vocab: 151_936,
                mlp: Mlp::SwiGlu,
                moe: Some(Moe {
                    experts: 128,
                    top_k: 8,
                    expert_ffn: 768,
                }),
            },
        }
    }
}

crate::kinds! {
    /// How context parallelism splits attention.
    pub enum ContextParallel as "context parallelism" {
        /// DeepSpeed-Ulysses: AllToAll from sequence-sharded to head-sharded and back.
        Ulysses = "ulysses", "Ulysses (AllToAll)";
        /// Ring attention: KV blocks travel around the ring by P2P while attention runs.
        Ring = "ring", "ring attention (P2P)";
    }
}

crate::kinds! {
    /// How data-parallel gradients are reduced.
    pub enum DataParallel as "data parallelism" {
        /// Plain DDP: AllReduce per bucket.
        AllReduce = "all-reduce", "AllReduce (DDP)";
        /// ZeRO/FSDP-style: ReduceScatter per bucket.
        ReduceScatter = "reduce-scatter", "ReduceScatter (ZeRO/FSDP)";
    }
}

/// Degrees of parallelism and their placement. Groups are laid out innermost first:
/// TP, then CP, then EP, then DP, filling nodes of `gpus_per_node` GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Parallelism {
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Sequence parallelism inside the TP group (AllGather/ReduceScatter instead of AllReduce).
    pub sp: bool,
    /// Context-parallel degree.
    pub cp: u32,
    /// How context parallelism works.
    pub cp_kind: ContextParallel,
    /// Expert-parallel degree (MoE models only).
    pub ep: u32,
    /// Data-parallel degree.
    pub dp: u32,
    /// How data-parallel gradients are reduced.
    pub dp_kind: DataParallel,
    /// Gradient bucket size, bytes (PyTorch DDP's default is 25 MiB).
    pub dp_bucket_bytes: u64,
    /// GPUs per node.
    pub gpus_per_node: u32,
}

impl Default for Parallelism {
    fn default() -> Self {
        Parallelism {
            tp: 1,
            sp: false,
            cp: 1,
            cp_kind: ContextParallel::Ulysses,
            ep: 1,
            dp: 1,
            dp_kind: DataParallel::AllReduce,
            dp_bucket_bytes: 25 << 20,
            gpus_per_node: 8,
        }
    }
}

/// What to build: how many layers, which micro-batch, which passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// Layers to build (one pipeline stage's worth).
    pub layers: u32,
    /// Sequences per micro-batch.
    pub micro_batch: u64,
    /// Tokens per sequence.
    pub seq_len: u64,
    /// Build the backward pass (training) or only the forward (inference prefill).
    pub backward: bool,
    /// Bytes per element of activations and weights (2 for bf16).
    pub dtype_bytes: u64,
    /// Build the whole step around the layers: the vocabulary-parallel embedding before them;
    /// the final norm, LM head and vocabulary-parallel cross-entropy after them (in a forward-only
    /// prefill the head runs on each sequence's last position only); in training, the optimizer
    /// step once the data-parallel gradients have arrived. `false` builds the layers alone.
    pub whole_step: bool,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            layers: 1,
            micro_batch: 1,
            seq_len: 2048,
            backward: true,
            dtype_bytes: 2,
            whole_step: false,
        }
    }
}

/// Why a model cannot be built with a layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// The field, e.g. `tp`.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

impl core::fmt::Display for BuildError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Checks that the layout divides the model.
///
/// # Errors
/// A [`BuildError`] naming the degree that does not fit.
pub fn check(model: &ModelSpec, par: &Parallelism, work: &Workload) -> Result<(), BuildError> {
    let e = |field, message: String| Err(BuildError { field, message });
    for (field, v) in [
        ("tp", par.tp),
        ("cp", par.cp),
        ("ep", par.ep),
        ("dp", par.dp),
        ("gpus_per_node", par.gpus_per_node),
    ] {
        if v == 0 || v > 4096 {
            return e(field, format!("must be between 1 and 4096, got {v}"));
        }
    }
    let tp = u64::from(par.tp);
    if !model.heads.is_multiple_of(tp) {
        return e(
            "tp",
            format!("must divide the {} attention heads, got {tp}", model.heads),
        );
    }
    if par.cp_kind == ContextParallel::Ulysses
        && !(model.heads / tp).is_multiple_of(u64::from(par.cp))
    {
        return e(
            "cp",
            format!(
                "Ulysses needs cp to divide the {} heads per TP rank, got {}",
                model.heads / tp,
                par.cp
            ),
        );
    }
    if !work.seq_len.is_multiple_of(u64::from(par.cp))
        || (par.sp && !(work.seq_len / u64::from(par.cp)).is_multiple_of(tp))
    {
        return e(
            "seq_len",
            format!(
                "{} tokens do not split evenly over cp={} (and tp={} with sequence parallelism)",
                work.seq_len, par.cp, par.tp
            ),
        );
    }
    match model.moe {
        Some(moe) if moe.experts % u64::from(par.ep) != 0 => {
            return e(
                "ep",
                format!("must divide the {} experts, got {}", moe.experts, par.ep),
            );
        }
        None if par.ep > 1 => {
            return e(
                "ep",
                format!("the model has no experts, so ep must be 1, got {}", par.ep),
            )
        }
        _ => {}
    }
    if work.whole_step && model.vocab == 0 {
        return e(
            "workload",
            "a whole step needs the model's vocabulary (vocab > 0)".into(),
        );
    }
    if work.layers == 0
        || work.layers > 256
        || work.micro_batch == 0
        || work.micro_batch > 1024
        || work.seq_len == 0
        || work.seq_len > 4 << 20
    {
        return e(
            "workload",
            format!(
                "needs 1–256 layers, 1–1024 sequences and 1–4Mi tokens, got {} / {} / {}",
                work.layers, work.micro_batch, work.seq_len
            ),
        );
    }
    Ok(())
}

/// Ranks per node of a group of `ranks` whose inner groups hold `inner` ranks.
fn per_node(ranks: u32, inner: u32, gpus_per_node: u32) -> u32 {
    (gpus_per_node / inner.max(1)).clamp(1, ranks.max(1))
}

/// One forward op recorded for the backward pass.
enum Tape {
    /// Megatron's `copy_to_tensor_model_parallel_region` before the LM head without sequence
    /// parallelism: nothing in the forward, an AllReduce of the input gradient in the backward.
    GradAllReduce {
        name: String,
        group: GroupId,
        bytes: u64,
    },
    /// A GEMM `out = x · w`: backward runs dgrad (into x's gradient) and wgrad.
    Gemm {
        name: String,
        flops: f64,
        x: TensorId,
        w: TensorId,
        x_bytes: u64,
        w_bytes: u64,
    },
    /// A memory-bound op over `bytes` writing `out`; its backward reads `x` (and `also`, a
    /// second forward tensor the gradient needs, e.g. the router of an MoE combine).
    Pointwise {
        name: String,
        bytes: u64,
        x: TensorId,
        also: Option<TensorId>,
        out: TensorId,
        x_bytes: u64,
    },
    /// Attention core writing `out`.
    Attention {
        name: String,
        flops: f64,
        bytes: u64,
        qkv: TensorId,
        out: TensorId,
        x_bytes: u64,
    },
    /// A collective whose backward is `back` on the same group.
    Collective {
        name: String,
        in_shape: Option<Shape>,
        back: CollectiveKind,
        group: GroupId,
        in_bytes: u64,
        out_bytes: u64,
    },
}

struct Builder<'a> {
    g: Graph,
    tape: Vec<Tape>,
    dtype: u64,
    grads_pending: u64,
    dp_starts: Vec<(NodeIndex, u64)>,
    par: &'a Parallelism,
    dp: GroupId,
    /// The TP group and the residual stream's bytes on this rank: sharded (with sequence
    /// parallelism) and gathered.
    tp: GroupId,
    resid_bytes: u64,
    full_bytes: u64,
    /// Sequences per micro-batch (the batch dimension of every activation's shape).
    micro_batch: u64,
    /// Bytes of the weights on this rank (what the optimizer updates).
    weight_bytes: u64,
}

impl Builder<'_> {
    /// Shape of an activation of `rows` tokens (micro-batch × sequence positions) and `cols`
    /// features, sequence-major.
    fn shape(&self, rows: u64, cols: u64) -> Shape {
        let b = self.micro_batch.max(1);
        [rows / b, b, cols]
    }

    /// Records the op of `t`'s producer and `t`'s shape.
    fn annotate(&mut self, t: TensorId, op: Option<Op>, shape: Option<Shape>) {
        if let Some(tensor) = self.g.tensors.get_mut(t) {
            tensor.shape = shape;
            if let Some(p) = tensor.producer {
                self.g.dag[p].op = op;
            }
        }
    }

    fn shape_of(&self, t: TensorId) -> Option<Shape> {
        self.g.tensors.get(t).and_then(|t| t.shape)
    }

    /// The backward op of the forward op that wrote `t` (`None` where it has no semantics).
    fn forward_op(&self, t: TensorId) -> Option<Op> {
        let producer = self.g.tensors.get(t)?.producer?;
        let of = self.g.dag[producer].op.clone()?;
        Some(Op::Grad {
            of: alloc::boxed::Box::new(of),
        })
    }

    fn gemm(&mut self, name: &str, x: TensorId, rows: u64, k: u64, n: u64) -> TensorId {
        let flops = gemm_flops(rows as f64, n as f64, k as f64);
        let (x_bytes, w_bytes, out_bytes) = (
            rows * k * self.dtype,
            k * n * self.dtype,
            rows * n * self.dtype,
        );
        let w = self.g.add_input(&format!("{name}.weight"), w_bytes, true);
        self.weight_bytes += w_bytes;
        let bytes = (x_bytes + w_bytes + out_bytes) as f64;
        let out = self.g.compute(
            name,
            ComputeWork {
                kind: ComputeKind::Gemm,
                flops,
                bytes,
            },
            &[x, w],
            out_bytes,
        );
        let shape = self.shape(rows, n);
        self.annotate(out, Some(Op::Linear), Some(shape));
        self.tape.push(Tape::Gemm {
            name: name.into(),
            flops,
            x,
            w,
            x_bytes,
            w_bytes,
        });
        out
    }

    fn pointwise(
        &mut self,
        name: &str,
        inputs: &[TensorId],
        in_bytes: u64,
        out_bytes: u64,
    ) -> TensorId {
        let bytes = in_bytes + out_bytes;
        let work = ComputeWork {
            kind: ComputeKind::MemoryBound,
            flops: (out_bytes / self.dtype) as f64 * 8.0,
            bytes: bytes as f64,
        };
        let out = self.g.compute(name, work, inputs, out_bytes);
        self.tape.push(Tape::Pointwise {
            name: name.into(),
            bytes,
            x: inputs[0],
            also: None,
            out,
            x_bytes: in_bytes,
        });
        out
    }

    fn collective(
        &mut self,
        name: &str,
        (kind, back): (CollectiveKind, CollectiveKind),
        group: GroupId,
        x: TensorId,
        in_bytes: u64,
        out_bytes: u64,
    ) -> TensorId {
        if self.g.groups[group].ranks == 1 {
            return x;
        }
        let message = if kind == CollectiveKind::AllGather {
            out_bytes
        } else {
            in_bytes
        };
        let (_, _, out) = self.g.collective(name, kind, group, message, x, out_bytes);
        // Sequence-major shapes: AllGather concatenates shards along the sequence,
        // ReduceScatter splits it; an AllToAll keeps the shape (expert dispatch) unless the byte
        // count says otherwise (Ulysses: the builder sets that shape itself).
        let in_shape = self.shape_of(x);
        let p = u64::from(self.g.groups[group].ranks);
        let out_shape = in_shape.map(|[s, b, c]| match kind {
            CollectiveKind::AllGather => [s * p, b, c],
            CollectiveKind::ReduceScatter => [s / p, b, c],
            _ => [s, b, c],
        });
        self.annotate(out, None, out_shape);
        self.tape.push(Tape::Collective {
            name: name.into(),
            in_shape,
            back,
            group,
            in_bytes,
            out_bytes,
        });
        out
    }

    /// Enters a tensor-parallel region: with sequence parallelism, AllGather the sharded
    /// residual stream (backward: ReduceScatter); without it, the stream is already whole.
    fn tp_enter(&mut self, name: &str, x: TensorId) -> TensorId {
        if !self.par.sp {
            return x;
        }
        let (tp, resid, full) = (self.tp, self.resid_bytes, self.full_bytes);
        self.collective(
            name,
            (CollectiveKind::AllGather, CollectiveKind::ReduceScatter),
            tp,
            x,
            resid,
            full,
        )
    }

    /// Leaves a tensor-parallel region after a row-parallel GEMM: ReduceScatter back to the
    /// shard with sequence parallelism (backward: AllGather), AllReduce without.
    fn tp_exit(&mut self, sp_name: &str, ar_name: &str, x: TensorId) -> TensorId {
        let (tp, resid, full) = (self.tp, self.resid_bytes, self.full_bytes);
        if self.par.sp {
            self.collective(
                sp_name,
                (CollectiveKind::ReduceScatter, CollectiveKind::AllGather),
                tp,
                x,
                full,
                resid,
            )
        } else {
            self.collective(
                ar_name,
                (CollectiveKind::AllReduce, CollectiveKind::AllReduce),
                tp,
                x,
                full,
                full,
            )
        }
    }

    /// Records `bytes` of weight gradient; starts a DP collective when a bucket fills.
    fn grad(&mut self, name: &str, bytes: u64, force: bool) {
        self.grads_pending += bytes;
        if self.g.groups[self.dp].ranks == 1 || self.grads_pending == 0 {
            self.grads_pending = 0;
            return;
        }
        if self.grads_pending >= self.par.dp_bucket_bytes || force {
            let bucket = self.grads_pending;
            self.grads_pending = 0;
            let grad = self
                .g
                .add_input(&format!("{name}.grad_bucket"), bucket, true);
            let kind = match self.par.dp_kind {
                DataParallel::AllReduce => CollectiveKind::AllReduce,
                DataParallel::ReduceScatter => CollectiveKind::ReduceScatter,
            };
            let (start, _) = self.g.add_node(
                &format!("{name}.dp_{}", self.dp_starts.len()),
                NodeKind::CollectiveStart {
                    kind,
                    group: self.dp,
                    bytes: bucket,
                },
                &[grad],
                &[],
            );
            // Gradients exist only once this layer's backward has produced them.
            if let Some(&last) = self
                .g
                .order
                .iter()
                .rev()
                .find(|&&n| matches!(self.g.dag[n].kind, NodeKind::Compute(_)))
            {
                self.g.control(last, start);
            }
            self.dp_starts.push((start, bucket));
        }
    }
}

/// Builds the per-rank graph of `work.layers` layers of `model` under `par`.
///
/// # Errors
/// A [`BuildError`] when the layout does not divide the model.
#[allow(clippy::too_many_lines)] // one transformer layer's ops in the order the model issues them
pub fn build(model: &ModelSpec, par: &Parallelism, work: &Workload) -> Result<Graph, BuildError> {
    check(model, par, work)?;
    let mut g = Graph::new();
    let (tp, cp, ep, dp) = (par.tp, par.cp, par.ep, par.dp);
    let tp_group = g.add_group("tp", tp, per_node(tp, 1, par.gpus_per_node));
    let cp_group = g.add_group("cp", cp, per_node(cp, tp, par.gpus_per_node));
    let ep_group = g.add_group("ep", ep, per_node(ep, tp * cp, par.gpus_per_node));
    let dp_group = g.add_group("dp", dp, per_node(dp, tp * cp * ep, par.gpus_per_node));
    let mut b = Builder {
        g,
        tape: Vec::new(),
        dtype: work.dtype_bytes,
        grads_pending: 0,
        dp_starts: Vec::new(),
        par,
        dp: dp_group,
        tp: tp_group,
        resid_bytes: 0,
        full_bytes: 0,
        micro_batch: work.micro_batch,
        weight_bytes: 0,
    };

    let t = u64::from(tp);
    let h = model.hidden;
    let d = model.head_dim;
    let heads = model.heads / t;
    let kv = (model.kv_heads / t).max(1);
    let seq_local = work.seq_len / u64::from(cp);
    let tokens = work.micro_batch * seq_local;
    let shard = if par.sp { tokens / t } else { tokens };
    let e = work.dtype_bytes;
    let resid_bytes = shard * h * e;
    let full_bytes = tokens * h * e;
    b.resid_bytes = resid_bytes;
    b.full_bytes = full_bytes;
    let vocab_local = padded_vocab(model.vocab, t) / t;
    let (mut x, embedding) = if work.whole_step {
        let (ids, table, x) = embed(&mut b, tokens, h, vocab_local);
        (x, Some((ids, table)))
    } else {
        let x = b.g.add_input("input", resid_bytes, false);
        b.g.tensors[x].shape = Some(b.shape(shard, h));
        (x, None)
    };

    for layer in 0..work.layers {
        let p = |op: &str| format!("L{layer}.{op}");
        // Attention block.
        let norm = if model.mlp == Mlp::Gelu {
            Op::LayerNorm
        } else {
            Op::RmsNorm
        };
        let n1 = b.pointwise(&p("norm1"), &[x], resid_bytes, resid_bytes);
        let x_shape = b.shape_of(x);
        b.annotate(n1, Some(norm.clone()), x_shape);
        let n1 = b.tp_enter(&p("sp_allgather1"), n1);
        let qkv_cols = (heads + 2 * kv) * d;
        let mut qkv = b.gemm(&p("qkv"), n1, tokens, h, qkv_cols);
        let qkv_bytes = tokens * qkv_cols * e;
        let out_cols = heads * d;
        let attn_out_bytes = tokens * out_cols * e;
        let attn = match (cp, par.cp_kind) {
            (1, _) => {
                let flops = attention_flops(
                    work.micro_batch as f64,
                    heads as f64,
                    work.seq_len as f64,
                    work.seq_len as f64,
                    d as f64,
                    true,
                );
                let o = attention(
                    &mut b,
                    &p("attention"),
                    qkv,
                    flops,
                    qkv_bytes,
                    attn_out_bytes,
                );
                let shape = b.shape(tokens, out_cols);
                b.annotate(
                    o,
                    Some(Op::Attention {
                        heads,
                        kv_heads: kv,
                        head_dim: d,
                    }),
                    Some(shape),
                );
                o
            }
            (_, ContextParallel::Ulysses) => {
                qkv = b.collective(
                    &p("cp_alltoall_qkv"),
                    (CollectiveKind::AllToAll, CollectiveKind::AllToAll),
                    cp_group,
                    qkv,
                    qkv_bytes,
                    qkv_bytes,
                );
                // Sequence-sharded to head-sharded: the whole sequence, 1/cp of the features.
                let c = u64::from(cp);
                let shape = b.shape(tokens * c, qkv_cols / c);
                b.annotate(qkv, None, Some(shape));
                let flops = attention_flops(
                    work.micro_batch as f64,
                    (heads / u64::from(cp)) as f64,
                    work.seq_len as f64,
                    work.seq_len as f64,
                    d as f64,
                    true,
                );
                let o = attention(
                    &mut b,
                    &p("attention"),
                    qkv,
                    flops,
                    qkv_bytes,
                    attn_out_bytes,
                );
                let c = u64::from(cp);
                let shape = b.shape(tokens * c, out_cols / c);
                // The QKV GEMM's columns are laid out head group by head group
                // ([q_j | k_j | v_j] for each CP rank j), so the AllToAll's feature chunk j is
                // rank j's heads; without whole KV heads per rank there are no op semantics.
                let op = kv.is_multiple_of(c).then_some(Op::Attention {
                    heads: heads / c,
                    kv_heads: kv / c,
                    head_dim: d,
                });
                b.annotate(o, op, Some(shape));
                let back = b.collective(
                    &p("cp_alltoall_out"),
                    (CollectiveKind::AllToAll, CollectiveKind::AllToAll),
                    cp_group,
                    o,
                    attn_out_bytes,
                    attn_out_bytes,
                );
                let shape = b.shape(tokens, out_cols);
                b.annotate(back, None, Some(shape));
                back
            }
            (_, ContextParallel::Ring) => {
                // cp steps: attend to the local KV block while the next one arrives.
                let kv_bytes = tokens * 2 * kv * d * e;
                let total = attention_flops(
                    work.micro_batch as f64,
                    heads as f64,
                    seq_local as f64,
                    work.seq_len as f64,
                    d as f64,
                    true,
                );
                let mut kv_block = b.pointwise(&p("kv_pack"), &[qkv], qkv_bytes, kv_bytes);
                let mut partial = qkv;
                for step in 0..cp {
                    let next = if step + 1 < cp {
                        let (start, _) = b.g.add_node(
                            &p(&format!("ring_send{step}")),
                            NodeKind::CollectiveStart {
                                kind: CollectiveKind::SendRecv,
                                group: cp_group,
                                bytes: kv_bytes,
                            },
                            &[kv_block],
                            &[],
                        );
                        Some(start)
                    } else {
                        None
                    };
                    partial = attention(
                        &mut b,
                        &p(&format!("attention{step}")),
                        partial,
                        total / f64::from(cp),
                        qkv_bytes,
                        attn_out_bytes,
                    );
                    if let Some(start) = next {
                        let (wait, out) = b.g.add_node(
                            &p(&format!("ring_send{step}.wait")),
                            NodeKind::Wait { start },
                            &[],
                            &[(&p(&format!("kv{step}")), kv_bytes)],
                        );
                        b.g.control(start, wait);
                        b.tape.push(Tape::Collective {
                            name: p(&format!("ring_send{step}")),
                            in_shape: None,
                            back: CollectiveKind::SendRecv,
                            group: cp_group,
                            in_bytes: kv_bytes,
                            out_bytes: kv_bytes,
                        });
                        kv_block = out[0];
                        partial = b.pointwise(
                            &p(&format!("attn_merge{step}")),
                            &[partial, kv_block],
                            attn_out_bytes,
                            attn_out_bytes,
                        );
                    }
                }
                partial
            }
        };
        let proj = b.gemm(&p("attn_out"), attn, tokens, out_cols, h);
        let reduced = b.tp_exit(&p("sp_reducescatter1"), &p("tp_allreduce1"), proj);
        x = b.pointwise(&p("residual1"), &[reduced, x], resid_bytes, resid_bytes);
        b.annotate(x, Some(Op::Add), x_shape);

        // MLP block.
        let n2 = b.pointwise(&p("norm2"), &[x], resid_bytes, resid_bytes);
        b.annotate(n2, Some(norm), x_shape);
        let n2 = b.tp_enter(&p("sp_allgather2"), n2);
        let mlp_out = match model.moe {
            None => {
                let ffn = model.ffn / t;
                let up_cols = if model.mlp == Mlp::SwiGlu {
                    2 * ffn
                } else {
                    ffn
                };
                let up = b.gemm(&p("fc1"), n2, tokens, h, up_cols);
                let act = b.pointwise(&p("act"), &[up], tokens * up_cols * e, tokens * ffn * e);
                let op = if model.mlp == Mlp::SwiGlu {
                    Op::SwiGlu
                } else {
                    Op::Gelu
                };
                let shape = b.shape(tokens, ffn);
                b.annotate(act, Some(op), Some(shape));
                b.gemm(&p("fc2"), act, tokens, ffn, h)
            }
            Some(moe) => {
                let router = b.gemm(&p("router"), n2, tokens, h, moe.experts);
                let routed = tokens * moe.top_k;
                let routed_bytes = routed * h * e;
                let permuted = b.pointwise(&p("permute"), &[n2, router], full_bytes, routed_bytes);
                let shape = b.shape(routed, h);
                b.annotate(
                    permuted,
                    Some(Op::Permute { top_k: moe.top_k }),
                    Some(shape),
                );
                let dispatched = b.collective(
                    &p("ep_dispatch"),
                    (CollectiveKind::AllToAll, CollectiveKind::AllToAll),
                    ep_group,
                    permuted,
                    routed_bytes,
                    routed_bytes,
                );
                let ffn = moe.expert_ffn / t;
                let up = b.gemm(&p("experts_up"), dispatched, routed, h, 2 * ffn);
                let act = b.pointwise(
                    &p("experts_act"),
                    &[up],
                    routed * 2 * ffn * e,
                    routed * ffn * e,
                );
                let shape = b.shape(routed, ffn);
                b.annotate(act, Some(Op::SwiGlu), Some(shape));
                let down = b.gemm(&p("experts_down"), act, routed, ffn, h);
                let combined = b.collective(
                    &p("ep_combine"),
                    (CollectiveKind::AllToAll, CollectiveKind::AllToAll),
                    ep_group,
                    down,
                    routed_bytes,
                    routed_bytes,
                );
                let out = b.pointwise(
                    &p("unpermute"),
                    &[combined, router],
                    routed_bytes,
                    full_bytes,
                );
                let shape = b.shape(tokens, h);
                b.annotate(out, Some(Op::Unpermute { top_k: moe.top_k }), Some(shape));
                // Its backward scales each copy's gradient by the router's gate.
                if let Some(Tape::Pointwise { also, .. }) = b.tape.last_mut() {
                    *also = Some(router);
                }
                out
            }
        };
        let reduced = b.tp_exit(&p("sp_reducescatter2"), &p("tp_allreduce2"), mlp_out);
        x = b.pointwise(&p("residual2"), &[reduced, x], resid_bytes, resid_bytes);
        b.annotate(x, Some(Op::Add), x_shape);
    }

    let seed = if work.whole_step {
        let norm = if model.mlp == Mlp::Gelu {
            Op::LayerNorm
        } else {
            Op::RmsNorm
        };
        let x_shape = b.shape_of(x);
        let nf = b.pointwise("final_norm", &[x], resid_bytes, resid_bytes);
        b.annotate(nf, Some(norm), x_shape);
        head(&mut b, nf, tokens, h, vocab_local, work)
    } else {
        x
    };
    if work.backward {
        backward(&mut b, seed, embedding, work.whole_step);
    }
    Ok(b.g)
}

/// The vocabulary Megatron-LM pads to: a multiple of 128 × TP (`_vocab_size_with_padding`,
/// `--make-vocab-size-divisible-by 128`), so every TP rank holds the same number of rows.
fn padded_vocab(vocab: u64, tp: u64) -> u64 {
    let m = 128 * tp.max(1);
    vocab.div_ceil(m) * m
}

/// Megatron's `VocabParallelEmbedding`: each TP rank looks the micro-batch's tokens up in its
/// `vocab_local` rows (zeros for the others), then the partial embeddings are summed: a
/// ReduceScatter to the sequence shard with sequence parallelism (backward: AllGather of the
/// gradient), an AllReduce without (backward: none; the token ids need no gradient). Returns
/// the token ids, the table and the residual stream.
fn embed(
    b: &mut Builder<'_>,
    tokens: u64,
    h: u64,
    vocab_local: u64,
) -> (TensorId, TensorId, TensorId) {
    let e = b.dtype;
    let ids = b.g.add_input("token_ids", tokens * 4, false);
    b.g.tensors[ids].shape = Some(b.shape(tokens, 1));
    let table_bytes = vocab_local * h * e;
    let table = b.g.add_input("embedding.weight", table_bytes, true);
    b.weight_bytes += table_bytes;
    let full = tokens * h * e;
    let out = b.g.compute(
        "embedding",
        ComputeWork {
            kind: ComputeKind::MemoryBound,
            flops: 0.0,
            bytes: (tokens * 4 + 2 * full) as f64,
        },
        &[ids, table],
        full,
    );
    b.g.tensors[out].shape = Some(b.shape(tokens, h));
    let (tp, resid) = (b.tp, b.resid_bytes);
    let x = if b.par.sp {
        b.collective(
            "embedding_reducescatter",
            (CollectiveKind::ReduceScatter, CollectiveKind::AllGather),
            tp,
            out,
            full,
            resid,
        )
    } else if b.g.groups[tp].ranks > 1 {
        let (_, _, x) = b.g.collective(
            "embedding_allreduce",
            CollectiveKind::AllReduce,
            tp,
            full,
            out,
            full,
        );
        b.g.tensors[x].shape = Some(b.shape(tokens, h));
        x
    } else {
        out
    };
    (ids, table, x)
}

/// The LM head after the final norm `nf` and the loss: returns the backward's seed (the
/// logits' gradient) in training, the logits in a prefill.
///
/// Training: the column-parallel head GEMM over `vocab_local` rows (with sequence
/// parallelism after an AllGather of the norm's output), then Megatron's vocabulary-parallel
/// cross-entropy, fused as in `megatron/core/fusions/fused_cross_entropy.py` (the unfused
/// `tensor_parallel/cross_entropy.py` AllReduces the two sums separately): each rank's per-token
/// maximum logit, an AllReduce (max) of it, the rank's sum of exponentials and target logit,
/// one AllReduce of both (fp32), the loss; its backward is softmax − one-hot on the rank's
/// logits, with no collective. A prefill runs the head on each sequence's last position only
/// (as serving engines do: only the next token is sampled).
fn head(
    b: &mut Builder<'_>,
    nf: TensorId,
    tokens: u64,
    h: u64,
    vocab_local: u64,
    work: &Workload,
) -> TensorId {
    let e = b.dtype;
    let nf = b.tp_enter("head_allgather", nf);
    let tp = b.tp;
    let ranks = b.g.groups[tp].ranks;
    if !work.backward {
        let rows = work.micro_batch;
        let last = b.pointwise("last_positions", &[nf], rows * h * e, rows * h * e);
        b.g.tensors[last].shape = Some([1, rows, h]);
        let logits = b.gemm("head", last, rows, h, vocab_local);
        b.g.tensors[logits].shape = Some([1, rows, vocab_local]);
        return logits;
    }
    if !b.par.sp && ranks > 1 {
        let bytes = b.full_bytes;
        b.tape.push(Tape::GradAllReduce {
            name: "head_input_grad_allreduce".into(),
            group: tp,
            bytes,
        });
    }
    let logits = b.gemm("head", nf, tokens, h, vocab_local);
    let logit_bytes = tokens * vocab_local * e;
    let mem = |bytes: u64| ComputeWork {
        kind: ComputeKind::MemoryBound,
        flops: 0.0,
        bytes: bytes as f64,
    };
    let reduce = |b: &mut Builder<'_>, name: &str, x: TensorId, cols: u64| {
        b.g.tensors[x].shape = Some(b.shape(tokens, cols));
        if ranks < 2 {
            return x;
        }
        let bytes = tokens * cols * 4;
        let (_, _, r) =
            b.g.collective(name, CollectiveKind::AllReduce, tp, bytes, x, bytes);
        b.g.tensors[r].shape = Some(b.shape(tokens, cols));
        r
    };
    let max = b.g.compute(
        "ce_max",
        mem(logit_bytes + tokens * 4),
        &[logits],
        tokens * 4,
    );
    let max = reduce(b, "ce_max_allreduce", max, 1);
    let sums = b.g.compute(
        "ce_sums",
        mem(logit_bytes + tokens * 12),
        &[logits, max],
        tokens * 8,
    );
    let sums = reduce(b, "ce_sums_allreduce", sums, 2);
    let loss =
        b.g.compute("ce_loss", mem(tokens * 12), &[sums, max], tokens * 4);
    b.g.tensors[loss].shape = Some(b.shape(tokens, 1));
    let dlogits = b.g.compute(
        "ce.bwd",
        mem(2 * logit_bytes + tokens * 12),
        &[logits, sums, max],
        logit_bytes,
    );
    b.g.tensors[dlogits].shape = b.shape_of(logits);
    let _ = loss;
    dlogits
}

fn attention(
    b: &mut Builder<'_>,
    name: &str,
    qkv: TensorId,
    flops: f64,
    qkv_bytes: u64,
    out_bytes: u64,
) -> TensorId {
    let work = ComputeWork {
        kind: ComputeKind::Attention,
        flops,
        bytes: (qkv_bytes + out_bytes) as f64,
    };
    let out = b.g.compute(name, work, &[qkv], out_bytes);
    b.tape.push(Tape::Attention {
        name: name.into(),
        flops,
        bytes: qkv_bytes + out_bytes,
        qkv,
        out,
        x_bytes: qkv_bytes,
    });
    out
}

/// Walks the tape backwards: each GEMM becomes dgrad + wgrad (each with the forward's FLOPs),
/// attention costs 2.5× its forward (FlashAttention-2's backward, Dao 2023), pointwise ops
/// their bytes again, each collective its conjugate (AllGather ↔ ReduceScatter, AllReduce and
/// AllToAll stay). Forward inputs are read again, so activations live until their backward.
///
/// `seed` is the loss gradient of a whole step (the LM head's logits' gradient) or, for the
/// layers alone, their output (whose loss ½‖y‖² has gradient y). After the layers a whole step
/// runs the embedding's backward (a scatter-add of the gradient into the table's rows), and
/// after the data-parallel waits the optimizer step.
#[allow(clippy::too_many_lines)] // one layer's backward ops in the order the model issues them
fn backward(
    b: &mut Builder<'_>,
    seed: TensorId,
    embedding: Option<(TensorId, TensorId)>,
    whole_step: bool,
) {
    let e = b.dtype;
    let mut grad = if whole_step {
        seed
    } else {
        let out_bytes = b.g.tensors[seed].bytes;
        let grad = b.g.compute(
            "loss_grad",
            ComputeWork {
                kind: ComputeKind::MemoryBound,
                flops: 0.0,
                bytes: out_bytes as f64,
            },
            &[seed],
            out_bytes,
        );
        b.annotate(grad, Some(Op::LossGrad), b.shape_of(seed));
        grad
    };
    let tape = core::mem::take(&mut b.tape);
    for op in tape.iter().rev() {
        match op {
            Tape::GradAllReduce { name, group, bytes } => {
                let shape = b.shape_of(grad);
                let (_, _, g2) = b.g.collective(
                    name,
                    CollectiveKind::AllReduce,
                    *group,
                    *bytes,
                    grad,
                    *bytes,
                );
                b.g.tensors[g2].shape = shape;
                grad = g2;
            }
            Tape::Gemm {
                name,
                flops,
                x,
                w,
                x_bytes,
                w_bytes,
            } => {
                let wgrad_work = ComputeWork {
                    kind: ComputeKind::Gemm,
                    flops: *flops,
                    bytes: (*x_bytes + *w_bytes) as f64,
                };
                let wgrad =
                    b.g.compute(&format!("{name}.wgrad"), wgrad_work, &[*x, grad], *w_bytes);
                b.annotate(wgrad, Some(Op::WeightGrad), None);
                let dgrad_work = ComputeWork {
                    kind: ComputeKind::Gemm,
                    flops: *flops,
                    bytes: (*x_bytes + *w_bytes) as f64,
                };
                grad =
                    b.g.compute(&format!("{name}.dgrad"), dgrad_work, &[grad], *x_bytes);
                let op = Op::InputGrad {
                    weight: b.g.tensors[*w].name.clone(),
                };
                b.annotate(grad, Some(op), b.shape_of(*x));
                b.grad(name, *w_bytes, false);
            }
            Tape::Pointwise {
                name,
                bytes,
                x,
                also,
                out,
                x_bytes,
            } => {
                let work = ComputeWork {
                    kind: ComputeKind::MemoryBound,
                    flops: (*x_bytes / e) as f64 * 8.0,
                    bytes: *bytes as f64,
                };
                let inputs: Vec<TensorId> = [Some(*x), *also, Some(grad)]
                    .into_iter()
                    .flatten()
                    .collect();
                grad = b.g.compute(&format!("{name}.bwd"), work, &inputs, *x_bytes);
                let op = b.forward_op(*out);
                b.annotate(grad, op, b.shape_of(*x));
            }
            Tape::Attention {
                name,
                flops,
                bytes,
                qkv,
                out,
                x_bytes,
            } => {
                let work = ComputeWork {
                    kind: ComputeKind::Attention,
                    flops: flops * 2.5,
                    bytes: *bytes as f64 * 2.0,
                };
                grad =
                    b.g.compute(&format!("{name}.bwd"), work, &[*qkv, grad], *x_bytes);
                let op = b.forward_op(*out);
                b.annotate(grad, op, b.shape_of(*qkv));
            }
            Tape::Collective {
                name,
                back: CollectiveKind::SendRecv,
                group,
                in_bytes,
                ..
            } => {
                // Ring attention: the KV gradient block travels back around the ring.
                let pack = ComputeWork {
                    kind: ComputeKind::MemoryBound,
                    flops: 0.0,
                    bytes: (*in_bytes * 2) as f64,
                };
                let block =
                    b.g.compute(&format!("{name}.pack"), pack, &[grad], *in_bytes);
                let (_, _, back) = b.g.collective(
                    &format!("{name}.bwd"),
                    CollectiveKind::SendRecv,
                    *group,
                    *in_bytes,
                    block,
                    *in_bytes,
                );
                let grad_bytes = b.g.tensors[grad].bytes;
                let merge = ComputeWork {
                    kind: ComputeKind::MemoryBound,
                    flops: 0.0,
                    bytes: (grad_bytes + *in_bytes) as f64,
                };
                let grad_shape = b.shape_of(grad);
                grad =
                    b.g.compute(&format!("{name}.merge"), merge, &[grad, back], grad_bytes);
                b.g.tensors[grad].shape = grad_shape;
            }
            Tape::Collective {
                name,
                in_shape,
                back,
                group,
                in_bytes,
                out_bytes,
            } => {
                // The gradient of the output flows back to the input's size.
                let message = if *back == CollectiveKind::AllGather {
                    *in_bytes
                } else {
                    *out_bytes
                };
                let (_, _, g2) = b.g.collective(
                    &format!("{name}.bwd"),
                    *back,
                    *group,
                    message,
                    grad,
                    *in_bytes,
                );
                b.g.tensors[g2].shape = *in_shape;
                grad = g2;
            }
        }
    }
    if let Some((ids, table)) = embedding {
        let table_bytes = b.g.tensors[table].bytes;
        let grad_bytes = b.g.tensors[grad].bytes;
        b.g.compute(
            "embedding.bwd",
            ComputeWork {
                kind: ComputeKind::MemoryBound,
                flops: (grad_bytes / e) as f64,
                bytes: (2 * grad_bytes + b.g.tensors[ids].bytes) as f64,
            },
            &[ids, grad],
            table_bytes,
        );
        b.grad("embedding", table_bytes, false);
    }
    b.grad("final", 0, true);
    // DP waits at the end of the step, before the optimizer.
    let starts = core::mem::take(&mut b.dp_starts);
    let mut waits = Vec::new();
    for (start, _) in starts {
        let name = format!("{}.wait", b.g.dag[start].name);
        let (wait, _) = b.g.add_node(&name, NodeKind::Wait { start }, &[], &[]);
        b.g.control(start, wait);
        waits.push(wait);
    }
    if whole_step {
        optimizer(b, &waits);
    }
}

/// The optimizer step: mixed-precision Adam over this rank's parameters (all of them with an
/// AllReduce of the gradients; its 1/dp share with ZeRO's ReduceScatter, followed by the
/// AllGather of the updated parameters). ZeRO's accounting (Rajbhandari et al. 2020, §3.1):
/// per parameter it reads the low-precision gradient and the fp32 parameter, momentum and
/// variance (12 bytes) and writes those and the low-precision parameter: a memory-bound kernel.
/// It starts once every gradient bucket has arrived.
fn optimizer(b: &mut Builder<'_>, waits: &[NodeIndex]) {
    let e = b.dtype;
    let dp = b.g.groups[b.dp].ranks;
    let zero = dp > 1 && b.par.dp_kind == DataParallel::ReduceScatter;
    let params = b.weight_bytes / e.max(1);
    let owned = if zero { params / u64::from(dp) } else { params };
    let state = b.g.add_input("optimizer.state", owned * 12, true);
    let (opt, out) = b.g.add_node(
        "optimizer",
        NodeKind::Compute(ComputeWork {
            kind: ComputeKind::MemoryBound,
            flops: (owned * 12) as f64,
            bytes: (owned * (24 + 2 * e)) as f64,
        }),
        &[state],
        &[("optimizer.params", owned * e)],
    );
    for &w in waits {
        b.g.control(w, opt);
    }
    if let Some(&last) =
        b.g.order
            .iter()
            .rev()
            .find(|&&n| n != opt && matches!(b.g.dag[n].kind, NodeKind::Compute(_)))
    {
        b.g.control(last, opt);
    }
    if zero {
        let dp_group = b.dp;
        b.g.collective(
            "param_allgather",
            CollectiveKind::AllGather,
            dp_group,
            params * e,
            out[0],
            params * e,
        );
    }
}
