//! Routes and the app shell. Routes live in the URL fragment so that a static file server can
//! host the page and a share link is one URL: `#/` is home, `#/<lab>` a lab with its default
//! scenario, `#/<lab>?s=<payload>` a lab with a shared scenario.

mod agentic;
mod bubbles;
mod cost;
mod elastic;
mod fairness;
pub mod generic;
mod home;
mod migration;
mod overlap;
pub mod pipeline;
mod resilience;
mod sharing;
mod tours;
mod trace;
mod tuning;

use bubblelab_core::share::{parse_fragment, Route as LinkRoute};
use gloo::events::EventListener;
use yew::prelude::*;

use crate::browser;
use crate::components::compare::{PinHandle, PinnedRun};
use bubblelab_core::labs::{LABS, LAB_CARDS};
pub use generic::{GenericLab, GenericLabProps};

/// What the generic page of a lab has beyond the lab's card and field table (its lede, main
/// fields, charts' titles, and what it adds to the form and after the Report).
const PAGE_PARTS: &[(&str, &generic::PageParts)] = &[
    ("tuning", &tuning::PARTS),
    ("migration", &migration::PARTS),
    ("elastic", &elastic::PARTS),
    ("bubbles", &bubbles::PARTS),
    ("agentic", &agentic::PARTS),
    ("overlap", &overlap::PARTS),
    ("cost", &cost::PARTS),
    ("resilience", &resilience::PARTS),
    ("pipeline", &pipeline::PARTS),
    ("sharing", &sharing::PARTS),
    ("fairness", &fairness::PARTS),
];

/// The parts of lab `lab`'s generic page, if it has any.
#[must_use]
pub fn parts_of(lab: &str) -> Option<&'static generic::PageParts> {
    PAGE_PARTS.iter().find(|(l, _)| *l == lab).map(|(_, p)| *p)
}

/// The pages of the playground.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// The map of the field.
    Home,
    /// A lab (an entry of the core's `LABS`), maybe with a shared scenario payload.
    Lab {
        /// The lab's name.
        lab: &'static str,
        /// The `s=` payload of a share link.
        payload: Option<String>,
        /// The `a=` payload of a compare link: the run pinned as A.
        pinned: Option<String>,
    },
    /// The Kineto trace view.
    Trace,
    /// The tours: the list, a shipped tour or a tour link.
    Tours(tours::Opened),
    /// A route this build does not know.
    NotFound(String),
}

impl Route {
    /// The route of a URL fragment.
    #[must_use]
    pub fn from_fragment(fragment: &str) -> Route {
        let LinkRoute {
            lab,
            payload,
            pinned,
            tour,
        } = parse_fragment(fragment);
        if let Some(rest) = lab.strip_prefix("tours") {
            return match (rest.strip_prefix('/'), tour) {
                (_, Some(payload)) => Route::Tours(tours::Opened::Link(payload)),
                (Some(id), None) if !id.is_empty() => {
                    Route::Tours(tours::Opened::Builtin(id.to_string()))
                }
                _ if rest.is_empty() => Route::Tours(tours::Opened::List),
                _ => Route::NotFound(lab),
            };
        }
        match lab.as_str() {
            "" => Route::Home,
            "trace" => Route::Trace,
            other => match LABS.iter().find(|l| **l == other) {
                Some(lab) => Route::Lab {
                    lab,
                    payload,
                    pinned,
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
        Route::Tours(opened) => html! { <tours::Tours opened={opened.clone()} /> },
        Route::Lab { lab, payload, .. } => {
            // A new link (a lab, or another scenario of this one) opens a new page.
            let key = format!("{lab}?{}", payload.as_deref().unwrap_or(""));
            html! { <generic::GenericLab {key} lab={*lab} payload={payload.clone()} parts={parts_of(lab)} /> }
        }
        Route::NotFound(lab) => html! {
            <section class="page" id="not-found">
                <h1>{ "No such lab" }</h1>
                <p>{ format!("This build has no lab called “{lab}”. ") }<a href="#/">{ "See the labs that exist." }</a></p>
            </section>
        },
    };
    let pin: PinHandle = use_state(|| None);
    // A compare link pins its run A (the compare panel runs it) before the page opens run B.
    {
        let pin = pin.clone();
        use_effect_with(route.clone(), move |route| {
            if let Route::Lab {
                lab,
                pinned: Some(payload),
                ..
            } = &**route
            {
                if let Ok(scenario) = bubblelab_core::share::decode_for_lab(lab, payload) {
                    pin.set(Some(std::rc::Rc::new(PinnedRun {
                        scenario,
                        report: None,
                        inputs: Vec::new(),
                    })));
                }
            }
            || ()
        });
    }
    html! {
        <ContextProvider<PinHandle> context={pin}>
            <header class="top">
                <a class="brand" href="#/">{ "bubblelab" }</a>
                <nav>
                    <a href="#/">{ "Labs" }</a>
                    <a href="#/tours">{ "Tours" }</a>
                    { for LABS.iter().zip(LAB_CARDS).map(|(lab, card)| html! { <a href={format!("#/{lab}")}>{ card.nav }</a> }) }
                    <a href="#/trace">{ "Traces" }</a>
                </nav>
            </header>
            <main>{ page }</main>
        </ContextProvider<PinHandle>>
    }
}
