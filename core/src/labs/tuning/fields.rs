//! The tuning lab's field table: every parameter once, with its range (checked by
//! [`crate::fields::check`] from [`super::TuningParams::validate`], and for their own parts
//! from [`super::ShrinkerParams::validate`] and [`super::ExperimentParams::validate`]), label
//! and help.

use serde::Serialize;
use serde_json::{Map, Value};

use super::mup::MAX_RATIO;
use super::params::{MAX_FUSION, MAX_WIDTH};
use crate::fields::{Field, Range, Widget};
use crate::hw::GpuKind;
use crate::scenario::ScenarioError;

/// Checks the rows under `key` (`shrinker`, `experiment`) against `part`, the parameters'
/// value at `key`: errors name `tuning.<key>.<field>` as the whole table's check does.
///
/// # Errors
/// [`ScenarioError::Field`] for the first value outside its row's range.
pub(crate) fn check_part<T: Serialize>(key: &str, part: &T) -> Result<(), ScenarioError> {
    let mut map = Map::new();
    map.insert(key.into(), crate::scenario::to_value(part));
    crate::fields::check("tuning", FIELDS, &Value::Object(map))
}

/// Every parameter of the tuning lab, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        path: "shrinker.model",
        label: "Target model",
        unit: "text",
        range: Range::Structured,
        help: "display name of the model the surrogate is shrunk from, free text",
        widget: Widget::Json,
    },
    Field {
        path: "shrinker.ratio",
        label: "Shrink ratio",
        unit: "ratio",
        range: Range::Int { min: 1, max: MAX_RATIO as u64 },
        help: "width multiplier m: every width dimension of the surrogate is the target's divided by it, so each must divide by it",
        widget: Widget::Number,
    },
    Field {
        path: "shrinker.layers",
        label: "Target layers",
        unit: "list",
        range: Range::Structured,
        help: "the target's layers, 1 to 256, each {name, class (embedding, hidden, readout, bias, norm), fan_in and fan_out 1 to 2^24 (fan_in 1 for bias and norm), repeat 1 to 1024}",
        widget: Widget::Json,
    },
    Field {
        path: "experiment.widths",
        label: "Widths",
        unit: "count",
        range: Range::Structured,
        help: "student widths n, 1 to 8 of them, ascending, each 1 to 4096",
        widget: Widget::Json,
    },
    Field {
        path: "experiment.base_width",
        label: "Base width",
        unit: "count",
        range: Range::Int { min: 0, max: MAX_WIDTH as u64 },
        help: "width at which μP and SP coincide; 0 for the smallest width",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.hidden_layers",
        label: "Hidden layers",
        unit: "count",
        range: Range::Int { min: 1, max: 8 },
        help: "hidden n×n matmuls of each student",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.optimizer",
        label: "Optimizer",
        unit: "id",
        range: Range::OneOf(&["sgd", "adam"]),
        help: "plain SGD or Adam, without weight decay",
        widget: Widget::Select,
    },
    Field {
        path: "experiment.learning_rates",
        label: "Learning rates",
        unit: "ratio",
        range: Range::Structured,
        help: "learning-rate grid η, 1 to 32 rates, ascending, each above 0 and at most 100",
        widget: Widget::Json,
    },
    Field {
        path: "experiment.steps",
        label: "Training steps per run",
        unit: "count",
        range: Range::Int { min: 1, max: 100_000 },
        help: "optimizer steps of each training run; the whole experiment is held to 5e12 training FLOPs",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.batch",
        label: "Batch",
        unit: "count",
        range: Range::Int { min: 1, max: 4096 },
        help: "samples per optimizer step",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.eval_samples",
        label: "Held-out samples",
        unit: "count",
        range: Range::Int { min: 1, max: 65_536 },
        help: "samples of the held-out set the loss is measured on",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.seeds",
        label: "Replicas averaged",
        unit: "count",
        range: Range::Int { min: 1, max: 64 },
        help: "training runs per width and rate, each with its own initial weights and batches; the curves are their mean held-out loss",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.input_dim",
        label: "Input dimension",
        unit: "count",
        range: Range::Int { min: 1, max: 1024 },
        help: "input size of the synthetic teacher task",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.output_dim",
        label: "Output dimension",
        unit: "count",
        range: Range::Int { min: 1, max: 1024 },
        help: "output size of the synthetic teacher task",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.teacher_width",
        label: "Teacher width",
        unit: "count",
        range: Range::Int { min: 1, max: 4096 },
        help: "hidden units of the fixed random teacher network",
        widget: Widget::Number,
    },
    Field {
        path: "experiment.seed",
        label: "Seed",
        unit: "seed",
        range: Range::Structured,
        help: "seed of the teacher, the data and the initial weights, any whole number",
        widget: Widget::Number,
    },
    Field {
        path: "fusion.gpu",
        label: "GPU",
        unit: "id",
        range: Range::OneOf(&GpuKind::IDS),
        help: "the GPU whose peak BF16 throughput and memory bound the fused trials",
        widget: Widget::Select,
    },
    Field {
        path: "fusion.max_fusion",
        label: "Largest fusion count F",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_FUSION as u64 },
        help: "most trials fused into one bundle on the chart",
        widget: Widget::Number,
    },
    Field {
        path: "fusion.batch_tokens",
        label: "Tokens per step",
        unit: "count",
        range: Range::Int { min: 1, max: 1 << 24 },
        help: "tokens (or samples) per training step of one trial",
        widget: Widget::Number,
    },
    Field {
        path: "fusion.launch_overhead_us",
        label: "Launch overhead per kernel",
        unit: "µs",
        range: Range::Float { min: 0.0, max: 1e4 },
        help: "fixed cost of launching one kernel, paid once per bundle's kernel",
        widget: Widget::Number,
    },
    Field {
        path: "fusion.half_util_gflop",
        label: "Work at half utilisation",
        unit: "GFLOP",
        range: Range::Float { min: 0.0, max: 1e4 },
        help: "work one kernel needs to reach half the GPU's peak",
        widget: Widget::Number,
    },
    Field {
        path: "fusion.base_gib",
        label: "Base memory",
        unit: "GiB",
        range: Range::Float { min: 0.0, max: 1024.0 },
        help: "memory a bundle holds whatever its fusion count: CUDA context, workspaces",
        widget: Widget::Number,
    },
    Field {
        path: "fusion.bytes_per_param",
        label: "Training state per parameter",
        unit: "bytes",
        range: Range::Int { min: 1, max: 64 },
        help: "weights, gradients and optimizer state per parameter (16 for FP32 weights and Adam)",
        widget: Widget::Number,
    },
    Field {
        path: "fusion.activation_bytes_per_unit",
        label: "Activations per width unit",
        unit: "bytes",
        range: Range::Int { min: 0, max: 1024 },
        help: "activation bytes per token, per surrogate width unit and weight layer (a coarse estimate)",
        widget: Widget::Number,
    },
];
