//! Export buttons: Chrome trace JSON (opens in Perfetto), Report JSON, CSV, the scenario, and
//! its share link.

use bubblelab_core::Report;
use yew::prelude::*;

use super::compare::ComparePanel;
use super::timeline::Shared;
use crate::browser;

/// Properties of [`ExportBar`].
#[derive(Properties, PartialEq)]
pub struct ExportBarProps {
    /// The report to export.
    pub report: Shared<Report>,
    /// File name stem, e.g. `pipeline`.
    pub stem: AttrValue,
    /// Prefix of the buttons' element ids (`<prefix>export-trace`, …), for pages with two bars.
    #[prop_or_default]
    pub id_prefix: AttrValue,
    /// The scenario JSON, if the report came from a scenario (it also offers to pin the run as
    /// A and compare the next run with it).
    #[prop_or_default]
    pub scenario_json: Option<AttrValue>,
    /// The input files the run read, (slot, `name, N bytes`) ([`Form::shown_inputs`]), so that
    /// a compared run on an upload says so.
    ///
    /// [`Form::shown_inputs`]: super::params_form::Form::shown_inputs
    #[prop_or_default]
    pub inputs: Vec<(String, String)>,
}

/// Buttons that download the report in each format.
#[function_component(ExportBar)]
pub fn export_bar(props: &ExportBarProps) -> Html {
    let prefix = props.id_prefix.clone();
    let button = |id: &'static str,
                  label: &'static str,
                  file: String,
                  mime: &'static str,
                  make: Box<dyn Fn() -> String>| {
        let onclick = Callback::from(move |_: MouseEvent| browser::download(&file, mime, &make()));
        html! { <button id={format!("{prefix}{id}")} {onclick}>{ label }</button> }
    };
    let stem = props.stem.to_string();
    let r1 = props.report.clone();
    let r2 = props.report.clone();
    let r3 = props.report.clone();
    let share_url = use_state(|| None::<String>);
    let on_share = props.scenario_json.clone().map(|json| {
        let share_url = share_url.clone();
        Callback::from(move |_: MouseEvent| {
            if let Ok(scenario) = bubblelab_core::Scenario::from_json(&json) {
                let fragment = bubblelab_core::share::fragment(&scenario);
                browser::replace_hash(&fragment);
                let url = format!("{}{fragment}", browser::base_url());
                browser::copy_to_clipboard(&url);
                share_url.set(Some(url));
            }
        })
    });
    html! {
        <>
        <div class="export">
            <span class="muted">{ "Export: " }</span>
            { button("export-trace", "Chrome trace", format!("{stem}.trace.json"), "application/json",
                Box::new(move || bubblelab_core::trace::to_chrome_trace(&r1.0))) }
            { button("export-report", "Report JSON", format!("{stem}.report.json"), "application/json",
                Box::new(move || r2.0.to_json_pretty())) }
            { button("export-csv", "CSV", format!("{stem}.csv"), "text/csv", Box::new(move || r3.0.to_csv())) }
            if let Some(json) = props.scenario_json.clone() {
                { button("export-scenario", "Scenario", format!("{stem}.scenario.json"), "application/json",
                    Box::new(move || json.to_string())) }
            }
            if let Some(onclick) = on_share {
                <button id={format!("{prefix}share")} {onclick}>{ "Share link" }</button>
            }
        </div>
        if let Some(url) = &*share_url {
            <p class="share">
                <input id={format!("{prefix}share-url")} class="share-url" readonly=true value={url.clone()} aria-label="share link" />
                <span class="muted">{ "Copied to the clipboard (if the browser allowed it) and put in the address bar." }</span>
            </p>
        }
        if let Some(json) = props.scenario_json.clone() {
            <ComparePanel report={props.report.clone()} scenario_json={json} inputs={props.inputs.clone()} />
        }
        </>
    }
}
