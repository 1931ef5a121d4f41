//! Compare two runs in the page: pin the run on screen as A, change a field, and the next run
//! (B) is shown beside A — the metric table with B − A and B / A, the parameters that differ,
//! each curve of B dashed over A's in the same colour, both runs' timelines on one time axis.
//! The pin is the app's, so A stays while the page's form changes; it compares only with runs
//! of its lab. A compare link (`#/<lab>?s=<B>&a=<A>`) pins A's scenario, which the panel runs
//! in a worker of its own.

use std::rc::Rc;

use bubblelab_core::{compare, share, Report, Scenario};
use yew::prelude::*;

use super::report_view::ReportView;
use super::timeline::Shared;
use crate::worker::client::{use_worker, RunRequest};

/// The run pinned as A: its scenario and Report (none yet when a compare link pinned it).
#[derive(Clone, PartialEq)]
pub struct PinnedRun {
    /// The scenario the run came from.
    pub scenario: Scenario,
    /// Its Report, once run.
    pub report: Option<Shared<Report>>,
    /// The input files it read (slot, `name, N bytes`); a compare link carries none.
    pub inputs: Vec<(String, String)>,
}

/// The app-wide pin (provided by the app shell).
pub type PinHandle = UseStateHandle<Option<Rc<PinnedRun>>>;

/// Properties of [`ComparePanel`].
#[derive(Properties, PartialEq)]
pub struct ComparePanelProps {
    /// The run on screen.
    pub report: Shared<Report>,
    /// Its scenario as JSON.
    pub scenario_json: AttrValue,
    /// The input files it read (slot, `name, N bytes`).
    #[prop_or_default]
    pub inputs: Vec<(String, String)>,
}

/// The pin button and, once A is pinned and another run of the lab is on screen, A and B
/// compared.
#[function_component(ComparePanel)]
pub fn compare_panel(props: &ComparePanelProps) -> Html {
    let pin = use_context::<PinHandle>();
    let current = use_memo(props.scenario_json.clone(), |json| {
        Scenario::from_json(json).ok()
    });
    let pinned = pin
        .as_ref()
        .and_then(|p| (**p).clone())
        .filter(|p| Some(p.scenario.lab()) == (*current).as_ref().map(Scenario::lab));
    // A pinned by a compare link: run it once, then pin it with its Report.
    let worker = use_worker();
    {
        let (pin, worker) = (pin.clone(), worker.clone());
        use_effect_with(pinned.clone(), move |pinned| {
            if let (Some(pin), Some(p)) = (pin, pinned.as_ref().filter(|p| p.report.is_none())) {
                let scenario = p.scenario.clone();
                let request = RunRequest::run(&scenario, Vec::new());
                worker.run(
                    request,
                    Callback::from(move |outcome: crate::worker::client::Outcome| {
                        if let Some(report) =
                            outcome.ok().and_then(crate::worker::Output::into_report)
                        {
                            pin.set(Some(Rc::new(PinnedRun {
                                scenario: scenario.clone(),
                                report: Some(Shared(Rc::new(report))),
                                inputs: Vec::new(),
                            })));
                        }
                    }),
                );
            }
            || ()
        });
    }
    let compared = use_memo(
        (
            pinned.clone(),
            props.report.clone(),
            current.clone(),
            props.inputs.clone(),
        ),
        |(pinned, report, current, inputs)| {
            let (pinned, current) = (pinned.as_ref()?, (**current).as_ref()?);
            let pinned_report = pinned.report.as_ref()?;
            if pinned_report == report {
                return None;
            }
            Some(
                compare::compare_with_inputs(
                    (&pinned.scenario, &pinned_report.0, &pinned.inputs),
                    (current, &report.0, inputs),
                )
                .map(|r| {
                    (
                        Shared(Rc::new(r)),
                        share::compare_fragment(&pinned.scenario, current),
                    )
                })
                .map_err(|e| e.to_string()),
            )
        },
    );
    let (Some(pin), Some(scenario)) = (pin, (*current).clone()) else {
        return html! {};
    };
    let on_pin = {
        let (pin, report, inputs) = (pin.clone(), props.report.clone(), props.inputs.clone());
        Callback::from(move |_: MouseEvent| {
            pin.set(Some(Rc::new(PinnedRun {
                scenario: scenario.clone(),
                report: Some(report.clone()),
                inputs: inputs.clone(),
            })));
        })
    };
    let with_files =
        !props.inputs.is_empty() || pinned.as_ref().is_some_and(|p| !p.inputs.is_empty());
    let on_unpin = {
        let pin = pin.clone();
        Callback::from(move |_: MouseEvent| pin.set(None))
    };
    let body = match (&pinned, (*compared).clone()) {
        (None, _) => html! {},
        (Some(p), None) if p.report.is_none() => html! {
            <p class="muted" id="compare-hint">{ "Running A, the run the link pinned…" }</p>
        },
        (Some(_), None) => html! {
            <p class="muted" id="compare-hint">{ "This run is pinned as A. Change a field: the next run is B, shown beside A here." }</p>
        },
        (Some(_), Some(Err(message))) => html! { <p class="field-error">{ message }</p> },
        (Some(_), Some(Ok((report, fragment)))) => html! {
            <section class="compare" id="compare" aria-label="Run A (pinned) and run B (on screen) compared">
                <h2>{ "A (pinned) and B (this run)" }</h2>
                <p>
                    <a id="compare-link" href={fragment}>{ "Link to this comparison" }</a>
                    if with_files {
                        <span class="muted">{ " (the link carries both scenarios, not the files a run read: whoever opens it runs the scenarios on their own inputs)" }</span>
                    }
                </p>
                <ReportView report={report} shared_time_axis=true />
            </section>
        },
    };
    html! {
        <div class="compare-bar">
            <button type="button" id="compare-pin" onclick={on_pin}>
                { if pinned.is_some() { "Pin this run as A instead" } else { "Pin this run as A, to compare" } }
            </button>
            if pinned.is_some() {
                <button type="button" id="compare-unpin" onclick={on_unpin}>{ "Unpin A" }</button>
            }
            { body }
        </div>
    }
}
