//! Routes and the app shell. Routes live in the URL fragment so that a static file server can
//! host the page and a share link is one URL: `#/` is home, `#/<lab>` a lab with its default
//! scenario, `#/<lab>?s=<payload>` a lab with a shared scenario.

mod agentic;
mod bubbles;
mod cost;
mod fairness;
mod home;
mod migration;
mod overlap;
pub mod pipeline;
mod resilience;
mod trace;
mod tuning;

use bubblelab_core::share::{parse_fragment, Route as LinkRoute};
use gloo::events::EventListener;
use yew::prelude::*;

use crate::browser;

/// The pages of the playground.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// The map of the field.
    Home,
    /// The pipeline lab, maybe with a shared scenario payload.
    Pipeline {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The fairness lab, maybe with a shared scenario payload.
    Fairness {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The agentic lab, maybe with a shared scenario payload.
    Agentic {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The overlap lab, maybe with a shared scenario payload.
    Overlap {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The resilience lab, maybe with a shared scenario payload.
    Resilience {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The bubbles lab, maybe with a shared scenario payload.
    Bubbles {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The tuning lab, maybe with a shared scenario payload.
    Tuning {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The migration lab, maybe with a shared scenario payload.
    Migration {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The Kineto trace view.
    Trace,
    /// The cost-model explorer, maybe with a shared scenario payload.
    Cost {
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// A route this build does not know.
    NotFound(String),
}

impl Route {
    /// The route of a URL fragment.
    #[must_use]
    pub fn from_fragment(fragment: &str) -> Route {
        let LinkRoute { lab, payload } = parse_fragment(fragment);
        match lab.as_str() {
            "" => Route::Home,
            "pipeline" => Route::Pipeline { payload },
            "trace" => Route::Trace,
            "fairness" => Route::Fairness { payload },
            "agentic" => Route::Agentic { payload },
            "overlap" => Route::Overlap { payload },
            "resilience" => Route::Resilience { payload },
            "bubbles" => Route::Bubbles { payload },
            "tuning" => Route::Tuning { payload },
            "migration" => Route::Migration { payload },
            "cost" => Route::Cost { payload },
            other => Route::NotFound(other.to_string()),
        }
    }
}

/// The app shell: header with navigation, then the current route's page.
#[function_component(App)]
pub fn app() -> Html {
    let route = use_state(|| Route::from_fragment(&browser::hash()));
    {
        let route = route.clone();
        use_effect_with((), move |()| {
            let listener = EventListener::new(&gloo::utils::window(), "hashchange", move |_| {
                route.set(Route::from_fragment(&browser::hash()));
            });
            move || drop(listener)
        });
    }
    let page = match &*route {
        Route::Home => html! { <home::Home /> },
        Route::Pipeline { payload } => {
            html! { <pipeline::PipelineLab payload={payload.clone()} /> }
        }
        Route::Trace => html! { <trace::TraceView /> },
        Route::Fairness { payload } => {
            html! { <fairness::FairnessLab payload={payload.clone()} /> }
        }
        Route::Agentic { payload } => {
            html! { <agentic::AgenticLab payload={payload.clone()} /> }
        }
        Route::Overlap { payload } => {
            html! { <overlap::OverlapLab payload={payload.clone()} /> }
        }
        Route::Resilience { payload } => {
            html! { <resilience::ResilienceLab payload={payload.clone()} /> }
        }
        Route::Bubbles { payload } => {
            html! { <bubbles::BubblesLab payload={payload.clone()} /> }
        }
        Route::Tuning { payload } => {
            html! { <tuning::TuningLab payload={payload.clone()} /> }
        }
        Route::Migration { payload } => {
            html! { <migration::MigrationLab payload={payload.clone()} /> }
        }
        Route::Cost { payload } => html! { <cost::CostExplorer payload={payload.clone()} /> },
        Route::NotFound(lab) => html! {
            <section class="page" id="not-found">
                <h1>{ "No such lab" }</h1>
                <p>{ format!("This build has no lab called “{lab}”. ") }<a href="#/">{ "See the labs that exist." }</a></p>
            </section>
        },
    };
    html! {
        <>
            <header class="top">
                <a class="brand" href="#/">{ "bubblelab" }</a>
                <nav>
                    <a href="#/">{ "Labs" }</a>
                    <a href="#/pipeline">{ "Pipeline" }</a>
                    <a href="#/overlap">{ "Overlap" }</a>
                    <a href="#/bubbles">{ "Bubbles" }</a>
                    <a href="#/tuning">{ "Tuning" }</a>
                    <a href="#/fairness">{ "Fairness" }</a>
                    <a href="#/agentic">{ "Agents" }</a>
                    <a href="#/resilience">{ "Resilience" }</a>
                    <a href="#/migration">{ "Migration" }</a>
                    <a href="#/cost">{ "Cost models" }</a>
                    <a href="#/trace">{ "Traces" }</a>
                </nav>
            </header>
            <main>{ page }</main>
        </>
    }
}
