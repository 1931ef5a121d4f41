//! The migration lab page: FlowGPU's pause/resume/migrate primitive as a cost model. The form
//! edits the scenario's job, links and pause options by dotted path (the core validates, so
//! messages name the field as the CLI would); the Report shows the option table, the migration
//! timeline of every option (wait, drain, GPU copy, CPU state, set-up) and the active-memory
//! curve with the chosen pause point. Links open the fairness lab with its preemption cost taken
//! from this model under each option.

use std::rc::Rc;

use bubblelab_core::labs::fairness::{FairnessParams, PreemptionModel};
use bubblelab_core::labs::migration::{CheckpointOption, MigrationParams};
use bubblelab_core::{presets, share, Report, Scenario, ScenarioError};
use serde_json::Value;
use yew::prelude::*;

use crate::browser;
use crate::components::export::ExportBar;
use crate::components::fields::NumberField;
use crate::components::lab_chrome::{LinkErrorBanner, PresetSelect};
use crate::components::params_form::{number_value, params_value, scenario_of, set, text_at};
use crate::components::report_view::ReportView;
use crate::components::timeline::Shared;

/// Properties of [`MigrationLab`].
#[derive(Properties, PartialEq)]
pub struct MigrationLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields: (path inside `params`, label with unit).
const FIELDS: [(&str, &str); 21] = [
    ("job.gpus", "GPUs of the job"),
    ("job.gpus_per_node", "GPUs per node"),
    ("job.model_parallel", "Model-parallel degree (TP × PP)"),
    ("job.params_billion", "Parameters (billions)"),
    ("job.weight_bytes_per_param", "Weight bytes per parameter"),
    ("job.grad_bytes_per_param", "Gradient bytes per parameter"),
    (
        "job.optimizer_bytes_per_param",
        "Optimizer bytes per parameter",
    ),
    ("job.activation_peak_gib", "Activation peak (GiB per GPU)"),
    ("job.reserved_gib", "Reserved pool (GiB per GPU)"),
    ("job.iteration_s", "Iteration (s)"),
    ("job.forward_fraction", "Forward share of the iteration"),
    ("job.cpu_state_gib", "CPU state per process (GiB)"),
    ("links.d2h_gbps", "Device→host (GB/s per GPU)"),
    ("links.h2d_gbps", "Host→device (GB/s per GPU)"),
    ("links.storage_write_gbps", "Storage write (GB/s per node)"),
    ("links.storage_read_gbps", "Storage read (GB/s per node)"),
    ("links.cpu_state_gbps", "CPU-state dump (GB/s per process)"),
    ("links.replay_s", "Handle replay on restore (s)"),
    (
        "options.request_at_fraction",
        "Pause request (share of the iteration)",
    ),
    ("options.max_wait_s", "Longest wait for a low point (s)"),
    ("framework.init_s", "Framework restart: initialisation (s)"),
];

#[derive(Clone, PartialEq)]
struct State {
    params: Value,
    texts: Vec<(String, String)>,
    report: Shared<Report>,
    scenario_json: Option<String>,
    error: Option<ScenarioError>,
    link_error: Option<String>,
}

fn default_params() -> MigrationParams {
    match presets::find("migration-7b-tp2-dp4-one-node").map(presets::Preset::scenario) {
        Some(Ok(Scenario::Migration(p))) => p,
        _ => MigrationParams::default(),
    }
}

impl State {
    fn new(p: &MigrationParams, link_error: Option<String>) -> State {
        let params = params_value(&Scenario::Migration(p.clone()));
        let texts = FIELDS
            .iter()
            .map(|(path, _)| ((*path).to_string(), text_at(&params, path)))
            .collect();
        let mut s = State {
            params,
            texts,
            report: Shared(Rc::new(Report::default())),
            scenario_json: None,
            error: None,
            link_error,
        };
        s.rerun(false);
        s
    }

    fn from_payload(payload: Option<&str>) -> State {
        match payload.map(|p| share::decode_for_lab("migration", p)) {
            Some(Ok(Scenario::Migration(p))) => State::new(&p, None),
            Some(Err(e)) => State::new(&default_params(), Some(e.to_string())),
            _ => State::new(&default_params(), None),
        }
    }

