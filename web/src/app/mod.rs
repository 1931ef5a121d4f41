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

/// A lab's page: its name (the core's [`bubblelab_core::scenario::LABS`] entry and the route
/// `#/<lab>`), its link text in the navigation, and the page given a share link's payload.
struct LabPage {
    lab: &'static str,
    nav: &'static str,
    page: fn(Option<String>) -> Html,
}

/// Every lab's page, in the navigation's order: the one list the routes, the pages and the
/// navigation come from (`web/tests/app.rs` checks that every lab of the core has its route,
/// its link and its card on the home page).
const LAB_PAGES: [LabPage; 9] = [
    LabPage {
        lab: "pipeline",
        nav: "Pipeline",
        page: |payload| html! { <pipeline::PipelineLab {payload} /> },
    },
    LabPage {
        lab: "overlap",
        nav: "Overlap",
        page: |payload| html! { <overlap::OverlapLab {payload} /> },
    },
    LabPage {
        lab: "bubbles",
        nav: "Bubbles",
        page: |payload| html! { <bubbles::BubblesLab {payload} /> },
    },
    LabPage {
        lab: "tuning",
        nav: "Tuning",
        page: |payload| html! { <tuning::TuningLab {payload} /> },
    },
    LabPage {
        lab: "fairness",
        nav: "Fairness",
        page: |payload| html! { <fairness::FairnessLab {payload} /> },
    },
    LabPage {
        lab: "agentic",
        nav: "Agents",
        page: |payload| html! { <agentic::AgenticLab {payload} /> },
    },
    LabPage {
        lab: "resilience",
        nav: "Resilience",
        page: |payload| html! { <resilience::ResilienceLab {payload} /> },
    },
    LabPage {
        lab: "migration",
        nav: "Migration",
        page: |payload| html! { <migration::MigrationLab {payload} /> },
    },
    LabPage {
        lab: "cost",
        nav: "Cost models",
        page: |payload| html! { <cost::CostExplorer {payload} /> },
    },
];

/// The pages of the playground.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// The map of the field.
    Home,
    /// A lab (an entry of [`LAB_PAGES`]), maybe with a shared scenario payload.
    Lab {
        /// The lab's name.
        lab: &'static str,
        /// The `s=` payload of a share link.
        payload: Option<String>,
    },
    /// The Kineto trace view.
    Trace,
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
            "trace" => Route::Trace,
            other => match LAB_PAGES.iter().find(|p| p.lab == other) {
                Some(p) => Route::Lab {
                    lab: p.lab,
                    payload,
                },
                None => Route::NotFound(other.to_string()),
            },
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
        Route::Trace => html! { <trace::TraceView /> },
        Route::Lab { lab, payload } => LAB_PAGES
            .iter()
            .find(|p| p.lab == *lab)
            .map_or_else(Html::default, |p| (p.page)(payload.clone())),
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
                    { for LAB_PAGES.iter().map(|p| html! { <a href={format!("#/{}", p.lab)}>{ p.nav }</a> }) }
                    <a href="#/trace">{ "Traces" }</a>
                </nav>
            </header>
            <main>{ page }</main>
        </>
    }
}
