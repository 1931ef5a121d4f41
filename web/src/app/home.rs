//! The home page: a map of the field, one card per lab that exists (from `LAB_PAGES`).

use yew::prelude::*;

use super::LAB_PAGES;

/// A lab's card on the home page (a row of `LAB_PAGES`).
pub(super) enum Card {
    /// A card under "Labs": the problem, the systems, their key idea and the headline claim.
    Lab {
        title: &'static str,
        problem: &'static str,
        system: &'static str,
        idea: &'static str,
        claim: &'static str,
    },
    /// A card under "Tools every lab shares": a title and what the tool shows.
    Tool {
        title: &'static str,
        text: &'static str,
    },
}

/// The map of the field.
#[function_component(Home)]
pub fn home() -> Html {
    html! {
        <section class="page" id="home">
            <h1>{ "Where do GPU clusters lose their time?" }</h1>
            <p class="lede">
                { "bubblelab simulates the scheduling problems of large-model training and serving — \
                   communication bubbles, pipeline bubbles, stragglers, KV-cache thrashing, unfair \
                   shares — with the algorithms of the systems that attack them. Every scenario is \
                   a link you can share; every run exports a Chrome trace for Perfetto." }
            </p>
            <p class="lede" id="home-tours">
                { "New to these problems? " }
                <a href="#/tours">{ "Take a tour" }</a>
                { ": predict what a scenario will show, run it, and read why — one tour per lab." }
            </p>
            <h2>{ "Labs" }</h2>
            <div class="cards">
                { for LAB_PAGES.iter().filter_map(|p| match p.card {
                    Card::Lab { title, problem, system, idea, claim } => Some(html! {
                        <article class="lab-card" data-lab={p.lab}>
                            <h2><a href={format!("#/{}", p.lab)}>{ title }</a></h2>
                            <dl>
                                <dt>{ "Problem" }</dt><dd>{ problem }</dd>
                                <dt>{ "Systems" }</dt><dd>{ system }</dd>
                                <dt>{ "Key idea" }</dt><dd>{ idea }</dd>
                                <dt>{ "Headline" }</dt><dd>{ claim }</dd>
                            </dl>
                            <a class="open" href={format!("#/{}", p.lab)}>{ "Open the lab →" }</a>
                        </article>
                    }),
                    Card::Tool { .. } => None,
                }) }
            </div>
            <h2>{ "Tools every lab shares" }</h2>
            <div class="cards tools">
                { for LAB_PAGES.iter().filter_map(|p| match p.card {
                    Card::Tool { title, text } => Some(html! {
                        <article class="lab-card" data-lab={p.lab}>
                            <h2><a href={format!("#/{}", p.lab)}>{ title }</a></h2>
                            <p>{ text }</p>
                        </article>
                    }),
                    Card::Lab { .. } => None,
                }) }
                <article class="lab-card" data-lab="trace">
                    <h2><a href="#/trace">{ "Kineto traces" }</a></h2>
                    <p>{ "Open PyTorch profiler traces of a multi-GPU job: every rank's GPU streams on one timeline, and how much of its NCCL time hides under compute (Holistic Trace Analysis's overlap metric)." }</p>
                </article>
            </div>
        </section>
    }
}
