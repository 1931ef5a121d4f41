//! The migration lab's page parts: FlowGPU's pause/resume/migrate primitive as a cost model on
//! the generic page (its Report: the option table, the migration timeline of every option —
//! wait, drain, GPU copy, CPU state, set-up — and the active-memory curve with the chosen pause
//! point). Below the form, links open the fairness lab with its preemption cost taken from this
//! model under each option; after the Report, the measured Report of the real checkpoint cycle.

use std::rc::Rc;

use bubblelab_core::labs::fairness::FairnessParams;
use bubblelab_core::labs::migration::PreemptionModel;
use bubblelab_core::labs::migration::{CheckpointOption, MigrationParams};
use bubblelab_core::{share, Report, Scenario};
use yew::prelude::*;

use super::generic::PageParts;
use crate::components::params_form::{scenario_of, Form};
use crate::components::report_view::ReportView;
use crate::components::timeline::Shared;

/// What the migration page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "A scheduler can only preempt, defragment or move GPU jobs cheaply if a running job can \
           be paused, its state saved small and correct, and resumed elsewhere at the same device \
           addresses. Saving the framework's whole reserved pool (POS-style) copies memory nobody \
           uses; saving only active memory, at the low point of the iteration, with replicas' \
           identical regions once, copies far less. Framework checkpointing saves even less but \
           pays a process restart.",
    main: &[
        "job.gpus",
        "job.gpus_per_node",
        "job.model_parallel",
        "job.params_billion",
        "job.weight_bytes_per_param",
        "job.grad_bytes_per_param",
        "job.optimizer_bytes_per_param",
        "job.activation_peak_gib",
        "job.reserved_gib",
        "job.iteration_s",
        "job.forward_fraction",
        "job.cpu_state_gib",
        "links.d2h_gbps",
        "links.h2d_gbps",
        "links.storage_write_gbps",
        "links.storage_read_gbps",
        "links.cpu_state_gbps",
        "systems.flowgpu.replay_s",
        "systems.pos.replay_s",
        "systems.flowgpu.context_s",
        "systems.pos.context_s",
        "options.request_at_fraction",
        "options.max_wait_s",
        "framework.init_s",
    ],
    charts: &[(
        "active-memory",
        "Active memory over one iteration, per GPU, with the pause points",
    )],
    notes: Some(in_a_scheduler),
    after: Some(|_| measured()),
    ..PageParts::PLAIN
};

/// Real runs of the checkpoint cycle, as `bubblelab checkpoint-demo --format json` wrote them:
/// (where it ran, the Report's JSON).
const MEASURED: [(&str, &str); 1] = [(
    "host memory",
    include_str!("../../../static/measured/checkpoint-demo-cpu.json"),
)];

/// The fairness lab's link with preemption costs from the job `params` describe under `option`.
fn fairness_link(params: &MigrationParams, option: CheckpointOption) -> String {
    let fairness = FairnessParams {
        preemption: PreemptionModel::Migration {
            option,
            params: Box::new(params.clone()),
        },
        ..FairnessParams::default()
    };
    share::fragment(&Scenario::Fairness(fairness))
}

/// Links into the fairness lab under each option, and where the real mechanism runs.
fn in_a_scheduler(form: &Form) -> Html {
    let links: Vec<(CheckpointOption, String)> = match scenario_of("migration", &form.params) {
        Ok(Scenario::Migration(p)) => [
            CheckpointOption::ReservedPool,
            CheckpointOption::ActiveLowPointDedup,
            CheckpointOption::Framework,
        ]
        .into_iter()
        .map(|o| (o, fairness_link(&p, o)))
        .collect(),
        _ => Vec::new(),
    };
    html! { <>
        <h3>{ "In a scheduler" }</h3>
        <p class="muted">{ "Open the fairness lab with every preemption costing this job's migration time (scaled to each job's GPUs) under one option, then change the lease length:" }</p>
        <ul id="fairness-links">
            { for links.iter().map(|(o, l)| html! {
                <li><a href={l.clone()} data-option={o.id()}>{ o.label() }</a></li>
            }) }
        </ul>
        <h3>{ "The real mechanism" }</h3>
        <p class="muted" id="mechanism-note">
            { "`bubblelab checkpoint-demo` runs the address-preserving pause/restore/migrate cycle for real on host \
               memory mapped at a fixed address (a pointer-rich list restored in a new process with the same checksum); \
               `--device cuda` runs it in device memory through the CUDA driver's virtual memory management. \
               The CUDA path has not run on a GPU yet (docs/GPU-RESULTS.md); the host run's measured Report is shown \
               below the model's, with its machine and date." }
        </p>
    </> }
}

/// The measured Reports of the real checkpoint cycle (or why one cannot be read).
fn measured() -> Html {
    html! {
        <section id="measured-checkpoint">
            <h2>{ "Measured: the real checkpoint cycle" }</h2>
            <p class="muted">{ "Not the model above: what `bubblelab checkpoint-demo --format json` measured, kept in \
                static/measured/ (its last finding names the machine and the date; rerun the command to measure yours)." }</p>
            { for MEASURED.iter().map(|(name, json)| match serde_json::from_str::<Report>(json) {
                Ok(r) => html! { <ReportView report={Shared(Rc::new(r))} /> },
                Err(e) => html! { <p class="field-error">{ format!("{name}: the measured Report is not readable: {e}") }</p> },
            }) }
        </section>
    }
}
