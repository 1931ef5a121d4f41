//! The page's side of the worker: [`use_worker`] gives a lab page a [`WorkerHandle`] that posts
//! requests and calls back with their outputs, and [`RunStatus`] shows a running request's
//! progress with a Cancel button.
//!
//! One request runs at a time. A new request supersedes the one running: the busy worker is
//! terminated (it would finish the old run before reading anything new) and a fresh one starts;
//! Cancel terminates it too. Every reply carries its request's id and the page drops replies
//! of any other id, so a superseded run can never overwrite a newer result. An idle worker is
//! kept for the next request. The worker is terminated when the page unmounts.

use std::cell::RefCell;
use std::rc::Rc;

use bubblelab_core::Scenario;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker};
use yew::prelude::*;

use super::{Failure, Job, Output, Reply, Request};

/// Where the worker's loader is, relative to the page (Trunk writes it for the
/// `data-type="worker"` link in `static/index.html`; relative, so `dist/` works under any path).
pub const WORKER_URL: &str = "./bubblelab-worker_loader.js";

/// A file's name and bytes, shared (an upload is re-sent with every run on it).
pub type SharedFile = Rc<(String, Vec<u8>)>;

/// What to run: the job, its scenario and its files.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRequest {
    /// What to do.
    pub job: Job,
    /// The scenario, when the job has one.
    pub scenario: Option<Scenario>,
    /// Uploaded files the worker reads.
    pub files: Vec<SharedFile>,
}

/// How a request ended: its output, or why it failed.
pub type Outcome = Result<Output, Failure>;

/// What the page shows of the worker.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunView {
    /// The request running: (id, steps done, steps in all; 0 in all until the first progress).
    pub running: Option<(u32, usize, usize)>,
    /// The last request was cancelled.
    pub cancelled: bool,
}

/// Changes to [`RunView`]: a request started, progressed, finished, or was cancelled.
pub enum ViewAction {
    /// Request `id` was posted.
    Start(u32),
    /// Request `id` did `done` of `total` steps.
    Progress(u32, usize, usize),
    /// Request `id` ended (with an output or a failure).
    Finish(u32),
    /// The running request was cancelled.
    Cancelled,
}

impl Reducible for RunView {
    type Action = ViewAction;
    fn reduce(self: Rc<Self>, action: ViewAction) -> Rc<Self> {
        let current = self.running.map(|r| r.0);
        let next = match action {
            ViewAction::Start(id) => RunView {
                running: Some((id, 0, 0)),
                cancelled: false,
            },
            ViewAction::Progress(id, done, total) if current == Some(id) => RunView {
                running: Some((id, done, total)),
                cancelled: false,
            },
            ViewAction::Finish(id) if current == Some(id) => RunView::default(),
            ViewAction::Cancelled => RunView {
                running: None,
                cancelled: true,
            },
            ViewAction::Progress(..) | ViewAction::Finish(_) => return self,
        };
        Rc::new(next)
    }
}

struct Pending {
    id: u32,
    request: RunRequest,
    done: Callback<Outcome>,
}

/// The worker's `onmessage` and `onerror` handlers (kept alive while it runs).
type Handlers = (
    Closure<dyn Fn(MessageEvent)>,
    Closure<dyn Fn(web_sys::Event)>,
);

/// The worker, its handlers and the request it runs.
struct Inner {
    worker: Option<Worker>,
    handlers: Option<Handlers>,
    /// The module has loaded and said so (messages sent before are lost).
    ready: bool,
    /// A message waiting for the worker to be ready.
    queued: Option<JsValue>,
    current: Option<Pending>,
    next_id: u32,
    /// The worker's script could not be loaded (a page served without it, as in the wasm
    /// tests): requests run on the page instead, with a console error saying so.
    inline: bool,
}

impl Inner {
    fn new() -> Inner {
        Inner {
            worker: None,
            handlers: None,
            ready: false,
            queued: None,
            current: None,
            next_id: 0,
            inline: false,
        }
    }

