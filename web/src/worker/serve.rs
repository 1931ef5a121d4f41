//! The worker's side: read each request, run the core on it (parsing its uploaded files here,
//! off the page's thread), post progress at the core's natural steps, then the output or the
//! failure.

use bubblelab_core::labs::agentic::{self, AgenticParams};
use bubblelab_core::labs::fairness::traces::ReadOptions;
use bubblelab_core::labs::fairness::FairnessParams;
use bubblelab_core::labs::overlap::{self, OverlapParams};
use bubblelab_core::labs::resilience::job::Plan;
use bubblelab_core::labs::resilience::{ResilienceParams, StrategyKind};
use bubblelab_core::labs::sharing::SharingParams;
use bubblelab_core::scenario::{check_slots, files_in, InputFile, KeepsRuns};
use bubblelab_core::{kineto, Scenario, ScenarioError};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use super::{ClusterRun, Failure, Job, Output, Playback, Reply, Request};
use crate::components::upload::texts;

/// The files of a fairness request as (slot, name, text), and the trace read from them.
type ReadTrace = (
    Vec<(String, String, String)>,
    bubblelab_core::labs::fairness::Trace,
);

std::thread_local! {
    /// The last trace the fairness lab read here from uploaded files, with the files: a worker
    /// that runs several pieces of one run ([`Request::piece`]) reads the upload once, not
    /// once a piece.
    static LAST_TRACE: std::cell::RefCell<Option<ReadTrace>> = const { std::cell::RefCell::new(None) };
}

/// Largest inflated Kineto trace accepted from a gzipped file, bytes (a tab's memory is finite).
const MAX_INFLATED_BYTES: usize = 1 << 30;

/// The worker binary's entry point: answer the page's requests until the page terminates us.
pub fn start() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let poster = scope.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        let data = event.data();
        let request_text = js_sys::Reflect::get(&data, &JsValue::from_str("request"))
            .ok()
            .and_then(|v| v.as_string());
        let Some(request) =
            request_text.and_then(|text| serde_json::from_str::<Request>(&text).ok())
        else {
            post(
                &poster,
                &Reply::Failed {
                    id: 0,
                    failure: Failure::Worker("a request the worker cannot read".into()),
                },
            );
            return;
        };
        let bytes: Vec<Vec<u8>> = js_sys::Reflect::get(&data, &JsValue::from_str("files"))
            .ok()
            .map(|files| {
                js_sys::Array::from(&files)
                    .iter()
                    .map(|f| js_sys::Uint8Array::new(&f).to_vec())
                    .collect()
            })
            .unwrap_or_default();
        let files: Vec<(String, Vec<u8>)> = request
            .inputs
            .iter()
            .map(|i| i.name.clone())
            .zip(bytes)
            .collect();
        let id = request.id;
        let mut progress = |done: usize, total: usize| {
            post(&poster, &Reply::Progress { id, done, total });
        };
        let reply = match handle(&request, files, &mut progress) {
            Ok(output) => Reply::Done {
                id,
                output: Box::new(output),
            },
            Err(failure) => Reply::Failed { id, failure },
        };
        post(&poster, &reply);
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    post(&scope, &Reply::Ready);
}

/// Posts `reply` as bytes ([`super::encode_reply`]), the buffer transferred (not copied): the
/// page reads them straight into its own memory, where a text would be converted to and from
/// the browser's UTF-16 strings on both sides (a Philly piece's reply is megabytes).
fn post(scope: &DedicatedWorkerGlobalScope, reply: &Reply) {
    let bytes = super::encode_reply(reply).unwrap_or_else(|e| {
        super::encode_reply(&Reply::Failed {
            id: reply_id(reply),
            failure: Failure::Worker(format!("the result could not be encoded: {e}")),
        })
        .unwrap_or_default()
    });
    let array = js_sys::Uint8Array::from(bytes.as_slice());
    let _ = scope.post_message_with_transfer(&array, &js_sys::Array::of1(&array.buffer()));
}

