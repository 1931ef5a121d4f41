//! The elastic lab's field table: every parameter once, with its range (checked by
//! [`crate::fields::check`] from [`super::ElasticParams::validate`]), label and help.
//! `restart_cost` is left out: it is absent from the default scenario (the fixed
//! `restart_s` pause), and the migration lab's table checks its `params`.

use crate::fields::{Field, Range, Widget};

/// Every parameter of the elastic lab, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        path: "policies",
        label: "Policies",
        unit: "id",
        range: Range::Structured,
        help: "the elastic schedulers to compare, in display order; at least one",
        widget: Widget::Checkboxes,
    },
    Field {
        path: "nodes",
        label: "Nodes",
        unit: "count",
        range: Range::Structured,
        help: "nodes of the cluster, at least 1 and at most 256 GPUs in all with gpus_per_node (the Pollux artifact uses 16)",
        widget: Widget::Number,
    },
    Field {
        path: "gpus_per_node",
        label: "GPUs per node",
        unit: "count",
        range: Range::Structured,
        help: "GPUs of each node, 1 to 4 as the artifact's placement ids allow (it uses 4)",
        widget: Widget::Number,
    },
    Field {
        path: "interval_s",
        label: "Scheduling interval",
        unit: "s",
        range: Range::Int { min: 1, max: 3600 },
        help: "jobs advance and the policies decide only at these ticks (the artifact uses 60)",
        widget: Widget::Number,
    },
    Field {
        path: "restart_s",
        label: "Pause after a job's GPUs change",
        unit: "s",
        range: Range::Int { min: 0, max: 3600 },
        help: "a job's pause to checkpoint, restart and restore whenever its GPUs change, first start included; Pollux's fitness always charges it (the artifact uses 30)",
        widget: Widget::Number,
    },
    Field {
        path: "workload",
        label: "Workload",
        unit: "id",
        range: Range::Int { min: 0, max: 8 },
        help: "one of the Pollux artifact's workload files, 1 to 8 (160 jobs each), or 0 for the jobs given in jobs",
        widget: Widget::Number,
    },
    Field {
        path: "jobs",
        label: "Jobs",
        unit: "list",
        range: Range::Structured,
        help: "the jobs when workload is 0, each {name, submit_s ≤ 604800, app (bert, cifar10, deepspeech2, imagenet, ncf, yolov3), replicas 1 to the cluster's GPUs, batch_size within the app's range}; 1 to 5000 jobs",
        widget: Widget::Json,
    },
    Field {
        path: "pollux.population",
        label: "Pollux's search: individuals",
        unit: "count",
        range: Range::Int { min: 2, max: 1000 },
        help: "individuals per generation of Pollux's genetic search (the artifact uses 100)",
        widget: Widget::Number,
    },
    Field {
        path: "pollux.generations",
        label: "Pollux's search: generations per round",
        unit: "count",
        range: Range::Int { min: 1, max: 1000 },
        help: "generations of Pollux's genetic search each scheduling round (the artifact uses 100)",
        widget: Widget::Number,
    },
    Field {
        path: "pollux.seed",
        label: "Pollux's search: seed",
        unit: "seed",
        range: Range::Structured,
        help: "seed of the search's random draws, any whole number",
        widget: Widget::Number,
    },
];
