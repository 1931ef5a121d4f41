//! The trace view: open PyTorch profiler (Kineto) traces, one per rank, plain or gzipped, and
//! see each rank's GPU streams on the timeline with Holistic Trace Analysis 0.5.0's
//! communication-computation overlap per rank (`get_comm_comp_overlap`, default options) and
//! the lab's exact variant.

use std::rc::Rc;

use yew::prelude::*;

use crate::components::export::ExportBar;
use crate::components::report_view::ReportView;
use crate::components::timeline::Shared;
use crate::components::upload::FileUpload;
use crate::worker::client::{use_worker, Outcome, RunRequest, RunStatus};
use crate::worker::{Job, Output};

/// Largest trace file the page reads, bytes.
const MAX_TRACE_BYTES: u64 = 256 << 20;

/// The Kineto trace view.
#[function_component(TraceView)]
pub fn trace_view() -> Html {
    let report = use_state(|| None::<Shared<bubblelab_core::Report>>);
    let error = use_state(|| None::<String>);
    // The traces are parsed (and inflated) in the worker, a progress step per file.
    let worker = use_worker();
    let on_load = {
        let report = report.clone();
        let error = error.clone();
        let worker = worker.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            let report = report.clone();
            let error = error.clone();
            let request = RunRequest {
                job: Job::Kineto,
                scenario: None,
                files: files.into_iter().map(|f| ("trace", Rc::new(f))).collect(),
            };
            worker.run(
                request,
                Callback::from(move |outcome: Outcome| match outcome {
                    Ok(Output::Report(r)) => {
                        error.set(None);
                        report.set(Some(Shared(Rc::new(r))));
                    }
                    Ok(_) => {}
                    Err(e) => error.set(Some(e.to_string())),
                }),
            );
        })
    };
    let on_error = {
        let error = error.clone();
        Callback::from(move |m: String| error.set(Some(m)))
    };
    html! {
        <section class="page" id="trace-view">
            <h1>{ "Kineto traces: how much communication hides under compute?" }</h1>
            <p class="lede">
                { "Open the PyTorch profiler traces of a distributed job (one JSON file per rank, plain or .gz). \
                   Each rank's GPU streams appear on the timeline. The overlap is Holistic Trace Analysis 0.5.0's \
                   get_comm_comp_overlap, rule for rule: time covered by both communication (kernel names ^nccl.*Kernel) \
                   and computation / time covered by communication, after HTA rounds float timestamps to whole µs \
                   and drops the last profiler step; names with Memcpy, Memset or Sync count as neither. \
                   The exact variant keeps every nanosecond and every step." }
            </p>
            <FileUpload id="upload-kineto" label="Open traces (.json, .json.gz)" multiple=true accept=".json,.gz,application/json,application/gzip"
                max_bytes={MAX_TRACE_BYTES} max_files={64} {on_load} {on_error} />
            <RunStatus worker={worker.clone()} unit="files" />
            if let Some(message) = &*error {
                <div class="banner error" id="trace-error" role="alert">{ message.clone() }</div>
            }
            if let Some(report) = &*report {
                <ExportBar report={report.clone()} stem="kineto" />
                <ReportView report={report.clone()} />
            } else {
                <p class="muted">{ "No trace opened yet. The CLI reads the same files: " }<code>{ "bubblelab kineto rank0.json rank1.json" }</code></p>
            }
        </section>
    }
}