    /// Terminates the worker (mid-run or idle); the next request starts a fresh one.
    fn kill(&mut self) {
        if let Some(worker) = self.worker.take() {
            worker.set_onmessage(None);
            worker.set_onerror(None);
            worker.terminate();
        }
        self.handlers = None;
        self.ready = false;
        self.queued = None;
    }
}

/// A lab page's handle on its worker.
#[derive(Clone)]
pub struct WorkerHandle {
    inner: Rc<RefCell<Inner>>,
    view: UseReducerHandle<RunView>,
}

impl PartialEq for WorkerHandle {
    fn eq(&self, other: &Self) -> bool {
        // The handles' own comparison: their render-time snapshots (deref reads the latest).
        Rc::ptr_eq(&self.inner, &other.inner) && self.view == other.view
    }
}

/// A worker for this page, terminated when the page goes.
#[hook]
pub fn use_worker() -> WorkerHandle {
    let view = use_reducer(RunView::default);
    let inner = use_mut_ref(Inner::new);
    {
        let inner = inner.clone();
        use_effect_with((), move |()| move || inner.borrow_mut().kill());
    }
    WorkerHandle { inner, view }
}

impl WorkerHandle {
    /// What the page shows of the worker.
    #[must_use]
    pub fn view(&self) -> &RunView {
        &self.view
    }

    /// Posts `request`, superseding the one running; `done` gets its outcome (never that of a
    /// superseded or cancelled request).
    pub fn run(&self, request: RunRequest, done: Callback<Outcome>) {
        let message = {
            let mut inner = self.inner.borrow_mut();
            if inner.current.take().is_some() {
                inner.kill();
            }
            inner.next_id = inner.next_id.wrapping_add(1);
            let id = inner.next_id;
            let message = match encode(id, &request) {
                Ok(m) => m,
                Err(e) => {
                    drop(inner);
                    done.emit(Err(Failure::Worker(e)));
                    return;
                }
            };
            if inner.inline {
                inner.current = Some(Pending { id, request, done });
                drop(inner);
                run_inline(Rc::downgrade(&self.inner), self.view.dispatcher(), id);
                self.view.dispatch(ViewAction::Start(id));
                return;
            }
            if inner.worker.is_none() {
                if let Err(e) = self.spawn(&mut inner) {
                    drop(inner);
                    done.emit(Err(Failure::Worker(e)));
                    return;
                }
            }
            inner.current = Some(Pending { id, request, done });
            if inner.ready {
                (id, Some((inner.worker.clone(), message)))
            } else {
                inner.queued = Some(message);
                (id, None)
            }
        };
        let (id, send) = message;
        if let Some((Some(worker), message)) = send {
            post(&worker, &message);
        }
        self.view.dispatch(ViewAction::Start(id));
    }

    /// Stops the running request (its worker is terminated); the page keeps what it shows.
    pub fn cancel(&self) {
        let cancelled = {
            let mut inner = self.inner.borrow_mut();
            let cancelled = inner.current.take().is_some();
            if cancelled {
                inner.kill();
            }
            cancelled
        };
        if cancelled {
            self.view.dispatch(ViewAction::Cancelled);
        }
    }