    fn text(&self, path: &str) -> String {
        self.texts
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    }

    fn rerun(&mut self, update_link: bool) {
        let scenario = match scenario_of("migration", &self.params) {
            Ok(s) => s,
            Err(e) => return self.error = Some(e),
        };
        match bubblelab_core::run(&scenario) {
            Ok(report) => {
                self.report = Shared(Rc::new(report));
                self.scenario_json = Some(scenario.to_json_pretty());
                self.error = None;
                if update_link {
                    browser::replace_hash(&share::fragment(&scenario));
                }
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The fairness lab's link with preemption costs from this job under `option`.
    fn fairness_link(&self, option: CheckpointOption) -> Option<String> {
        let Ok(Scenario::Migration(p)) = scenario_of("migration", &self.params) else {
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
    let state = {
        let payload = props.payload.clone();
        use_state(move || State::from_payload(payload.as_deref()))
    };
    let on_number = |path: String| {
        let state = state.clone();
        Callback::from(move |text: String| {
            let mut next = (*state).clone();
            match next.texts.iter_mut().find(|(p, _)| *p == path) {
                Some(entry) => entry.1 = text.clone(),
                None => next.texts.push((path.clone(), text.clone())),
            }
            match number_value("migration", &path, &text) {
                Ok(value) => {
                    set(&mut next.params, &path, value);
                    next.link_error = None;
                    next.rerun(true);
                }
                Err(e) => next.error = Some(e),
            }
            state.set(next);
        })
    };
    let on_preset = {
        let state = state.clone();
        Callback::from(move |(_, scenario): (&'static str, Scenario)| {
            if let Scenario::Migration(p) = scenario {
                let mut next = State::new(&p, None);
                next.rerun(true);
                state.set(next);
            }
        })
    };
    let field_error = |path: &str| {
        let full = format!("migration.{path}");
        state
            .error
            .as_ref()
            .filter(|e| e.path() == Some(full.as_str()))
            .map(ToString::to_string)
    };
    let other_error = state
        .error
        .as_ref()
        .filter(|e| {
            !e.path()
                .is_some_and(|p| FIELDS.iter().any(|(f, _)| p == format!("migration.{f}")))
        })
        .map(ToString::to_string);
    let links: Vec<(CheckpointOption, String)> = [
        CheckpointOption::ReservedPool,
        CheckpointOption::ActiveLowPointDedup,
        CheckpointOption::Framework,
    ]
    .into_iter()
    .filter_map(|o| state.fairness_link(o).map(|l| (o, l)))
    .collect();
    html! {
        <section class="page" id="lab-migration">
            <h1>{ "Migration: what a paused GPU job must save" }</h1>
            <p class="lede">
                { "A scheduler can only preempt, defragment or move GPU jobs cheaply if a running job can be paused, its \
                   state saved small and correct, and resumed elsewhere at the same device addresses. Saving the framework's \
                   whole reserved pool (POS-style) copies memory nobody uses; saving only active memory, at the low point of \
                   the iteration, with replicas' identical regions once, copies far less. Framework checkpointing saves \
                   even less but pays a process restart." }
            </p>
            <LinkErrorBanner message={state.link_error.clone()} />
            <div class="lab-grid">
                <form class="controls" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                    <PresetSelect lab="migration" selected={None} on_pick={on_preset} />
                    { for FIELDS.iter().map(|(path, label)| html! {
                        <NumberField path={format!("migration.{path}")} label={*label} value={state.text(path)}
                            error={field_error(path)} on_change={on_number((*path).to_string())} />
                    }) }
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
                           The CUDA path has not run on a GPU yet and no device results are recorded (docs/GPU-RESULTS.md), \
                           so this page shows the cost model only." }
                    </p>
                </form>
                <div class="results">
                    <ExportBar report={state.report.clone()} stem="migration" scenario_json={state.scenario_json.clone().map(AttrValue::from)} />
                    <ReportView report={state.report.clone()} chart_titles={vec![
                        ("active-memory".to_string(), "Active memory over one iteration, per GPU, with the pause points".to_string()),
                    ]} />
                </div>
            </div>
        </section>
    }
}
