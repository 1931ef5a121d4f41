//! The cost-model explorer's page parts: pick a GPU, a collective, a message and group size,
//! and a GEMM on the generic page; see the times, the bus bandwidth and the curves of the
//! kernel's cost models. Measured points from a Vidur NCCL profile (`all_reduce.csv`,
//! `send_recv.csv`) are the lab's input slot, laid over the curves by the core.

use bubblelab_core::hw::GpuKind;
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::generic::{PageParts, State};
use crate::components::params_form::{edit, text_at, FormPage, PageHandle};

/// What the cost page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "The kernel every lab shares: GEMM time from a roofline with a size-dependent efficiency, \
                   collective time from the alpha-beta model (ring AllReduce 2(p−1)α + 2(p−1)/p·n/β, \
                   AllGather/ReduceScatter/AllToAll (p−1)α + (p−1)/p·n/β, P2P α + n/β) over NVLink inside a node and \
                   the NIC between nodes. Open a Vidur NCCL profile to see the measured points next to the model.",
    controls: Some(gpu_menu),
    drawn: &["gpu"],
    main: &[
        "collective",
        "bytes",
        "ranks",
        "ranks_per_node",
        "gemm_m",
        "gemm_n",
        "gemm_k",
    ],
    charts: &[
        ("collective_time", "Collective time by message size"),
        ("bus_bandwidth", "Bus bandwidth by message size"),
        ("gemm_efficiency", "GEMM efficiency by size"),
    ],
    ..PageParts::PLAIN
};

/// The GPUs by name.
fn gpu_menu(state: &PageHandle<State>) -> Html {
    let chosen = text_at(&state.form_ref().params, "gpu");
    let onchange = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let id = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                next.form().set("gpu", Value::from(id));
                next.rerun(true);
            });
        })
    };
    html! {
        <div class="field">
            <label for="field-gpu">{ "GPU" }</label>
            <select id="field-gpu" {onchange}>
                { for GpuKind::ALL.iter().map(|g| html! { <option value={g.id()} selected={chosen == g.id()}>{ g.label() }</option> }) }
            </select>
        </div>
    }
}
