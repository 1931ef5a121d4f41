//! The pipeline lab page: pick schedules and the pipeline's shape, see the schedules' timelines
//! stacked, the bubble table and the memory chart; share the scenario as a link; export the
//! report; open a real PipeMorph run.

mod state;

use std::rc::Rc;

use bubblelab_core::labs::pipeline::pipemorph::{self, STAGE_LOGS};
use bubblelab_core::labs::pipeline::{PipelineParams, ScheduleKind};
use bubblelab_core::{Report, Scenario, ScenarioError};
use yew::prelude::*;

use crate::browser;
use crate::components::export::ExportBar;
use crate::components::fields::{CheckboxGroup, NumberField};
use crate::components::lab_page::LabPage;
use crate::components::report_view::ReportView;
use crate::components::timeline::Shared;
use crate::components::upload::{texts, FileUpload};
use crate::worker::client::{use_worker, Outcome, RunRequest, RunStatus};
use crate::worker::{Failure, Output};
use state::{Action, LabState, FIELDS};

/// Properties of [`PipelineLab`].
#[derive(Properties, PartialEq)]
pub struct PipelineLabProps {
    /// The `s=` payload of a share link, if the page was opened from one.
    #[prop_or_default]
    pub payload: Option<String>,
}

const CHART_TITLES: [(&str, &str); 4] = [
    ("peak_activations", "Peak activation memory per stage (GiB)"),
    ("bubble_by_stage", "Bubble ratio per stage"),
    ("iteration_ms", "Iteration time (ms)"),
    (
        "bubble_by_iteration",
        "Bubble ratio per stage and iteration",
    ),
];

