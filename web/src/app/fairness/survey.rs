//! The map of the field, after the survey of deep-learning workload scheduling in GPU
//! datacenters (Gao et al., ACM Computing Surveys 2024): what a scheduler optimises (rows) and
//! how it uses GPUs (columns). Every policy this lab implements is a button that shows it in
//! the cluster view (and adds it to the run if it was not chosen); a few well-known systems
//! the lab does not implement are placed for orientation, greyed out, and systems another lab
//! runs (FGD and Gandiva-style packing, in the sharing lab; Pollux and Optimus, in the elastic
//! lab) are links that open its preset. Gandiva's own workload and time-slicing are not
//! reproduced, so its entry names the sharing lab's Gandiva-style rule, not Gandiva. Below the map, the families whose tension needs a preset of their own
//! (deadlines, training beside an inference service), GPU sharing (FGD and Gandiva-style
//! packing, in the sharing lab),
//! elastic training (Pollux, in the elastic lab), and the serving side of the
//! survey (the inference schedulers that run on the agents lab's engine), each a link that
//! opens its preset.

use bubblelab_core::labs::fairness::policies::{SURVEY_OBJECTIVES, SURVEY_RESOURCES};
use bubblelab_core::labs::fairness::PolicyKind;
use bubblelab_core::{presets, share};
use yew::prelude::*;

/// Properties of [`SurveyMap`].
#[derive(Properties, PartialEq)]
pub struct SurveyProps {
    /// Policies in the current run.
    pub running: Vec<PolicyKind>,
    /// Called when a policy is picked.
    pub on_pick: Callback<PolicyKind>,
}

/// Systems placed for orientation only (every [`PolicyKind`] places itself:
/// [`PolicyKind::survey_cell`]): (row, column, name).
/// Themis and Chronus are here too: the lab's rules after them are not their mechanisms
/// (docs/MODEL.md).
const OTHERS: [(usize, usize, &str); 5] = [
    (0, 2, "AntMan"),
    (0, 1, "Gavel (makespan)"),
    (1, 0, "Themis (auction)"),
    (2, 0, "Chronus (MIP plan)"),
    (2, 3, "HyperSched"),
];

/// Systems another lab runs, placed on the map as links that open its preset: (row, column,
/// preset, name).
const ELSEWHERE: [(usize, usize, &str, &str); 4] = [
    (0, 2, "sharing-fgd-openb-shape", "FGD"),
    (
        0,
        2,
        "sharing-gandiva-packing-over-time",
        "Gandiva-style packing",
    ),
    (0, 3, "elastic-pollux-vs-baselines", "Pollux"),
    (0, 3, "elastic-pollux-vs-baselines", "Optimus"),
];

/// Training schedulers whose tension needs its own input (deadlines, an inference service
/// beside the training jobs, GPU types the jobs run at different speeds on): (preset, name,
/// what it trades).
const TRAINING: [(&str, &str, &str); 3] = [
    (
        "fairness-gavel-heterogeneous",
        "Gavel's heterogeneity-aware max-min",
        "fairness vs speed on mixed GPUs: an LP gives each job the fraction of time on V100, P100 and K80 that maximises the lowest speed-up over an equal share, and 6-minute rounds run the jobs furthest behind it; against the same policy blind to the types",
    ),
    (
        "fairness-chronus-deadlines",
        "Deadline slots after Chronus",
        "deadlines vs best-effort speed: an SLO job is admitted only when a plan of 20-minute lease slots before its deadline fits beside the admitted ones, and runs in those slots whatever waits; best-effort jobs get what is left",
    ),
    (
        "fairness-lyra-colocation",
        "Lyra's capacity loaning",
        "utilisation vs isolation: an inference service's idle servers train jobs until its daily peak takes them back, stopping the fewest training jobs; the service waits for their checkpoints, where separate clusters never make it wait and leave the servers idle",
    ),
];

/// GPU sharing, in the sharing lab: (preset, name, what it trades).
const SHARING: [(&str, &str, &str); 2] = [
    (
        "sharing-fgd-openb-shape",
        "FGD's fragmentation-aware packing",
        "packing density vs fragmentation: pods that share a GPU leave slivers no arriving pod can use; FGD places each pod where the idle share the usual pod mix cannot use grows least, against its artifact's five baselines",
    ),
    (
        "sharing-gandiva-packing-over-time",
        "Gandiva-style packing and unpacking",
        "utilisation vs isolation: pods packed on one GPU raise the shares in use and cut queueing but slow each other (a stated contention model); unpacking moves a pod that runs below 0.8 of its solo speed, at the price of a pause",
    ),
];

