//! The pipeline lab's field table: every parameter once, with its range (checked by
//! [`crate::fields::check`] from [`super::PipelineParams::validate`]), label and help.

use super::params::{MAX_MICRO_BATCHES, MAX_OP_NS, MAX_STAGES, MAX_VIRTUAL_STAGES};
use super::ScheduleKind;
use crate::fields::{Field, Range, Widget};

/// Most activation memory one micro-batch may hold on one stage: 16 TiB.
pub const MAX_ACTIVATION_BYTES: u64 = 1 << 44;

/// Every parameter of the pipeline lab, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        path: "schedules",
        label: "Schedules",
        unit: "id",
        range: Range::SomeOf(&ScheduleKind::IDS),
        help: "the schedules to simulate and compare, in display order",
        widget: Widget::Checkboxes,
    },
    Field {
        path: "stages",
        label: "Stages p",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_STAGES as u64 },
        help: "pipeline stages (devices)",
        widget: Widget::Slider,
    },
    Field {
        path: "micro_batches",
        label: "Micro-batches m",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_MICRO_BATCHES as u64 },
        help: "micro-batches per iteration",
        widget: Widget::Slider,
    },
    Field {
        path: "virtual_stages",
        label: "Chunks per device v",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_VIRTUAL_STAGES as u64 },
        help: "model chunks per device for interleaved 1F1B (each holds 1/v of the layers)",
        widget: Widget::Number,
    },
    Field {
        path: "forward_ns",
        label: "Forward F",
        unit: "ns",
        range: Range::Int { min: 1, max: MAX_OP_NS },
        help: "forward of one micro-batch through one stage",
        widget: Widget::Number,
    },
    Field {
        path: "backward_input_ns",
        label: "Backward B (input gradient)",
        unit: "ns",
        range: Range::Int { min: 1, max: MAX_OP_NS },
        help: "input-gradient backward of one micro-batch on one stage; schedules that do not split the backward run B and W as one op",
        widget: Widget::Number,
    },
    Field {
        path: "backward_weight_ns",
        label: "Backward W (weight gradient)",
        unit: "ns",
        range: Range::Int { min: 0, max: MAX_OP_NS },
        help: "weight-gradient backward of one micro-batch on one stage",
        widget: Widget::Number,
    },
    Field {
        path: "stage_times",
        label: "Per-stage times",
        unit: "ns",
        range: Range::Structured,
        help: "one {forward_ns, backward_input_ns, backward_weight_ns} per stage, or empty for the uniform times",
        widget: Widget::Json,
    },
    Field {
        path: "stage_slowdown",
        label: "Per-stage slowdown",
        unit: "ratio",
        range: Range::Structured,
        help: "one factor per stage, 0.01 to 100 (1 = nominal, 2 = twice as slow), or empty for none",
        widget: Widget::Json,
    },
    Field {
        path: "p2p_ns",
        label: "P2P per transfer",
        unit: "ns",
        range: Range::Int { min: 0, max: MAX_OP_NS },
        help: "time to send one micro-batch's activation or gradient to the next stage; transfers on a link go one at a time",
        widget: Widget::Number,
    },
    Field {
        path: "activation_bytes",
        label: "Activations per micro-batch",
        unit: "bytes",
        range: Range::Int { min: 0, max: MAX_ACTIVATION_BYTES },
        help: "activation memory one micro-batch holds on one stage from its forward until its backward",
        widget: Widget::Number,
    },
    Field {
        path: "w_memory_fraction",
        label: "Share kept for W",
        unit: "ratio",
        range: Range::Float { min: 0.0, max: 1.0 },
        help: "share of a micro-batch's activations the W pass still needs after B (zero-bubble schedules; Qi et al. 2024 §2)",
        widget: Widget::Number,
    },
];
