//! Routes and the app shell. Routes live in the URL fragment so that a static file server can
//! host the page and a share link is one URL: `#/` is home, `#/<lab>` a lab with its default
//! scenario, `#/<lab>?s=<payload>` a lab with a shared scenario.

mod agentic;
mod bubbles;
mod cost;
mod elastic;
mod fairness;
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
use home::Card;

/// A lab's page: its name (the core's [`bubblelab_core::scenario::LABS`] entry and the route
/// `#/<lab>`), its link text in the navigation, the page given a share link's payload, and its
/// card on the home page.
struct LabPage {
    lab: &'static str,
    nav: &'static str,
    page: fn(Option<String>) -> Html,
    card: Card,
}

/// Every lab's page, in the navigation's order: the one list the routes, the pages, the
/// navigation and the home page's cards come from (`web/tests/app.rs` checks that every lab of
/// the core has its route, its link and its card on the home page).
const LAB_PAGES: &[LabPage] = &[
    LabPage {
        lab: "pipeline",
        nav: "Pipeline",
        page: |payload| html! { <pipeline::PipelineLab {payload} /> },
        card: Card::Lab {
            title: "Pipeline bubbles",
            problem: "With p pipeline stages, each stage idles while it waits for its neighbours: at the start of an iteration, at the end, and wherever a slow stage or link holds the others up.",
            system: "GPipe · 1F1B · interleaved 1F1B (Megatron-LM) · ZB-H1, ZB-H2, ZB-V (zero bubble) · DualPipe, DualPipeV (DeepSeek-V3)",
            idea: "Reorder each stage's forward and backward passes: 1F1B bounds activation memory, interleaving gives each device v model chunks, zero-bubble splits the backward and moves weight gradients into the gaps, DualPipe feeds micro-batches in from both ends.",
            claim: "Bubble ratio (p−1)/(m+p−1) for GPipe and 1F1B; interleaving divides the bubble time by v; ZB-H1 leaves a third of 1F1B's bubble when F = B = W, ZB-H2 and ZB-V none per device span; DualPipe (PP/2−1)(F&B+B−3W).",
        },
    },
    LabPage {
        lab: "overlap",
        nav: "Overlap",
        page: |payload| html! { <overlap::OverlapLab {payload} /> },
        card: Card::Lab {
            title: "Hidden communication",
            problem: "Tensor, sequence and expert parallelism put collectives between the GEMMs of every layer; waiting for each one leaves the GPU idle, and hand-written overlap kernels cover one pattern each.",
            system: "Helix (tile, segmented round-robin reorder, DP bucketing under a memory budget), against serial, eager and AsyncTP-style",
            idea: "Treat overlap as scheduling the compiled graph: split operators into tile streams, interleave the streams so one's communication runs under another's computation, merge tiles back where the simulator says it pays.",
            claim: "Layer-level exposed communication cut by more than 60 % against serial; 4–9 % faster iterations inside a node, 12–30 % across nodes (seed's numbers; ours are on the lab page and in docs/CLAIMS.md).",
        },
    },
    LabPage {
        lab: "bubbles",
        nav: "Bubbles",
        page: |payload| html! { <bubbles::BubblesLab {payload} /> },
        card: Card::Lab {
            title: "Tuning trials in pipeline bubbles",
            problem: "A pipeline-parallel training job leaves short, repeated windows on every stage where only NCCL runs (SM activity around 2 %) while memory may be free. Colocating other work blindly slows the large job.",
            system: "Hydro's Bubble Squeezer, against the main job alone and blind colocation",
            idea: "Fuse small tuning trials into one bundle, run it only inside safe bubbles that have the memory, and pause it at a hook before each bubble ends, so the main job never waits.",
            claim: "Bubble-period SM activity from ~2 % to ~50 %, a fused bundle at ~15 % of its exclusive throughput, no slowdown against ~12 % for blind colocation, tuning 2.7× faster (seed's numbers; ours are on the lab page and in docs/CLAIMS.md).",
        },
    },
    LabPage {
        lab: "tuning",
        nav: "Tuning",
        page: |payload| html! { <tuning::TuningLab {payload} /> },
        card: Card::Lab {
            title: "Cheap tuning trials",
            problem: "Tuning a large model's hyperparameters on the model itself costs many full trainings; tuning a narrow copy finds the wrong learning rate unless the parametrization makes it transfer.",
            system: "Hydro's tuning side: μP shrinking (Tensor Programs V) and trial fusion",
            idea: "Shrink the width, re-parametrize every layer class with μP so the best hyperparameters carry over to the wide target, and fuse many small trials into one batched model.",
            claim: "Under μP the best learning rate stays put across widths while it drifts under standard parametrization (seed's claim; in our short real experiment both drift by two grid steps — see the lab page and docs/CLAIMS.md).",
        },
    },
    LabPage {
        lab: "fairness",
        nav: "Fairness",
        page: |payload| html! { <fairness::FairnessLab {payload} /> },
        card: Card::Lab {
            title: "Fair shares of a GPU cluster",
            problem: "Tenants share a cluster and jobs need all their GPUs at once. Instantaneous fair shares, least-attained-service and finish-time fairness each leave some tenant or job under-served over days of work.",
            system: "ASTRAEA, against FIFO, SJF, SRTF, Tiresias, 2DAS, largest ρ first, fair share and Gandiva-fair",
            idea: "Count GPU-time over a long window: serve the most under-served tenant first, then its most under-served job, and use leases instead of constant preemption.",
            claim: "ASTRAEA improves tenant-level fairness by up to 9.42× and job-level fairness by up to 10.3× over the baselines without hurting average JCT (seed's numbers; ours are on the lab page).",
        },
    },
    LabPage {
        lab: "agentic",
        nav: "Agents",
        page: |payload| html! { <agentic::AgenticLab {payload} /> },
        card: Card::Lab {
            title: "KV-cache thrashing of agents",
            problem: "Tool-calling agents keep long histories in the KV cache. Admitted all at once, they congest it mid-batch: the engine evicts histories that live agents need again, recomputes them, and throughput collapses before memory is formally full.",
            system: "CONCUR, against unbounded admission and static caps",
            idea: "Control how many agents are active above the engine: grow the window additively while the cache is healthy, halve it when the hit rate on histories falls or requests are preempted.",
            claim: "CONCUR's throughput up to 4.09× unbounded admission on Qwen3-32B and 1.9× on DeepSeek-V3 (seed's numbers; ours, smaller, are on the lab page and in docs/CLAIMS.md).",
        },
    },
    LabPage {
        lab: "resilience",
        nav: "Resilience",
        page: |payload| html! { <resilience::ResilienceLab {payload} /> },
        card: Card::Lab {
            title: "Fail-slow GPUs",
            problem: "In hybrid-parallel training one slow GPU drags its TP group, its pipeline stage and every data-parallel replica; raw iteration time is a poor alarm because packed sequences of varied length make healthy iterations vary.",
            system: "ResiHP, against a naive z-score and a CUSUM change-point detector, and against doing nothing, dropping replicas and checkpoint-restart",
            idea: "Predict each iteration from the work it actually holds (α·tokens + β·Σ length²), flag only persistent excess, find the slow GPU, then re-plan TP groups, pipeline layers and DP shares together.",
            claim: "About 99.4 % detection accuracy with almost no false alarms; training throughput 1.13–2.22× over the resilient baselines (seed's numbers; ours, smaller, are on the lab page and in docs/CLAIMS.md).",
        },
    },
    LabPage {
        lab: "migration",
        nav: "Migration",
        page: |payload| html! { <migration::MigrationLab {payload} /> },
        card: Card::Lab {
            title: "Pausing and moving GPU jobs",
            problem: "Preemption, defragmentation and migration need a running GPU job paused, its state saved small and correct, and resumed elsewhere; saving the framework's whole reserved pool, or checkpointing in the framework and restarting the process, makes every move expensive.",
            system: "FlowGPU-style transparent checkpoint (active memory, low point of the iteration, fixed-size-region dedup), against the reserved pool (POS-style) and framework checkpoint + restart",
            idea: "Save only memory in use, wait (boundedly) for the iteration's low point, save replicas' identical regions once, restore at the same virtual addresses so device pointers stay valid.",
            claim: "Pause 6.2–15× faster than POS, restore 12–18× faster, migration 1.7–4.5× faster than framework checkpointing (seed's numbers; ours, from the cost model, are on the lab page and in docs/CLAIMS.md).",
        },
    },
    LabPage {
        lab: "sharing",
        nav: "Sharing",
        page: |payload| html! { <sharing::SharingLab {payload} /> },
        card: Card::Lab {
            title: "GPUs in slivers",
            problem: "Pods that ask for a share of one GPU leave slivers no arriving pod can use, and whole-GPU pods need wholly free GPUs on one node: pods fail while a tenth of the cluster sits idle.",
            system: "FGD (fragmentation gradient descent), against its artifact's Random, DotProd, GpuClustering, GpuPacking and BestFit",
            idea: "Score each placement by how much it grows the node's fragmentation — the idle GPU share the usual mix of pods could not use — and take the smallest growth.",
            claim: "Up to 49 % fewer unallocated GPUs (290 GPUs) on Alibaba's openb trace (seed's numbers; ours on the real node list and half the pods: 31 % fewer than BestFit, 47 % fewer than DotProd — docs/CLAIMS.md).",
        },
    },
    LabPage {
        lab: "elastic",
        nav: "Elastic",
        page: |payload| html! { <elastic::ElasticLab {payload} /> },
        card: Card::Lab {
            title: "Jobs that grow and shrink",
            problem: "Users pick a job's GPU count and batch size once; the best choice changes as the cluster fills and as training goes on (a larger batch buys less progress per sample), so fixed choices waste GPUs or time.",
            system: "Pollux (goodput-driven co-adaptive scheduling), against its artifact's Optimus+Oracle and Tiresias",
            idea: "Model each job's goodput — throughput × statistical efficiency — and every minute re-choose all jobs' GPUs for the fairest mean goodput speedup; each job then picks its best batch size.",
            claim: "Average JCT 37–50 % below state-of-the-art schedulers given ideal configurations; in its artifact's simulator 52 % below Optimus+Oracle and 32 % below Tiresias (seed's numbers; ours on its eight workloads: 55 % and 39 % — docs/CLAIMS.md).",
        },
    },
    LabPage {
        lab: "cost",
        nav: "Cost models",
        page: |payload| html! { <cost::CostExplorer {payload} /> },
        card: Card::Tool {
            title: "Cost models",
            text: "GEMM, attention and memory-bound kernels on A100, H100 and H200; AllReduce, AllGather, ReduceScatter, AllToAll and P2P under the alpha-beta model over NVLink and InfiniBand, next to measured NCCL profiles.",
        },
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
            other => match LAB_PAGES.iter().find(|p| p.lab == other) {
                Some(p) => Route::Lab {
                    lab: p.lab,
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
        Route::Lab { lab, payload, .. } => LAB_PAGES
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
                    { for LAB_PAGES.iter().map(|p| html! { <a href={format!("#/{}", p.lab)}>{ p.nav }</a> }) }
                    <a href="#/trace">{ "Traces" }</a>
                </nav>
            </header>
            <main>{ page }</main>
        </ContextProvider<PinHandle>>
    }
}
