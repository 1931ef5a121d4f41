//! The variants lab's field table: every parameter once, with its range (checked by
//! [`crate::fields::check`] from [`super::VariantsParams::validate`]), label and help.

use super::policies::SelectionPolicy;
use crate::fields::{Field, Range, Widget};

/// Every parameter of the variants lab, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        path: "policies",
        label: "Policies",
        unit: "id",
        range: Range::SomeOf(&SelectionPolicy::IDS),
        help: "how queries find a variant: INFaaS's model-less selection, or a fixed variant per application chosen by the cheapest or the fastest profile",
        widget: Widget::Checkboxes,
    },
    Field {
        path: "apps",
        label: "Applications",
        unit: "list",
        range: Range::Structured,
        help: "1 to 16 applications: name, min_accuracy_pct (top-1 %), slo_ms (arrival to answer, 1 to 100000, counted in whole ms as INFaaS's queries carry it), qps outside and burst_qps inside the burst",
        widget: Widget::Json,
    },
    Field {
        path: "burst_start_s",
        label: "Burst starts",
        unit: "s",
        range: Range::Float { min: 0.0, max: 3600.0 },
        help: "from here the applications arrive at their burst_qps",
        widget: Widget::Number,
    },
    Field {
        path: "burst_end_s",
        label: "Burst ends",
        unit: "s",
        range: Range::Float { min: 0.0, max: 3600.0 },
        help: "from here the applications arrive at their qps again; at least burst_start_s",
        widget: Widget::Number,
    },
    Field {
        path: "duration_s",
        label: "Duration",
        unit: "s",
        range: Range::Float { min: 1.0, max: 3600.0 },
        help: "queries arrive until then; the ones in flight are still answered",
        widget: Widget::Number,
    },
    Field {
        path: "batch",
        label: "Items per query",
        unit: "count",
        range: Range::Int { min: 1, max: 1024 },
        help: "images in one query; a variant whose max_batch is smaller cannot take it",
        widget: Widget::Number,
    },
    Field {
        path: "machines.cpu",
        label: "CPU machines",
        unit: "count",
        range: Range::Int { min: 0, max: 256 },
        help: "CPU machines INFaaS may load variants on; variants on one machine share it, one query at a time",
        widget: Widget::Number,
    },
    Field {
        path: "machines.gpu",
        label: "GPU machines",
        unit: "count",
        range: Range::Int { min: 0, max: 256 },
        help: "GPU machines, one GPU each, shared by the variants loaded on them one query at a time",
        widget: Widget::Number,
    },
    Field {
        path: "prices.cpu_per_hour",
        label: "CPU machine price",
        unit: "$/h",
        range: Range::Float { min: 0.0, max: 1000.0 },
        help: "what one CPU machine costs per hour (m5.2xlarge on demand: 0.384)",
        widget: Widget::Number,
    },
    Field {
        path: "prices.gpu_per_hour",
        label: "GPU machine price",
        unit: "$/h",
        range: Range::Float { min: 0.0, max: 1000.0 },
        help: "what one GPU machine costs per hour (p3.2xlarge on demand: 3.06)",
        widget: Widget::Number,
    },
    Field {
        path: "monitor_ms",
        label: "Monitor period",
        unit: "ms",
        range: Range::Int { min: 10, max: 60_000 },
        help: "how often each instance reports its load and sets or clears its blacklist flag (INFaaS: 1000)",
        widget: Widget::Number,
    },
    Field {
        path: "variants",
        label: "Variants",
        unit: "list",
        range: Range::Structured,
        help: "1 to 64 variants of the use-case: name, hardware (cpu or gpu), accuracy_pct, max_batch (over 64 on CPU, under 64 on GPU), intercept_ms and slope_ms of the latency profile, load_ms",
        widget: Widget::Json,
    },
    Field {
        path: "seed",
        label: "Seed",
        unit: "seed",
        range: Range::Structured,
        help: "seed of the arrivals and of INFaaS's dispatch shuffle, any whole number",
        widget: Widget::Number,
    },
];
