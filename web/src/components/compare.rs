//! Compare two runs in the page: pin the run on screen as A, change a field, and the next run
//! (B) is shown beside A — the metric table with B − A and B / A, the parameters that differ,
//! each curve of B dashed over A's in the same colour, both runs' timelines on one time axis.
//! The pin is the app's, so A stays while the page's form changes; it compares only with runs
//! of its lab.

use std::rc::Rc;

use bubblelab_core::{compare, Report, Scenario};
use yew::prelude::*;

use super::report_view::ReportView;
use super::timeline::Shared;

/// The run pinned as A: its scenario and Report.
#[derive(Clone, PartialEq)]
pub struct PinnedRun {
    /// The scenario the run came from.
    pub scenario: Scenario,
    /// Its Report.
    pub report: Shared<Report>,
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
    let compared = use_memo(
        (pinned.clone(), props.report.clone(), current.clone()),
        |(pinned, report, current)| {
            let (pinned, current) = (pinned.as_ref()?, (**current).as_ref()?);
            if pinned.report == *report {
                return None;
            }
            Some(
                compare::compare(&pinned.scenario, &pinned.report.0, current, &report.0)
                    .map(|r| Shared(Rc::new(r)))
                    .map_err(|e| e.to_string()),
            )
        },
    );
    let (Some(pin), Some(scenario)) = (pin, (*current).clone()) else {
        return html! {};
    };
    let on_pin = {
        let (pin, report) = (pin.clone(), props.report.clone());
        Callback::from(move |_: MouseEvent| {
            pin.set(Some(Rc::new(PinnedRun {
                scenario: scenario.clone(),
                report: report.clone(),
            })));
        })
    };
    let on_unpin = {
        let pin = pin.clone();
        Callback::from(move |_: MouseEvent| pin.set(None))
    };
    let body = match (&pinned, (*compared).clone()) {
        (None, _) => html! {},
        (Some(_), None) => html! {
            <p class="muted" id="compare-hint">{ "This run is pinned as A. Change a field: the next run is B, shown beside A here." }</p>
        },
        (Some(_), Some(Err(message))) => html! { <p class="field-error">{ message }</p> },
        (Some(_), Some(Ok(report))) => html! {
            <section class="compare" id="compare" aria-label="Run A (pinned) and run B (on screen) compared">
                <h2>{ "A (pinned) and B (this run)" }</h2>
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
