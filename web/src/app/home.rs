//! The home page: a map of the field, one card per lab of the core (its `CARD`, collected by
//! the registry as `LAB_CARDS`).

use yew::prelude::*;

use bubblelab_core::labs::{LABS, LAB_CARDS};
use bubblelab_core::presets::CardBody;

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
                { for LABS.iter().zip(LAB_CARDS).filter_map(|(lab, card)| match card.body {
                    CardBody::Lab { problem, system, idea, claim } => Some(html! {
                        <article class="lab-card" data-lab={*lab}>
                            <h2><a href={format!("#/{lab}")}>{ card.title }</a></h2>
                            <dl>
                                <dt>{ "Problem" }</dt><dd>{ problem }</dd>
                                <dt>{ "Systems" }</dt><dd>{ system }</dd>
                                <dt>{ "Key idea" }</dt><dd>{ idea }</dd>
                                <dt>{ "Headline" }</dt><dd>{ claim }</dd>
                            </dl>
                            <a class="open" href={format!("#/{lab}")}>{ "Open the lab →" }</a>
                        </article>
                    }),
                    CardBody::Tool { .. } => None,
                }) }
            </div>
            <h2>{ "Tools every lab shares" }</h2>
            <div class="cards tools">
                { for LABS.iter().zip(LAB_CARDS).filter_map(|(lab, card)| match card.body {
                    CardBody::Tool { text } => Some(html! {
                        <article class="lab-card" data-lab={*lab}>
                            <h2><a href={format!("#/{lab}")}>{ card.title }</a></h2>
                            <p>{ text }</p>
                        </article>
                    }),
                    CardBody::Lab { .. } => None,
                }) }
                <article class="lab-card" data-lab="trace">
                    <h2><a href="#/trace">{ "Kineto traces" }</a></h2>
                    <p>{ "Open PyTorch profiler traces of a multi-GPU job: every rank's GPU streams on one timeline, and how much of its NCCL time hides under compute (Holistic Trace Analysis's overlap metric)." }</p>
                </article>
            </div>
        </section>
    }
}
