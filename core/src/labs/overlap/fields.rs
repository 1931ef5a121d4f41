//! The overlap lab's field table: every parameter once, with its range (checked by
//! [`crate::fields::check`] from [`super::OverlapParams::validate`]), label and help.

use super::params::{Placement, MAX_LAYERS};
use crate::fields::{Field, Range, Widget};
use crate::graph::build::{ContextParallel, DataParallel, ModelKind};
use crate::hw::GpuKind;

/// Largest degree of any parallelism the model builder takes.
const MAX_DEGREE: u64 = 4_096;

/// Whether the field at `path` is read only by the model builder (an imported graph replaces
/// it, so its range is not checked then).
#[must_use]
pub fn for_the_builder(path: &str) -> bool {
    path == "model" || path.starts_with("parallelism.") || path.starts_with("workload.")
}

/// Every parameter of the overlap lab, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        path: "model",
        label: "Model",
        unit: "id",
        range: Range::OneOf(&ModelKind::IDS),
        help: "model whose transformer layers are built, with its published shape (ignored with an imported graph)",
        widget: Widget::Select,
    },
    Field {
        path: "gpu",
        label: "GPU",
        unit: "id",
        range: Range::OneOf(&GpuKind::IDS),
        help: "GPU of the DGX-style nodes (NVLink inside, InfiniBand between)",
        widget: Widget::Select,
    },
    Field {
        path: "placement",
        label: "Groups",
        unit: "id",
        range: Range::OneOf(&Placement::IDS),
        help: "whether communication groups fill nodes on NVLink or put one GPU per node so every collective crosses InfiniBand",
        widget: Widget::Select,
    },
    Field {
        path: "parallelism.tp",
        label: "TP degree",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_DEGREE },
        help: "tensor-parallel degree; it must divide the attention heads",
        widget: Widget::Number,
    },
    Field {
        path: "parallelism.sp",
        label: "Sequence parallelism",
        unit: "bool",
        range: Range::Bool,
        help: "inside the TP group, AllGather and ReduceScatter around the layers instead of AllReduce",
        widget: Widget::Toggle,
    },
    Field {
        path: "parallelism.cp",
        label: "SP / CP degree (sequence split)",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_DEGREE },
        help: "context-parallel degree; the sequence must split evenly over it (and Ulysses needs it to divide the heads per TP rank)",
        widget: Widget::Number,
    },
    Field {
        path: "parallelism.cp_kind",
        label: "Context parallelism",
        unit: "id",
        range: Range::OneOf(&ContextParallel::IDS),
        help: "how context parallelism splits attention: Ulysses (AllToAll to head shards) or ring attention (KV blocks passed by P2P)",
        widget: Widget::Select,
    },
    Field {
        path: "parallelism.ep",
        label: "EP degree",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_DEGREE },
        help: "expert-parallel degree; it must divide the experts (1 for a dense model)",
        widget: Widget::Number,
    },
    Field {
        path: "parallelism.dp",
        label: "DP degree",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_DEGREE },
        help: "data-parallel degree",
        widget: Widget::Number,
    },
    Field {
        path: "parallelism.dp_kind",
        label: "Gradient reduction",
        unit: "id",
        range: Range::OneOf(&DataParallel::IDS),
        help: "how data-parallel gradients are reduced per bucket: AllReduce (DDP) or ReduceScatter (ZeRO/FSDP)",
        widget: Widget::Select,
    },
    Field {
        path: "parallelism.dp_bucket_bytes",
        label: "Gradient bucket",
        unit: "bytes",
        range: Range::Structured,
        help: "gradients gathered before one data-parallel reduction is sent (any size; DDP's default is 25 MiB)",
        widget: Widget::Number,
    },
    Field {
        path: "parallelism.gpus_per_node",
        label: "GPUs per node",
        unit: "count",
        range: Range::Structured,
        help: "GPUs per node that groups fill, 1 to 4096 (not read with inter-node placement, which puts one GPU per node)",
        widget: Widget::Number,
    },
    Field {
        path: "workload.layers",
        label: "Layers",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_LAYERS as u64 },
        help: "transformer layers built (one pipeline stage's worth)",
        widget: Widget::Number,
    },
    Field {
        path: "workload.micro_batch",
        label: "Micro-batch (sequences)",
        unit: "count",
        range: Range::Int { min: 1, max: 1_024 },
        help: "sequences per micro-batch; batch tiling needs K to divide it",
        widget: Widget::Number,
    },
    Field {
        path: "workload.seq_len",
        label: "Sequence length (tokens)",
        unit: "tokens",
        range: Range::Int { min: 1, max: 4 << 20 },
        help: "tokens per sequence; it must split evenly over cp (and tp with sequence parallelism)",
        widget: Widget::Number,
    },
    Field {
        path: "workload.backward",
        label: "Training step",
        unit: "bool",
        range: Range::Bool,
        help: "build the backward pass as well (training) rather than the forward alone (inference prefill)",
        widget: Widget::Toggle,
    },
    Field {
        path: "workload.dtype_bytes",
        label: "Bytes per element",
        unit: "bytes",
        range: Range::Structured,
        help: "bytes per activation and weight element: 1, 2 (bf16) or 4",
        widget: Widget::Number,
    },
    Field {
        path: "workload.whole_step",
        label: "Whole step",
        unit: "bool",
        range: Range::Bool,
        help: "build the embedding, the LM head with its loss and, in training, the optimizer step around the layers; needs a model with a vocabulary",
        widget: Widget::Toggle,
    },
    Field {
        path: "passes",
        label: "Helix passes, in order",
        unit: "list",
        range: Range::Structured,
        help: "the pass pipeline, at most 8: tile (k streams 1 to 16 dividing the split extent, along batch or sequence), reorder (segmented round-robin), bucket (memory_budget_gib above 0 up to 1e6, or null for none)",
        widget: Widget::Json,
    },
];