    fn spawn(&self, inner: &mut Inner) -> Result<(), String> {
        let worker =
            Worker::new(WORKER_URL).map_err(|e| format!("it could not start ({})", js_text(&e)))?;
        let on_message = {
            let cell = Rc::downgrade(&self.inner);
            let view = self.view.dispatcher();
            Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
                let Some(cell) = cell.upgrade() else { return };
                let reply = event
                    .data()
                    .as_string()
                    .ok_or_else(|| "a reply that is not text".to_string())
                    .and_then(|text| {
                        serde_json::from_str::<Reply>(&text)
                            .map_err(|e| format!("a reply the page cannot read ({e})"))
                    });
                on_reply(&cell, &view, reply);
            })
        };
        let on_error = {
            let cell = Rc::downgrade(&self.inner);
            let view = self.view.dispatcher();
            Closure::<dyn Fn(web_sys::Event)>::new(move |event: web_sys::Event| {
                event.prevent_default();
                let Some(rc) = cell.upgrade() else { return };
                // A script that fails to load fires a plain `Event`, a thrown error an
                // `ErrorEvent` with its message.
                let message = event
                    .dyn_ref::<ErrorEvent>()
                    .map(ErrorEvent::message)
                    .unwrap_or_default();
                if !rc.borrow().ready {
                    // The worker never started (its script is missing or is not a script):
                    // run on the page from now on.
                    gloo::console::error!(format!(
                        "bubblelab: the simulation worker ({WORKER_URL}) could not start \
                         ({}); simulations run on the page's main thread",
                        if message.is_empty() {
                            "not loaded"
                        } else {
                            message.as_str()
                        }
                    ));
                    let id = {
                        let mut inner = rc.borrow_mut();
                        inner.kill();
                        inner.inline = true;
                        inner.current.as_ref().map(|p| p.id)
                    };
                    if let Some(id) = id {
                        run_inline(cell.clone(), view.clone(), id);
                    }
                    return;
                }
                let message = if message.is_empty() {
                    "it stopped".to_string()
                } else {
                    format!("it stopped: {message}")
                };
                let pending = {
                    let mut inner = rc.borrow_mut();
                    inner.kill();
                    inner.current.take()
                };
                if let Some(p) = pending {
                    view.dispatch(ViewAction::Finish(p.id));
                    p.done.emit(Err(Failure::Worker(message)));
                }
            })
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        inner.worker = Some(worker);
        inner.handlers = Some((on_message, on_error));
        inner.ready = false;
        Ok(())
    }
}

/// Runs request `id` on the page (no worker), soon, unless it was superseded meanwhile.
fn run_inline(cell: std::rc::Weak<RefCell<Inner>>, view: UseReducerDispatcher<RunView>, id: u32) {
    gloo::timers::callback::Timeout::new(0, move || {
        let Some(cell) = cell.upgrade() else { return };
        let request = match &cell.borrow().current {
            Some(p) if p.id == id => p.request.clone(),
            _ => return,
        };
        let wire = Request {
            id,
            job: request.job,
            scenario: request.scenario.as_ref().map(Scenario::to_json),
            names: request.files.iter().map(|f| f.0.clone()).collect(),
        };
        let files = request
            .files
            .iter()
            .map(|f| (f.0.clone(), f.1.clone()))
            .collect();
        let outcome = super::serve::handle(&wire, files, &mut |_, _| {});
        let pending = {
            let mut inner = cell.borrow_mut();
            match &inner.current {
                Some(p) if p.id == id => inner.current.take(),
                _ => None,
            }
        };
        if let Some(p) = pending {
            view.dispatch(ViewAction::Finish(id));
            p.done.emit(outcome);
        }
    })
    .forget();
}

/// Handles one reply: progress and outcomes of the current request only.
fn on_reply(
    cell: &RefCell<Inner>,
    view: &UseReducerDispatcher<RunView>,
    reply: Result<Reply, String>,
) {
    let reply = match reply {
        Ok(r) => r,
        Err(message) => {
            let pending = cell.borrow_mut().current.take();
            if let Some(p) = pending {
                view.dispatch(ViewAction::Finish(p.id));
                p.done.emit(Err(Failure::Worker(message)));
            }
            return;
        }
    };
    let current = cell.borrow().current.as_ref().map(|p| p.id);
    match reply {
        Reply::Ready => {
            let send = {
                let mut inner = cell.borrow_mut();
                inner.ready = true;
                inner.queued.take().zip(inner.worker.clone())
            };
            if let Some((message, worker)) = send {
                post(&worker, &message);
            }
        }
        Reply::Progress { id, done, total } if Some(id) == current => {
            view.dispatch(ViewAction::Progress(id, done, total));
        }
        Reply::Done { id, output } if Some(id) == current => {
            let pending = cell.borrow_mut().current.take();
            view.dispatch(ViewAction::Finish(id));
            if let Some(p) = pending {
                p.done.emit(Ok(*output));
            }
        }
        Reply::Failed { id, failure } if Some(id) == current => {
            let pending = cell.borrow_mut().current.take();
            view.dispatch(ViewAction::Finish(id));
            if let Some(p) = pending {
                p.done.emit(Err(failure));
            }
        }
        // A superseded request's reply.
        Reply::Progress { .. } | Reply::Done { .. } | Reply::Failed { .. } => {}
    }
}

