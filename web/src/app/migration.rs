//! The migration lab page: FlowGPU's pause/resume/migrate primitive as a cost model. The form
//! edits the scenario's job, links and pause options by dotted path (the core validates, so
//! messages name the field as the CLI would); the Report shows the option table, the migration
//! timeline of every option (wait, drain, GPU copy, CPU state, set-up) and the active-memory
//! curve with the chosen pause point. Links open the fairness lab with its preemption cost taken
//! from this model under each option.

use std::rc::Rc;

use bubblelab_core::labs::fairness::FairnessParams;
use bubblelab_core::labs::migration::PreemptionModel;
use bubblelab_core::labs::migration::{CheckpointOption, MigrationParams};
use bubblelab_core::{share, Report, Scenario};
use yew::prelude::*;

use crate::components::lab_page::LabPage;
use crate::components::params_form::{more_number_fields, number_fields};
use crate::components::params_form::{
    opening_params, preset_callback, scenario_of, use_form_page, Form, FormPage,
};
use crate::components::report_view::ReportView;
use crate::components::timeline::Shared;
use crate::worker::Output;

/// Properties of [`MigrationLab`].
#[derive(Properties, PartialEq)]
pub struct MigrationLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields, paths inside `params` (labels, ranges and help from the field table).
const FIELDS: [&str; 24] = [
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
];

/// Real runs of the checkpoint cycle, as `bubblelab checkpoint-demo --format json` wrote them:
/// (where it ran, the Report's JSON).
const MEASURED: [(&str, &str); 1] = [(
    "host memory",
    include_str!("../../../static/measured/checkpoint-demo-cpu.json"),
)];

/// The measured Reports, or why one cannot be read.
fn measured_reports() -> Vec<(&'static str, Result<Shared<Report>, String>)> {
    MEASURED
        .iter()
        .map(|(name, json)| {
            let report = serde_json::from_str::<Report>(json)
                .map(|r| Shared(Rc::new(r)))
                .map_err(|e| format!("the measured Report is not readable: {e}"));
            (*name, report)
        })
        .collect()
}

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    report: Shared<Report>,
    scenario_json: Option<String>,
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        match scenario {
            Scenario::Migration(p) => Some(State::new(&p, link_error)),
            _ => None,
        }
    }

    fn opening(lab: &'static str, link_error: Option<String>) -> State {
        State::new(&opening_params(lab), link_error)
    }

    fn form(&mut self) -> &mut Form {
        &mut self.form
    }

    fn form_ref(&self) -> &Form {
        &self.form
    }

    fn show(&mut self, output: Output, scenario: &Scenario) {
        if let Output::Report(report) = output {
            self.report = Shared(Rc::new(report));
            self.scenario_json = Some(scenario.to_json_pretty());
        }
    }
}

impl State {
    fn new(p: &MigrationParams, link_error: Option<String>) -> State {
        let mut s = State {
            form: Form::new("migration", &Scenario::Migration(p.clone()), link_error),
            report: Shared(Rc::new(Report::default())),
            scenario_json: None,
        };
        s.rerun(false);
        s
    }

    /// The fairness lab's link with preemption costs from this job under `option`.
    fn fairness_link(&self, option: CheckpointOption) -> Option<String> {
        let Ok(Scenario::Migration(p)) = scenario_of("migration", &self.form.params) else {
            return None;
        };
        let fairness = FairnessParams {
            preemption: PreemptionModel::Migration {
                option,
                params: Box::new(p),
            },
            ..FairnessParams::default()
        };
        Some(share::fragment(&Scenario::Fairness(fairness)))
    }
}

/// The migration lab.
#[function_component(MigrationLab)]
pub fn migration_lab(props: &MigrationLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("migration", props.payload.clone());
    let measured = use_memo((), |()| measured_reports());
    let form = &state.form;
    let other_error = form.other_error(FIELDS.iter().copied());
    let links: Vec<(CheckpointOption, String)> = [
        CheckpointOption::ReservedPool,
        CheckpointOption::ActiveLowPointDedup,
        CheckpointOption::Framework,
    ]
    .into_iter()
    .filter_map(|o| state.fairness_link(o).map(|l| (o, l)))
    .collect();
    html! {
        <LabPage lab="migration" title="Migration: what a paused GPU job must save"
            link_error={form.link_error.clone()} shown={state.scenario_json.clone().map(AttrValue::from)} on_pick={preset_callback(&state)}
            worker={worker.clone()} worker_error={form.worker_error.clone()}
            report={state.report.clone()}
            lede={html! {
                { "A scheduler can only preempt, defragment or move GPU jobs cheaply if a running job can be paused, its \
                   state saved small and correct, and resumed elsewhere at the same device addresses. Saving the framework's \
                   whole reserved pool (POS-style) copies memory nobody uses; saving only active memory, at the low point of \
                   the iteration, with replicas' identical regions once, copies far less. Framework checkpointing saves \
                   even less but pays a process restart." }
            }}
            controls={html! { <>
                    { number_fields(&state, &FIELDS) }
                    { more_number_fields(&state, &FIELDS) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
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
            </> }}
            after={html! {
                <section id="measured-checkpoint">
                        <h2>{ "Measured: the real checkpoint cycle" }</h2>
                        <p class="muted">{ "Not the model above: what `bubblelab checkpoint-demo --format json` measured, kept in \
                            static/measured/ (its last finding names the machine and the date; rerun the command to measure yours)." }</p>
                        { for measured.iter().map(|(name, report)| match report {
                            Ok(r) => html! { <ReportView report={r.clone()} /> },
                            Err(e) => html! { <p class="field-error">{ format!("{name}: {e}") }</p> },
                        }) }
                    </section>
            }}
            chart_titles={vec![
                        ("active-memory".to_string(), "Active memory over one iteration, per GPU, with the pause points".to_string()),
            ]} />
    }
}
