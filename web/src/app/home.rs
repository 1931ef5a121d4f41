//! The home page: a map of the field, one card per lab that exists.

use yew::prelude::*;

/// One lab card's content.
struct Card {
    lab: &'static str,
    title: &'static str,
    problem: &'static str,
    system: &'static str,
    idea: &'static str,
    claim: &'static str,
}

const CARDS: &[Card] = &[Card {
    lab: "pipeline",
    title: "Pipeline bubbles",
    problem: "With p pipeline stages, each stage idles while it waits for its neighbours: at the start of an iteration, at the end, and wherever a slow stage or link holds the others up.",
    system: "GPipe · 1F1B · interleaved 1F1B (Megatron-LM) · ZB-H1 (zero bubble)",
    idea: "Reorder each stage's forward and backward passes: 1F1B bounds activation memory, interleaving gives each device v model chunks, zero-bubble splits the backward and moves weight gradients into the gaps.",
    claim: "Bubble ratio (p−1)/(m+p−1) for GPipe and 1F1B; interleaving divides the bubble time by v; ZB-H1 leaves a third of 1F1B's bubble when F = B = W.",
}, Card {
    lab: "overlap",
    title: "Hidden communication",
    problem: "Tensor, sequence and expert parallelism put collectives between the GEMMs of every layer; waiting for each one leaves the GPU idle, and hand-written overlap kernels cover one pattern each.",
    system: "Helix (tile, segmented round-robin reorder, DP bucketing under a memory budget), against serial, eager and AsyncTP-style",
    idea: "Treat overlap as scheduling the compiled graph: split operators into tile streams, interleave the streams so one's communication runs under another's computation, merge tiles back where the simulator says it pays.",
    claim: "Layer-level exposed communication cut by more than 60 % against serial; 4–9 % faster iterations inside a node, 12–30 % across nodes (seed's numbers; ours are on the lab page and in docs/CLAIMS.md).",
}, Card {
    lab: "bubbles",
    title: "Tuning trials in pipeline bubbles",
    problem: "A pipeline-parallel training job leaves short, repeated windows on every stage where only NCCL runs (SM activity around 2 %) while memory may be free. Colocating other work blindly slows the large job.",
    system: "Hydro's Bubble Squeezer, against the main job alone and blind colocation",
    idea: "Fuse small tuning trials into one bundle, run it only inside safe bubbles that have the memory, and pause it at a hook before each bubble ends, so the main job never waits.",
    claim: "Bubble-period SM activity from ~2 % to ~50 %, a fused bundle at ~15 % of its exclusive throughput, no slowdown against ~12 % for blind colocation, tuning 2.7× faster (seed's numbers; ours are on the lab page and in docs/CLAIMS.md).",
}, Card {
    lab: "tuning",
    title: "Cheap tuning trials",
    problem: "Tuning a large model's hyperparameters on the model itself costs many full trainings; tuning a narrow copy finds the wrong learning rate unless the parametrization makes it transfer.",
    system: "Hydro's tuning side: μP shrinking (Tensor Programs V) and trial fusion",
    idea: "Shrink the width, re-parametrize every layer class with μP so the best hyperparameters carry over to the wide target, and fuse many small trials into one batched model.",
    claim: "Under μP the best learning rate stays put across widths while it drifts under standard parametrization (seed's claim; in our short real experiment both drift by two grid steps — see the lab page and docs/CLAIMS.md).",
}, Card {
    lab: "fairness",
    title: "Fair shares of a GPU cluster",
    problem: "Tenants share a cluster and jobs need all their GPUs at once. Instantaneous fair shares, least-attained-service and finish-time fairness each leave some tenant or job under-served over days of work.",
    system: "ASTRAEA, against FIFO, SJF, SRTF, Tiresias, Themis, fair share, Gandiva-fair and Gavel",
    idea: "Count GPU-time over a long window: serve the most under-served tenant first, then its most under-served job, and use leases instead of constant preemption.",
    claim: "ASTRAEA improves tenant-level fairness by up to 9.42× and job-level fairness by up to 10.3× over the baselines without hurting average JCT (seed's numbers; ours are on the lab page).",
}, Card {
    lab: "resilience",
    title: "Fail-slow GPUs",
    problem: "In hybrid-parallel training one slow GPU drags its TP group, its pipeline stage and every data-parallel replica; raw iteration time is a poor alarm because packed sequences of varied length make healthy iterations vary.",
    system: "ResiHP, against a naive z-score and a CUSUM change-point detector, and against doing nothing, dropping replicas and checkpoint-restart",
    idea: "Predict each iteration from the work it actually holds (α·tokens + β·Σ length²), flag only persistent excess, find the slow GPU, then re-plan TP groups, pipeline layers and DP shares together.",
    claim: "About 99.4 % detection accuracy with almost no false alarms; training throughput 1.13–2.22× over the resilient baselines (seed's numbers; ours, smaller, are on the lab page and in docs/CLAIMS.md).",
}, Card {
    lab: "migration",
    title: "Pausing and moving GPU jobs",
    problem: "Preemption, defragmentation and migration need a running GPU job paused, its state saved small and correct, and resumed elsewhere; saving the framework's whole reserved pool, or checkpointing in the framework and restarting the process, makes every move expensive.",
    system: "FlowGPU-style transparent checkpoint (active memory, low point of the iteration, fixed-size-region dedup), against the reserved pool (POS-style) and framework checkpoint + restart",
    idea: "Save only memory in use, wait (boundedly) for the iteration's low point, save replicas' identical regions once, restore at the same virtual addresses so device pointers stay valid.",
    claim: "Pause 6.2–15× faster than POS, restore 12–18× faster, migration 1.7–4.5× faster than framework checkpointing (seed's numbers; ours, from the cost model, are on the lab page and in docs/CLAIMS.md).",
}, Card {
    lab: "agentic",
    title: "KV-cache thrashing of agents",
    problem: "Tool-calling agents keep long histories in the KV cache. Admitted all at once, they congest it mid-batch: the engine evicts histories that live agents need again, recomputes them, and throughput collapses before memory is formally full.",
    system: "CONCUR, against unbounded admission and static caps",
    idea: "Control how many agents are active above the engine: grow the window additively while the cache is healthy, halve it when the hit rate on histories falls or requests are preempted.",
    claim: "CONCUR's throughput up to 4.09× unbounded admission on Qwen3-32B and 1.9× on DeepSeek-V3 (seed's numbers; ours, smaller, are on the lab page and in docs/CLAIMS.md).",
}];

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
            <h2>{ "Labs" }</h2>
            <div class="cards">
                { for CARDS.iter().map(|c| html! {
                    <article class="lab-card" data-lab={c.lab}>
                        <h2><a href={format!("#/{}", c.lab)}>{ c.title }</a></h2>
                        <dl>
                            <dt>{ "Problem" }</dt><dd>{ c.problem }</dd>
                            <dt>{ "Systems" }</dt><dd>{ c.system }</dd>
                            <dt>{ "Key idea" }</dt><dd>{ c.idea }</dd>
                            <dt>{ "Headline" }</dt><dd>{ c.claim }</dd>
                        </dl>
                        <a class="open" href={format!("#/{}", c.lab)}>{ "Open the lab →" }</a>
                    </article>
                }) }
            </div>
            <h2>{ "Tools every lab shares" }</h2>
            <div class="cards tools">
                <article class="lab-card" data-lab="cost">
                    <h2><a href="#/cost">{ "Cost models" }</a></h2>
                    <p>{ "GEMM, attention and memory-bound kernels on A100, H100 and H200; AllReduce, AllGather, ReduceScatter, AllToAll and P2P under the alpha-beta model over NVLink and InfiniBand, next to measured NCCL profiles." }</p>
                </article>
                <article class="lab-card" data-lab="trace">
                    <h2><a href="#/trace">{ "Kineto traces" }</a></h2>
                    <p>{ "Open PyTorch profiler traces of a multi-GPU job: every rank's GPU streams on one timeline, and how much of its NCCL time hides under compute (Holistic Trace Analysis's overlap metric)." }</p>
                </article>
            </div>
        </section>
    }
}
