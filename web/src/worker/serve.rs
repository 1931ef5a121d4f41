//! The worker's side: read each request, run the core on it (parsing its uploaded files here,
//! off the page's thread), post progress at the core's natural steps, then the output or the
//! failure.

use bubblelab_core::labs::fairness::synthetic_trace;
use bubblelab_core::labs::fairness::traces::{self as fairness_traces, shares, ReadOptions};
use bubblelab_core::labs::pipeline::pipemorph;
use bubblelab_core::labs::resilience::job::Plan;
use bubblelab_core::labs::resilience::{detect_pai, StrategyKind};
use bubblelab_core::labs::{agentic, bubbles, overlap};
use bubblelab_core::scenario::KeepsRuns;
use bubblelab_core::{kineto, Scenario};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use super::{ClusterRun, Failure, Job, Output, Playback, Reply, Request};
use crate::components::upload::texts;

/// An uploaded file (name, bytes) and the trace read from it.
type ReadTrace = ((String, Vec<u8>), bubblelab_core::labs::fairness::Trace);

std::thread_local! {
    /// The last trace file the fairness lab read here, with what it read: a worker that runs
    /// several pieces of one run ([`Request::piece`]) reads the upload once, not once a piece.
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
        let files: Vec<(String, Vec<u8>)> = request.names.iter().cloned().zip(bytes).collect();
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
#[allow(clippy::too_many_lines)] // one arm per worker job; it shrinks when the worker has one job path
pub fn handle(
    request: &Request,
    files: Vec<(String, Vec<u8>)>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Output, Failure> {
    let scenario = match &request.scenario {
        Some(text) => Some(Scenario::from_json(text).map_err(Failure::Scenario)?),
        None => None,
    };
    let need = |what: &str| Failure::Worker(format!("a {what} request without its scenario"));
    let texts = || texts(files.clone()).map_err(Failure::Upload);
    let first = || {
        texts()?
            .into_iter()
            .next()
            .ok_or_else(|| Failure::Upload("no file chosen".into()))
    };
    let scenario_failure = Failure::Scenario;
    match request.job {
        Job::Report => {
            let scenario = scenario.ok_or_else(|| need("run"))?;
            bubblelab_core::run_with_progress(&scenario, progress)
                .map(Output::Report)
                .map_err(scenario_failure)
        }
        Job::Fairness => {
            let Some(Scenario::Fairness(p)) = scenario else {
                return Err(need("fairness"));
            };
            let trace = if files.is_empty() {
                synthetic_trace(&p).map_err(scenario_failure)?
            } else {
                LAST_TRACE.with(|last| {
                    if let Some((file, trace)) = &*last.borrow() {
                        if files.first() == Some(file) {
                            return Ok(trace.clone());
                        }
                    }
                    let (name, text) = first()?;
                    let format = fairness_traces::detect(&text).ok_or_else(|| Failure::Upload(format!("{name}: not a trace format this lab reads (Tiresias/Astraea CSV, Helios, Philly JSON, Alibaba openb, DIR-LAB)")))?;
                    let options = ReadOptions {
                        skip_bad_rows: true,
                        ..ReadOptions::default()
                    };
                    let trace = fairness_traces::parse(format, &text, &options)
                        .map_err(|e| Failure::Upload(format!("{name}: {e}")))?;
                    *last.borrow_mut() = files.first().cloned().map(|f| (f, trace.clone()));
                    Ok(trace)
                })?
            };
            if let Some(which) = &request.piece {
                let piece = p.simulate_some(&trace, which).map_err(scenario_failure)?;
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
            let sim = p.simulate(&trace, progress).map_err(scenario_failure)?;
            Ok(Output::Fairness {
                report: sim.report,
                runs: sim.runs.runs.into_iter().map(ClusterRun::of).collect(),
                tenants: sim.runs.trace.tenants,
            })
        }
        Job::FairnessShares => {
            let (name, text) = first()?;
            let list =
                shares::parse_shares(&text).map_err(|e| Failure::Upload(format!("{name}: {e}")))?;
            Ok(Output::Shares(
                list.into_iter().map(|t| (t.name, t.share)).collect(),
            ))
        }
        Job::Agentic => {
            let Some(Scenario::Agentic(p)) = scenario else {
                return Err(need("agentic"));
            };
            if files.is_empty() {
                let report = agentic::run_with_progress(&p, progress).map_err(scenario_failure)?;
                return Ok(Output::Agentic {
                    report,
                    agents: u64::from(p.synthetic.agents),
                });
            }
            let (name, text) = first()?;
            let format = agentic::traces::detect(&text).ok_or_else(|| {
                Failure::Upload(format!("{name}: not a workload this lab reads (Mooncake JSONL with hash_ids, or the Azure LLM inference CSV)"))
            })?;
            let work = agentic::traces::parse(format, &text)
                .map_err(|e| Failure::Upload(format!("{name}: {e}")))?;
            let report = agentic::run_workload_with_progress(&p, &work, progress)
                .map_err(scenario_failure)?;
            Ok(Output::Agentic {
                report,
                agents: work.agents.len() as u64,
            })
        }
        Job::Bubbles => {
            let Some(Scenario::Bubbles(p)) = scenario else {
                return Err(need("bubbles"));
            };
            if files.is_empty() {
                return bubblelab_core::run_with_progress(&Scenario::Bubbles(p), progress)
                    .map(Output::Report)
                    .map_err(scenario_failure);
            }
            let files = texts()?;
            let name = files.first().map(|(n, _)| n.clone()).unwrap_or_default();
            let run = pipemorph::load_run(&files).map_err(|e| Failure::Upload(e.to_string()))?;
            bubbles::run_log(&p, &run, &bubbles_source(&name))
                .map(Output::Report)
                .map_err(scenario_failure)
        }
        Job::Overlap => {
            let Some(Scenario::Overlap(p)) = scenario else {
                return Err(need("overlap"));
            };
            let sim = p.simulate(&(), progress).map_err(scenario_failure)?;
            let steps = overlap_steps(&sim.runs);
            Ok(Output::Overlap {
                report: sim.report,
                steps,
            })
        }
        Job::Sharing => {
            let Some(Scenario::Sharing(p)) = scenario else {
                return Err(need("sharing"));
            };
            let sim = p.simulate(&(), progress).map_err(scenario_failure)?;
            Ok(Output::Sharing {
                report: sim.report,
                pictures: sim.runs,
            })
        }
        Job::Resilience => {
            let Some(Scenario::Resilience(p)) = scenario else {
                return Err(need("resilience"));
            };
            let sim = p.simulate(&(), progress).map_err(scenario_failure)?;
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
        Job::Pai => {
            let Some(Scenario::Resilience(p)) = scenario else {
                return Err(need("PAI"));
            };
            let (name, text) = first()?;
            detect_pai(&name, &text, &p.detector)
                .map(Output::Report)
                .map_err(|e| Failure::Upload(format!("{name}: {e}")))
        }
        Job::Pipemorph => {
            let files = texts()?;
            let name = files.first().map_or("run", |f| f.0.as_str()).to_string();
            pipemorph::load_run(&files)
                .map(|run| Output::Report(run.report(&name)))
                .map_err(|e| Failure::Upload(e.to_string()))
        }
        Job::Kineto => {
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
    }
}

/// What the bubbles lab calls a run read from stage logs, by the first file's name.
#[must_use]
pub fn bubbles_source(first_file: &str) -> String {
    format!("{first_file} and the other stage logs")
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