/// The pipeline lab.
#[function_component(PipelineLab)]
pub fn pipeline_lab(props: &PipelineLabProps) -> Html {
    let state = {
        let payload = props.payload.clone();
        use_reducer(move || LabState::from_payload(payload.as_deref()))
    };
    // Navigating to another link (a hashchange) re-initialises the page.
    {
        let state = state.clone();
        let first = use_mut_ref(|| true);
        use_effect_with(props.payload.clone(), move |payload| {
            if !std::mem::replace(&mut *first.borrow_mut(), false) {
                state.dispatch(Action::Open(payload.clone()));
            }
            || ()
        });
    }
    // Keep the address bar equal to the scenario once the user has changed something.
    {
        let fragment = state.fragment.clone();
        use_effect_with((fragment, state.dirty), |(fragment, dirty)| {
            if *dirty {
                browser::replace_hash(fragment);
            }
            || ()
        });
    }
    let real_run = use_state(|| None::<Shared<bubblelab_core::Report>>);
    let upload_error = use_state(|| None::<String>);
    // The schedules run in the worker; the last finished Report stays on screen meanwhile.
    let worker = use_worker();
    let report = use_state(|| Shared(Rc::new(Report::default())));
    let run_error = use_state(|| None::<ScenarioError>);
    let worker_error = use_state(|| None::<String>);
    {
        let scenario = state.scenario();
        let worker = worker.clone();
        let report = report.clone();
        let run_error = run_error.clone();
        let worker_error = worker_error.clone();
        use_effect_with(state.scenario_json.clone(), move |_| {
            run_error.set(None);
            let run_error = run_error.clone();
            let request = RunRequest::run(&scenario, Vec::new());
            worker.run(
                request,
                Callback::from(move |outcome: Outcome| {
                    worker_error.set(None);
                    match outcome {
                        Ok(Output::Report(r)) => {
                            run_error.set(None);
                            report.set(Shared(Rc::new(r)));
                        }
                        Ok(_) => {}
                        Err(Failure::Scenario(e)) => run_error.set(Some(e)),
                        Err(e) => worker_error.set(Some(e.to_string())),
                    }
                }),
            );
        });
    }
    // PipeMorph logs are read by a second worker, beside the schedules' runs.
    let log_worker = use_worker();
    // The input's own error first, else what the run of the last valid input said.
    let error = state.error.clone().or_else(|| (*run_error).clone());

    let field_error = |path: &str| {
        error
            .as_ref()
            .filter(|e| e.path() == Some(path))
            .map(ToString::to_string)
    };
    let on_field = |name: &'static str| {
        let state = state.clone();
        Callback::from(move |text: String| state.dispatch(Action::SetField(name, text)))
    };
    let on_preset = {
        let state = state.clone();
        Callback::from(move |(id, scenario): (&'static str, Scenario)| {
            if let Scenario::Pipeline(p) = scenario {
                state.dispatch(Action::Load(p, Some(id)));
            }
        })
    };
    let on_compare_all = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| {
            for kind in ScheduleKind::ALL {
                state.dispatch(Action::ToggleSchedule(kind, true));
            }
        })
    };
    let on_scenario_file = {
        let state = state.clone();
        let upload_error = upload_error.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            let loaded = texts(files).and_then(|files| {
                let (name, text) = files.into_iter().next().ok_or("no file chosen")?;
                Scenario::from_json(&text).map_err(|e| format!("{name}: {e}"))
            });
            match loaded {
                Ok(Scenario::Pipeline(p)) => {
                    upload_error.set(None);
                    state.dispatch(Action::Load(p, None));
                }
                // Another lab's scenario: open it in its own lab.
                Ok(other) => browser::set_hash(&bubblelab_core::share::fragment(&other)),
                Err(e) => upload_error.set(Some(e)),
            }
        })
    };
    let on_logs = {
        let real_run = real_run.clone();
        let upload_error = upload_error.clone();
        let log_worker = log_worker.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            let real_run = real_run.clone();
            let upload_error = upload_error.clone();
            let request = RunRequest::run(
                &Scenario::Pipeline(PipelineParams::default()),
                files
                    .into_iter()
                    .map(|f| (STAGE_LOGS.name, Rc::new(f)))
                    .collect(),
            );
            log_worker.run(
                request,
                Callback::from(move |outcome: Outcome| match outcome {
                    Ok(Output::Report(r)) => {
                        upload_error.set(None);
                        real_run.set(Some(Shared(Rc::new(r))));
                    }
                    Ok(_) => {}
                    Err(e) => upload_error.set(Some(e.to_string())),
                }),
            );
        })
    };
    let on_upload_error = {
        let upload_error = upload_error.clone();
        Callback::from(move |m: String| upload_error.set(Some(m)))
    };

    let schedule_options: Vec<(String, String, bool)> = ScheduleKind::ALL
        .iter()
        .map(|k| {
            (
                k.id().to_string(),
                k.label_with(state.params.virtual_stages),
                state.schedules.contains(k),
            )
        })
        .collect();
    let on_toggle = {
        let state = state.clone();
        Callback::from(move |(id, on): (String, bool)| {
            if let Some(kind) = ScheduleKind::from_id(&id) {
                state.dispatch(Action::ToggleSchedule(kind, on));
            }
        })
    };
    let schedules_error = error
        .as_ref()
        .filter(|e| {
            e.path()
                .is_some_and(|p| p.starts_with("pipeline.schedules"))
        })
        .map(ToString::to_string);
    let other_error = error
        .as_ref()
        .filter(|e| {
            !e.path().is_some_and(|p| {
                FIELDS.iter().any(|f| f.path == p) || p.starts_with("pipeline.schedules")
            })
        })
        .map(ToString::to_string);

    let shown = Some(AttrValue::from(state.scenario_json.clone()));
    html! {
        <LabPage lab="pipeline" title="Pipeline bubbles"
            link_error={state.link_error.clone()} shown={shown} preset={state.preset} on_pick={on_preset}
            worker={worker.clone()} worker_error={(*worker_error).clone()}
            report={(*report).clone()}
            lede={html! {
                { "p stages each hold a slice of the model; m micro-batches flow forward and their gradients flow back. \
                   A stage is idle — a bubble — while it waits for a neighbour. Compare how GPipe, 1F1B, interleaved 1F1B, \
                   the zero-bubble schedules (ZB-H1, ZB-H2, ZB-V) and DeepSeek's DualPipe and DualPipeV order the work, \
                   what it costs in memory, and where the bubbles go." }
            }}
            controls={html! { <>
                    <CheckboxGroup path="pipeline.schedules" label="Schedules" options={schedule_options}
                        error={schedules_error} {on_toggle} />
                    { for FIELDS.iter().map(|f| html! {
                        <NumberField path={f.path} label={f.label} help={f.help} value={state.text(f.name)}
                            min={f.min} max={f.max} step={f.step} slider={f.slider}
                            error={field_error(f.path)} on_change={on_field(f.name)} />
                    }) }
                    if let Some(message) = other_error {
                        <p class="field-error" data-field={error.as_ref().and_then(|e| e.path()).unwrap_or("").to_string()}>{ message }</p>
                    }
                    <div class="buttons">
                        <button type="button" id="compare-all" onclick={on_compare_all}>{ "Compare all schedules" }</button>
                    </div>
                    <FileUpload id="upload-scenario" label="Open a scenario file (.json)" accept=".json,application/json"
                        max_bytes={256 * 1024} max_files={1} on_load={on_scenario_file} on_error={on_upload_error.clone()} />
            </> }}
            chart_titles={CHART_TITLES.iter().map(|(k, t)| (k.to_string(), t.to_string())).collect::<Vec<_>>()}
            below={html! {
            <section class="real-run">
                <h2>{ "A real run: PipeMorph stage logs" }</h2>
                <p>
                    { "Open the per-stage logs of a PipeMorph run (the files " }<code>{ "GPU<r>_rank<r>*.log" }</code>
                    { ", optionally with Megatron's " }<code>{ "log.txt" }</code>
                    { ") to see the measured timeline: 4 stages of GPT on A10 GPUs, 1F1B or zero-bubble, with a slow link injected mid-run." }
                </p>
                <FileUpload id="upload-pipemorph" label="Open stage logs" multiple=true accept=".log,.txt"
                    max_bytes={pipemorph::MAX_LOG_BYTES as u64} max_files={16} on_load={on_logs} on_error={on_upload_error} />
                <RunStatus worker={log_worker.clone()} id="pipemorph-status" />
                if let Some(message) = &*upload_error {
                    <div class="banner error" id="upload-error" role="alert">{ message.clone() }</div>
                }
                if let Some(report) = &*real_run {
                    <ExportBar report={report.clone()} stem="pipemorph" id_prefix="pipemorph-" />
                    <ReportView report={report.clone()} chart_titles={CHART_TITLES.iter().map(|(k, t)| (k.to_string(), t.to_string())).collect::<Vec<_>>()} />
                }
            </section>
            }} />
    }
}
