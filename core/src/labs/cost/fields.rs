//! The cost lab's field table: every parameter once, with its range (checked by
//! [`crate::fields::check`] from [`super::CostParams::validate`]), label and help.

use super::{MAX_BYTES, MAX_GEMM_DIM, MAX_RANKS};
use crate::cost::CollectiveKind;
use crate::fields::{Field, Range, Widget};
use crate::hw::GpuKind;

/// Every parameter of the cost lab, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        path: "gpu",
        label: "GPU",
        unit: "id",
        range: Range::OneOf(&GpuKind::IDS),
        help: "the GPU, in a DGX-style node: NVLink between the GPUs of a node, InfiniBand between nodes",
        widget: Widget::Select,
    },
    Field {
        path: "collective",
        label: "Collective",
        unit: "id",
        range: Range::OneOf(&CollectiveKind::IDS),
        help: "the collective operation to cost (send-recv is between exactly 2 ranks)",
        widget: Widget::Select,
    },
    Field {
        path: "bytes",
        label: "Message",
        unit: "bytes",
        range: Range::Int { min: 1, max: MAX_BYTES },
        help: "message size of the collective, as NCCL-tests count it",
        widget: Widget::Number,
    },
    Field {
        path: "ranks",
        label: "Ranks",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_RANKS as u64 },
        help: "ranks (GPUs) in the collective's group; exactly 2 for send-recv",
        widget: Widget::Number,
    },
    Field {
        path: "ranks_per_node",
        label: "Ranks per node",
        unit: "count",
        range: Range::Structured,
        help: "ranks of the group inside one node, 1 to ranks; the rest are reached over the inter-node link",
        widget: Widget::Number,
    },
    Field {
        path: "gemm_m",
        label: "GEMM M",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_GEMM_DIM },
        help: "rows of the GEMM's output C = A·B",
        widget: Widget::Number,
    },
    Field {
        path: "gemm_n",
        label: "GEMM N",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_GEMM_DIM },
        help: "columns of the GEMM's output C = A·B",
        widget: Widget::Number,
    },
    Field {
        path: "gemm_k",
        label: "GEMM K",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_GEMM_DIM },
        help: "inner dimension of the GEMM, summed over for each output element",
        widget: Widget::Number,
    },
];