/// Elastic training, in the elastic lab: (preset, name, what it trades).
const ELASTIC: [(&str, &str, &str); 1] = [(
    "elastic-pollux-vs-baselines",
    "Pollux's goodput-driven elasticity",
    "speed vs cost: more GPUs and a larger batch raise a job's throughput but each sample teaches less, and every change costs a restart; Pollux re-chooses every job's GPUs each minute for the fairest mean goodput, against its artifact's Optimus+Oracle and Tiresias",
)];

/// Inference schedulers on the agents lab's engine: (preset, name, what it trades).
const SERVING: [(&str, &str, &str); 2] = [
    (
        "agentic-clipper-aimd-slo-batching",
        "Clipper's AIMD batching",
        "latency vs throughput: the batch grows while each step meets the per-token SLO and shrinks by 10 % when one does not; requests wait longer for their first token",
    ),
    (
        "agentic-qwen3-32b-h100",
        "CONCUR",
        "throughput vs KV-cache thrashing: how many agents may be active at once",
    ),
];

/// The survey map.
#[function_component(SurveyMap)]
pub fn survey_map(props: &SurveyProps) -> Html {
    html! {
        <section class="survey" id="survey-map">
            <h2>{ "Where each policy sits in the field" }</h2>
            <table class="survey-map" tabindex="0" aria-label="Policies by objective and resources">
                <thead><tr><th>{ "objective \\ resources" }</th>
                    { for SURVEY_RESOURCES.iter().map(|r| html! { <th>{ *r }</th> }) }</tr></thead>
                <tbody>
                { for SURVEY_OBJECTIVES.iter().enumerate().map(|(row, objective)| html! {
                    <tr><th>{ *objective }</th>
                    { for (0..SURVEY_RESOURCES.len()).map(|col| html! {
                        <td>
                            { for PolicyKind::ALL.into_iter().filter(|k| k.survey_cell() == (row, col)).map(|kind| {
                                let on_pick = props.on_pick.clone();
                                let class = if props.running.contains(&kind) { "chip" } else { "chip off" };
                                html! {
                                    <button type="button" {class} data-policy={kind.id()}
                                        title="show in the cluster view"
                                        onclick={Callback::from(move |_: MouseEvent| on_pick.emit(kind))}>
                                        { kind.label() }
                                    </button>
                                }
                            }) }
                            { for ELSEWHERE.iter().filter(|e| e.0 == row && e.1 == col).filter_map(|e| {
                                let preset = presets::find(e.2)?;
                                let scenario = preset.scenario().ok()?;
                                Some(html! {
                                    <a class="chip" data-preset={e.2} href={share::fragment(&scenario)}
                                        title={format!("opens in the {} lab", preset.lab)}>{ e.3 }</a>
                                })
                            }) }
                            { for OTHERS.iter().filter(|o| o.0 == row && o.1 == col).map(|o| html! {
                                <span class="chip other" title="not implemented in this lab">{ o.2 }</span>
                            }) }
                        </td>
                    }) }
                    </tr>
                }) }
                </tbody>
            </table>
            <h3>{ "Training with deadlines, training beside inference" }</h3>
            <ul class="serving">
                { for TRAINING.iter().filter_map(|(id, name, trade)| preset_link(id, name, trade)) }
            </ul>
            <h3>{ "GPU sharing (pods on a share of one GPU), in the sharing lab" }</h3>
            <ul class="serving">
                { for SHARING.iter().filter_map(|(id, name, trade)| preset_link(id, name, trade)) }
            </ul>
            <h3>{ "Elastic training (jobs that change GPU count and batch size), in the elastic lab" }</h3>
            <ul class="serving">
                { for ELASTIC.iter().filter_map(|(id, name, trade)| preset_link(id, name, trade)) }
            </ul>
            <h3>{ "Inference serving (latency, throughput), on the agents lab's engine" }</h3>
            <ul class="serving">
                { for SERVING.iter().filter_map(|(id, name, trade)| preset_link(id, name, trade)) }
            </ul>
        </section>
    }
}

/// A list entry: a link that opens preset `id` as a share link, and what it trades.
fn preset_link(id: &'static str, name: &'static str, trade: &'static str) -> Option<Html> {
    let scenario = presets::find(id)?.scenario().ok()?;
    Some(html! {
        <li><a class="chip" data-preset={id} href={share::fragment(&scenario)}>{ name }</a>
            { format!(" — {trade}") }</li>
    })
}