fn reply_id(reply: &Reply) -> u32 {
    match reply {
        Reply::Ready => 0,
        Reply::Progress { id, .. } | Reply::Done { id, .. } | Reply::Failed { id, .. } => *id,
    }
}

/// Runs one request. Public so that the wasm tests can call it on the main thread.
///
/// # Errors
/// The core's refusal, or an upload that cannot be read (naming the file).
pub fn handle(
    request: &Request,
    files: Vec<(String, Vec<u8>)>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Output, Failure> {
    if request.job == Job::Kineto {
        return kineto_view(files, progress);
    }
    let scenario = match &request.scenario {
        Some(text) => Scenario::from_json(text).map_err(Failure::Scenario)?,
        None => return Err(Failure::Worker("a request without its scenario".into())),
    };
    let texts = texts(files).map_err(Failure::Upload)?;
    let inputs: Vec<InputFile<'_>> = request
        .inputs
        .iter()
        .zip(&texts)
        .map(|(input, (_, text))| InputFile {
            slot: &input.slot,
            source: &input.name,
            text,
        })
        .collect();
    let failure = |e: ScenarioError| upload_or_field(e, &inputs);
    if request.job == Job::Read {
        return scenario
            .with_inputs(&inputs)
            .map(|s| Output::Scenario(s.to_json()))
            .map_err(failure);
    }
    let view = match &scenario {
        Scenario::Fairness(p) => fairness_view(p, &inputs, request.piece.as_deref(), progress),
        Scenario::Agentic(p) => agentic_view(p, &inputs, progress),
        Scenario::Overlap(p) => overlap_view(p, progress),
        Scenario::Sharing(p) => sharing_view(p, progress),
        Scenario::Resilience(p) if inputs.is_empty() => resilience_view(p, progress),
        _ => bubblelab_core::run_with_inputs(&scenario, &inputs, progress).map(Output::Report),
    };
    view.map_err(failure)
}

/// The error of a reader that refused a file (it names the file, or the slot it was given
/// in) as an upload failure, so the page drops the file; any other as the field it names.
fn upload_or_field(e: ScenarioError, inputs: &[InputFile<'_>]) -> Failure {
    let names_input = e
        .path()
        .is_some_and(|p| p == "input" || inputs.iter().any(|f| f.source == p));
    if names_input {
        Failure::Upload(e.to_string())
    } else {
        Failure::Scenario(e)
    }
}

/// Whether `kept` (slot, name, text) are the files of `inputs`, in order.
fn same_files(kept: &[(String, String, String)], inputs: &[InputFile<'_>]) -> bool {
    kept.len() == inputs.len()
        && kept
            .iter()
            .zip(inputs)
            .all(|(k, f)| k.0 == f.slot && k.1 == f.source && k.2 == f.text)
}

/// Every chosen policy on the synthetic or the uploaded trace, with what the cluster view and
/// the share chart draw; one piece of them when the request is split.
fn fairness_view(
    p: &FairnessParams,
    inputs: &[InputFile<'_>],
    piece: Option<&[usize]>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Output, ScenarioError> {
    // The page skips a real trace's bad rows and counts them in the Report.
    let options = ReadOptions {
        skip_bad_rows: true,
        ..ReadOptions::default()
    };
    let kept = LAST_TRACE.with(|last| {
        last.borrow()
            .as_ref()
            .filter(|(files, _)| !inputs.is_empty() && same_files(files, inputs))
            .map(|(_, trace)| trace.clone())
    });
    let (p, trace) = if let Some(trace) = kept {
        (
            bubblelab_core::scenario::LabParams::with_inputs(p, inputs)?,
            trace,
        )
    } else {
        let (p, trace) = p.read_inputs(inputs, None, &options)?;
        if !inputs.is_empty() {
            let files = inputs
                .iter()
                .map(|f| (f.slot.to_string(), f.source.to_string(), f.text.to_string()))
                .collect();
            LAST_TRACE.with(|last| *last.borrow_mut() = Some((files, trace.clone())));
        }
        (p, trace)
    };
    if let Some(which) = piece {
        let piece = p.simulate_some(&trace, which)?;
        let runs = which
            .iter()
            .copied()
            .zip(piece.runs.runs.into_iter().map(ClusterRun::of))
            .collect();
        return Ok(Output::FairnessPiece {
            facts: piece.facts,
            dropped: piece.dropped,
            digests: piece.digests,
            runs,
            tenants: piece.runs.trace.tenants,
        });
    }
    let sim = p.simulate(&trace, progress)?;
    Ok(Output::Fairness {
        report: sim.report,
        runs: sim.runs.runs.into_iter().map(ClusterRun::of).collect(),
        tenants: sim.runs.trace.tenants,
    })
}

/// The agentic lab's Report, and how many agents its synthetic or uploaded workload has.
fn agentic_view(
    p: &AgenticParams,
    inputs: &[InputFile<'_>],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Output, ScenarioError> {
    check_slots::<AgenticParams>(inputs)?;
    let Some(file) = files_in(inputs, "trace").next() else {
        let report = agentic::run_with_progress(p, progress)?;
        return Ok(Output::Agentic {
            report,
            agents: u64::from(p.synthetic.agents),
        });
    };
    let work = agentic::read_trace(file, None)?;
    let report = agentic::run_workload_with_progress(p, &work, progress)?;
    Ok(Output::Agentic {
        report,
        agents: work.agents.len() as u64,
    })
}

/// Every strategy and the pass steps' timelines.
fn overlap_view(
    p: &OverlapParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Output, ScenarioError> {
    let sim = p.simulate(&(), progress)?;
    let steps = overlap_steps(&sim.runs);
    Ok(Output::Overlap {
        report: sim.report,
        steps,
    })
}

/// Every policy on every seed, and each policy's cluster at the end of the first seed.
fn sharing_view(
    p: &SharingParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Output, ScenarioError> {
    let sim = p.simulate(&(), progress)?;
    Ok(Output::Sharing {
        report: sim.report,
        pictures: sim.runs,
    })
}

/// Every strategy, ResiHP's playback and its layout after re-planning.
fn resilience_view(
    p: &ResilienceParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Output, ScenarioError> {
    let sim = p.simulate(&(), progress)?;
    let (report, runs) = (sim.report, sim.runs);
    let resihp = runs.iter().find(|r| r.kind == StrategyKind::Resihp);
    let playback = resihp.map(Playback::of).unwrap_or_default();
    let replanned: Option<Plan> = resihp
        .filter(|r| r.replans > 0)
        .map(|r| r.final_plan.clone());
    Ok(Output::Resilience {
        report,
        playback,
        replanned,
    })
}

/// The trace view's Report of Kineto traces (gzipped or not), a step per file.
fn kineto_view(
    files: Vec<(String, Vec<u8>)>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Output, Failure> {
    let mut traces = Vec::with_capacity(files.len());
    let total = files.len();
    for (i, (name, bytes)) in files.into_iter().enumerate() {
        progress(i, total);
        match kineto::parse_trace_with_limit(&bytes, MAX_INFLATED_BYTES) {
            Ok(trace) => traces.push((name, trace)),
            Err(e) => return Err(Failure::Upload(format!("{name}: {e}"))),
        }
    }
    progress(total, total);
    Ok(Output::Report(kineto::report(&traces)))
}

/// Timelines of the graph as built and after each pass, with their names.
fn overlap_steps(run: &overlap::OverlapRun) -> Vec<(String, bubblelab_core::report::Timeline)> {
    use bubblelab_core::graph::sim::timeline;
    let mut out = vec![(
        "original".to_string(),
        timeline(&run.original, &run.original_sim, "graph as built"),
    )];
    for s in &run.steps {
        out.push((
            s.pass.clone(),
            timeline(&s.graph, &s.sim, &format!("after {}", s.pass)),
        ));
    }
    out
}