fn encode(id: u32, request: &RunRequest) -> Result<JsValue, String> {
    let wire = Request {
        id,
        job: request.job,
        scenario: request.scenario.as_ref().map(Scenario::to_json),
        names: request.files.iter().map(|f| f.0.clone()).collect(),
    };
    let text =
        serde_json::to_string(&wire).map_err(|e| format!("cannot encode the request ({e})"))?;
    let files = js_sys::Array::new();
    for f in &request.files {
        files.push(&js_sys::Uint8Array::from(f.1.as_slice()));
    }
    let message = js_sys::Object::new();
    js_sys::Reflect::set(&message, &"request".into(), &JsValue::from_str(&text))
        .and_then(|_| js_sys::Reflect::set(&message, &"files".into(), &files))
        .map_err(|e| format!("cannot build the message ({})", js_text(&e)))?;
    Ok(message.into())
}

fn post(worker: &Worker, message: &JsValue) {
    let _ = worker.post_message(message);
}

fn js_text(value: &JsValue) -> String {
    value
        .as_string()
        .or_else(|| {
            value
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{value:?}"))
}

/// Properties of [`RunStatus`].
#[derive(Properties, PartialEq)]
pub struct RunStatusProps {
    /// The page's worker.
    pub worker: WorkerHandle,
    /// What one step is (`policies`, `training runs`), for the progress text.
    #[prop_or(AttrValue::Static("steps"))]
    pub unit: AttrValue,
    /// Element id (a page with two workers needs two).
    #[prop_or(AttrValue::Static("run-status"))]
    pub id: AttrValue,
    /// Why the worker failed, shown as an error banner.
    #[prop_or_default]
    pub error: Option<String>,
}

/// The running request's progress bar and Cancel button; `data-state` is `running`, `idle`
/// or `cancelled` (the end-to-end test waits on it).
#[function_component(RunStatus)]
pub fn run_status(props: &RunStatusProps) -> Html {
    let view = props.worker.view().clone();
    let on_cancel = {
        let worker = props.worker.clone();
        Callback::from(move |_: MouseEvent| worker.cancel())
    };
    let state = match (view.running, view.cancelled) {
        (Some(_), _) => "running",
        (None, true) => "cancelled",
        (None, false) => "idle",
    };
    html! {
        <div class="run-status" id={props.id.clone()} data-state={state} role="status" aria-live="polite">
            if let Some((_, done, total)) = view.running {
                <progress max={total.max(1).to_string()} value={done.to_string()} />
                <span class="run-text">{
                    if total > 1 {
                        format!("Running in the background: {done} of {total} {}", props.unit)
                    } else {
                        "Running in the background…".to_string()
                    }
                }</span>
                <button type="button" class="cancel-run" onclick={on_cancel}>{ "Cancel" }</button>
            } else if view.cancelled {
                <span class="muted">{ "Cancelled: the results shown are from the last finished run." }</span>
            }
            if let Some(message) = &props.error {
                <div class="banner error worker-error" role="alert">{ format!("{message}. Your inputs are kept; change one to run again.") }</div>
            }
        </div>
    }
}
