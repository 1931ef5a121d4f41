//! The one lab page: title and lede, the link banner, the form (preset menu, then the lab's own
//! controls) beside the results (run status, export bar, the Report with the lab's picture).
//! A lab's page states only what is its own — its controls, picture and chart titles — so every
//! page has the same layout, order and element ids.

use bubblelab_core::{Report, Scenario};
use yew::prelude::*;

use crate::components::export::ExportBar;
use crate::components::lab_chrome::{Controls, LinkErrorBanner, PresetSelect};
use crate::components::report_view::ReportView;
use crate::components::timeline::Shared;
use crate::worker::client::{RunStatus, WorkerHandle};

/// Properties of [`LabPage`].
#[derive(Properties, PartialEq)]
pub struct LabPageProps {
    /// The lab (the section's id is `lab-<lab>`; the preset menu's lab; export file stem).
    pub lab: &'static str,
    /// The page's heading.
    pub title: AttrValue,
    /// What the lab shows and why, under the heading.
    pub lede: Html,
    /// Why the share link could not be opened, if it could not.
    #[prop_or_default]
    pub link_error: Option<String>,
    /// The scenario on screen (JSON): names its preset, and is exported with the Report.
    #[prop_or_default]
    pub shown: Option<AttrValue>,
    /// The uploaded files the export names (slot, file name).
    #[prop_or_default]
    pub inputs: Vec<(String, String)>,
    /// A preset was chosen.
    pub on_pick: Callback<(&'static str, Scenario)>,
    /// The lab's own fields, uploads and notes, below the preset menu.
    pub controls: Html,
    /// The page's worker.
    pub worker: WorkerHandle,
    /// What one step of a run is, for the progress text.
    #[prop_or(AttrValue::Static("steps"))]
    pub unit: AttrValue,
    /// Why the worker failed.
    #[prop_or_default]
    pub worker_error: Option<String>,
    /// The Report shown.
    pub report: Shared<Report>,
    /// The lab's picture, first in the Report's view.
    #[prop_or_default]
    pub picture: Html,
    /// Titles of the Report's charts by series id.
    #[prop_or_default]
    pub chart_titles: Vec<(String, String)>,
    /// Charts before tables.
    #[prop_or_default]
    pub charts_first: bool,
    /// Charts stacked one above the other rather than side by side.
    #[prop_or_default]
    pub stacked_charts: bool,
    /// Anything shown after the Report.
    #[prop_or_default]
    pub after: Html,
}

/// A lab's page around its own controls and picture.
#[function_component(LabPage)]
pub fn lab_page(props: &LabPageProps) -> Html {
    let results = if props.stacked_charts {
        "results stacked-charts"
    } else {
        "results"
    };
    html! {
        <section class="page" id={format!("lab-{}", props.lab)}>
            <h1>{ props.title.clone() }</h1>
            <p class="lede">{ props.lede.clone() }</p>
            <LinkErrorBanner message={props.link_error.clone()} />
            <div class="lab-grid">
                <Controls>
                    <PresetSelect lab={props.lab} shown={props.shown.clone()} on_pick={props.on_pick.clone()} />
                    { props.controls.clone() }
                </Controls>
                <div class={results}>
                    <RunStatus worker={props.worker.clone()} unit={props.unit.clone()} error={props.worker_error.clone()} />
                    <ExportBar report={props.report.clone()} stem={props.lab} scenario_json={props.shown.clone()} inputs={props.inputs.clone()} />
                    <ReportView report={props.report.clone()} picture={props.picture.clone()}
                        chart_titles={props.chart_titles.clone()} charts_first={props.charts_first} />
                    { props.after.clone() }
                </div>
            </div>
        </section>
    }
}
