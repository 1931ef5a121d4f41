//! The page's side of the worker: [`use_worker`] gives a lab page a [`WorkerHandle`] that posts
//! requests and calls back with their outputs, and [`RunStatus`] shows a running request's
//! progress with a Cancel button.
//!
//! One request runs at a time, whole in one worker or split into pieces that run in several
//! workers at once ([`WorkerHandle::run_in_pieces`]: the fairness lab's policies). A new
//! request supersedes the one running: the busy workers are terminated (a worker would finish
//! the old run before reading anything new) and fresh ones start; Cancel terminates them too.
//! Every reply carries its request's id and the page drops replies of any other id, so a
//! superseded run can never overwrite a newer result. Idle workers are kept for the next
//! request. The workers are terminated when the page unmounts.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use bubblelab_core::Scenario;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker};
use yew::prelude::*;

use super::{Failure, Job, Output, Reply, Request};

/// The worker's script, relative to the page (`static/bubblelab-worker.js`, which loads the
/// page's own module as an ES module worker; relative, so `dist/` works under any path).
pub const WORKER_URL: &str = "./bubblelab-worker.js";

/// A file's name and bytes, shared (an upload is re-sent with every run on it).
pub type SharedFile = Rc<(String, Vec<u8>)>;

/// What to run: the job, its scenario and its files.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRequest {
    /// What to do.
    pub job: Job,
    /// The scenario, when the job has one.
    pub scenario: Option<Scenario>,
    /// Uploaded files the worker reads, each with the lab's input slot it fills.
    pub files: Vec<(&'static str, SharedFile)>,
}

impl RunRequest {
    /// A [`Job::Run`] of `scenario` on `files`.
    #[must_use]
    pub fn run(scenario: &Scenario, files: Vec<(&'static str, SharedFile)>) -> RunRequest {
        RunRequest {
            job: Job::Run,
            scenario: Some(scenario.clone()),
            files,
        }
    }
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
    /// The pieces the request is split into ([`WorkerHandle::run_in_pieces`]); empty: the
    /// request runs whole in one worker.
    pieces: Vec<Vec<usize>>,
    /// Pieces not yet handed to a worker, in order.
    todo: VecDeque<usize>,
    /// Each piece's output, once it came back.
    outputs: Vec<Option<Output>>,
    done: Callback<Outcome>,
}

impl Pending {
    /// Tasks of the request: its pieces, or the whole request.
    fn tasks(&self) -> usize {
        self.pieces.len().max(1)
    }

    fn finished(&self) -> usize {
        self.outputs.iter().filter(|o| o.is_some()).count()
    }

    /// The message of task `task` for a worker.
    fn message(&self, task: usize) -> Result<JsValue, String> {
        encode(self.id, &self.request, self.pieces.get(task).cloned())
    }
}

/// The worker's `onmessage` and `onerror` handlers (kept alive while it runs).
type Handlers = (
    Closure<dyn Fn(MessageEvent)>,
    Closure<dyn Fn(web_sys::Event)>,
);

/// One worker of the page's pool, its handlers and the task of the current request it runs.
struct Slot {
    /// Tells the slot's replies apart from those of the other slots.
    key: u32,
    worker: Worker,
    _handlers: Handlers,
    /// The module has loaded and said so (messages sent before are lost).
    ready: bool,
    /// Messages waiting for the worker to be ready, in order.
    queued: Vec<JsValue>,
    /// The tasks of the current request handed to this worker, in the order it runs them:
    /// the one it runs, and up to [`TASKS_AHEAD`] − 1 waiting in its message queue.
    tasks: VecDeque<usize>,
}

impl Slot {
    fn terminate(&self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}

/// The workers, and the request they run.
struct Inner {
    slots: Vec<Slot>,
    current: Option<Pending>,
    next_id: u32,
    next_key: u32,
    /// The worker's script could not be loaded (the wasm tests serve no worker): requests
    /// run on the page instead, with a console error saying so. Only with the `inline-runs`
    /// feature: the playground never runs a lab on its main thread.
    #[cfg(feature = "inline-runs")]
    inline: bool,
}

impl Inner {
    fn new() -> Inner {
        Inner {
            slots: Vec::new(),
            current: None,
            next_id: 0,
            next_key: 0,
            #[cfg(feature = "inline-runs")]
            inline: false,
        }
    }

    /// Terminates the busy workers (mid-run); idle ones are kept for the next request.
    fn kill_busy(&mut self) {
        self.slots.retain(|slot| {
            if !slot.tasks.is_empty() {
                slot.terminate();
            }
            slot.tasks.is_empty()
        });
    }

    /// Terminates every worker; the next request starts fresh ones.
    fn kill_all(&mut self) {
        for slot in self.slots.drain(..) {
            slot.terminate();
        }
    }

    fn slot(&mut self, key: u32) -> Option<&mut Slot> {
        self.slots.iter_mut().find(|s| s.key == key)
    }

    /// Hands the current request's next tasks to the workers with fewer than [`TASKS_AHEAD`],
    /// one round over the workers at a time (so the first tasks, the longest, go to different
    /// workers); returns the messages to post now (to workers already loaded), or why a task
    /// could not be encoded.
    fn dispatch(&mut self) -> Result<Vec<(Worker, JsValue)>, String> {
        let mut posts = Vec::new();
        let Some(pending) = self.current.as_mut() else {
            return Ok(posts);
        };
        for depth in 1..=TASKS_AHEAD {
            for slot in &mut self.slots {
                if slot.tasks.len() >= depth {
                    continue;
                }
                let Some(task) = pending.todo.pop_front() else {
                    return Ok(posts);
                };
                let message = pending.message(task)?;
                slot.tasks.push_back(task);
                if slot.ready {
                    posts.push((slot.worker.clone(), message));
                } else {
                    slot.queued.push(message);
                }
            }
        }
        Ok(posts)
    }
}

/// Workers a request split into `tasks` pieces runs on: one per piece, at most one per
/// logical CPU the browser reports (`navigator.hardwareConcurrency`) and at most
/// [`MAX_WORKERS`].
fn pool_size(tasks: usize) -> usize {
    let cpus = web_sys::window()
        .map(|w| w.navigator().hardware_concurrency())
        .filter(|c| c.is_finite() && *c >= 1.0)
        .map_or(1, |c| c as usize);
    tasks.min(cpus).clamp(1, MAX_WORKERS)
}

/// Most workers one page runs at once (each holds its own copy of the module and the trace).
pub const MAX_WORKERS: usize = 8;

/// Tasks a worker holds at once: the one it runs and the next, already in its message queue,
/// so that it starts the next as soon as it posts a reply, while the page reads that reply
/// (a worker holding one task would wait for the page's thread to read it and send the next).
const TASKS_AHEAD: usize = 2;

/// A lab page's handle on its workers.
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

/// Workers for this page, terminated when the page goes.
#[hook]
pub fn use_worker() -> WorkerHandle {
    let view = use_reducer(RunView::default);
    let inner = use_mut_ref(Inner::new);
    {
        let inner = inner.clone();
        use_effect_with((), move |()| move || inner.borrow_mut().kill_all());
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
        self.run_in_pieces(request, Vec::new(), done);
    }

    /// [`WorkerHandle::run`], with the request split into `pieces` ([`Request::piece`]) that
    /// run in several workers at once, handed out in the order given, each worker holding the
    /// next piece in its queue while it runs one ([`TASKS_AHEAD`]);
    /// their outputs are joined ([`super::join`]) into the output of the whole request.
    /// Progress counts the pieces finished. No pieces: the request runs whole.
    pub fn run_in_pieces(
        &self,
        request: RunRequest,
        pieces: Vec<Vec<usize>>,
        done: Callback<Outcome>,
    ) {
        let (id, posts) = {
            let mut inner = self.inner.borrow_mut();
            if inner.current.take().is_some() {
                inner.kill_busy();
            }
            inner.next_id = inner.next_id.wrapping_add(1);
            let id = inner.next_id;
            let tasks = pieces.len().max(1);
            let pending = Pending {
                id,
                request,
                todo: (0..tasks).collect(),
                outputs: (0..tasks).map(|_| None).collect(),
                pieces,
                done,
            };
            inner.current = Some(pending);
            #[cfg(feature = "inline-runs")]
            if inner.inline {
                drop(inner);
                run_inline(Rc::downgrade(&self.inner), self.view.dispatcher(), id);
                self.view.dispatch(ViewAction::Start(id));
                return;
            }
            while inner.slots.len() < pool_size(tasks) {
                if let Err(e) = self.spawn(&mut inner) {
                    if inner.slots.is_empty() {
                        let pending = inner.current.take();
                        drop(inner);
                        if let Some(p) = pending {
                            p.done.emit(Err(Failure::Worker(e)));
                        }
                        return;
                    }
                    break;
                }
            }
            let posts = inner.dispatch();
            (id, posts)
        };
        self.view.dispatch(ViewAction::Start(id));
        match posts {
            Ok(posts) => {
                for (worker, message) in posts {
                    post(&worker, &message);
                }
            }
            Err(e) => fail(&self.inner, &self.view.dispatcher(), e),
        }
    }

    /// Stops the running request (its workers are terminated); the page keeps what it shows.
    pub fn cancel(&self) {
        let cancelled = {
            let mut inner = self.inner.borrow_mut();
            let cancelled = inner.current.take().is_some();
            if cancelled {
                inner.kill_busy();
            }
            cancelled
        };
        if cancelled {
            self.view.dispatch(ViewAction::Cancelled);
        }
    }

    fn spawn(&self, inner: &mut Inner) -> Result<(), String> {
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        let worker = Worker::new_with_options(WORKER_URL, &options)
            .map_err(|e| format!("it could not start ({})", js_text(&e)))?;
        inner.next_key = inner.next_key.wrapping_add(1);
        let key = inner.next_key;
        let on_message = {
            let cell = Rc::downgrade(&self.inner);
            let view = self.view.dispatcher();
            Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
                let Some(cell) = cell.upgrade() else { return };
                // The reply's bytes (`serve::post`, [`super::encode_reply`]).
                let reply = event
                    .data()
                    .dyn_into::<js_sys::Uint8Array>()
                    .map_err(|_| "a reply that is not bytes".to_string())
                    .and_then(|bytes| {
                        super::decode_reply(&bytes.to_vec())
                            .map_err(|e| format!("a reply the page cannot read ({e})"))
                    });
                on_reply(&cell, &view, key, reply);
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
                let started = rc.borrow_mut().slot(key).is_some_and(|s| s.ready);
                if !started {
                    // The worker never started (its script is missing or is not a script).
                    let reason = if message.is_empty() {
                        "not loaded"
                    } else {
                        message.as_str()
                    };
                    never_started(&cell, &view, &rc, reason);
                    return;
                }
                let message = if message.is_empty() {
                    "it stopped".to_string()
                } else {
                    format!("it stopped: {message}")
                };
                if rc
                    .borrow_mut()
                    .slot(key)
                    .is_some_and(|s| !s.tasks.is_empty())
                {
                    fail(&rc, &view, message);
                } else {
                    // An idle worker stopped: dropped, the next request starts another.
                    let mut inner = rc.borrow_mut();
                    if let Some(slot) = inner.slot(key) {
                        slot.terminate();
                    }
                    inner.slots.retain(|s| s.key != key);
                }
            })
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        inner.slots.push(Slot {
            key,
            worker,
            _handlers: (on_message, on_error),
            ready: false,
            queued: Vec::new(),
            tasks: VecDeque::new(),
        });
        Ok(())
    }
}

/// Ends the current request with `message` as a worker failure; its busy workers are
/// terminated.
fn fail(cell: &RefCell<Inner>, view: &UseReducerDispatcher<RunView>, message: String) {
    let pending = {
        let mut inner = cell.borrow_mut();
        inner.kill_busy();
        inner.current.take()
    };
    if let Some(p) = pending {
        view.dispatch(ViewAction::Finish(p.id));
        p.done.emit(Err(Failure::Worker(message)));
    }
}

/// The outcome of a request whose tasks all came back: the whole request's output, or the
/// pieces joined.
fn outcome_of(pending: Pending) -> Outcome {
    let outputs: Vec<Output> = pending.outputs.into_iter().flatten().collect();
    if pending.pieces.is_empty() {
        outputs
            .into_iter()
            .next()
            .ok_or_else(|| Failure::Worker("no output came back".into()))
    } else {
        super::join(
            pending.request.job,
            pending.request.scenario.as_ref(),
            outputs,
        )
    }
}

/// A worker whose script never started: the request fails saying so (the labs run only in the
/// worker), or, with the `inline-runs` feature of the wasm tests, runs on the page from now on.
fn never_started(
    cell: &std::rc::Weak<RefCell<Inner>>,
    view: &UseReducerDispatcher<RunView>,
    rc: &RefCell<Inner>,
    reason: &str,
) {
    rc.borrow_mut().kill_all();
    #[cfg(feature = "inline-runs")]
    {
        gloo::console::error!(format!(
            "bubblelab: the simulation worker ({WORKER_URL}) could not start ({reason}); \
             simulations run on the page's main thread"
        ));
        let id = {
            let mut inner = rc.borrow_mut();
            inner.inline = true;
            inner.current.as_ref().map(|p| p.id)
        };
        if let Some(id) = id {
            run_inline(cell.clone(), view.clone(), id);
        }
    }
    #[cfg(not(feature = "inline-runs"))]
    {
        let _ = cell;
        fail(
            rc,
            view,
            format!(
                "it could not start ({reason}); the labs run only in the worker, \
                 {WORKER_URL}, served beside the page"
            ),
        );
    }
}

/// Runs request `id` on the page (no worker), soon, unless it was superseded meanwhile.
#[cfg(feature = "inline-runs")]
fn run_inline(cell: std::rc::Weak<RefCell<Inner>>, view: UseReducerDispatcher<RunView>, id: u32) {
    gloo::timers::callback::Timeout::new(0, move || {
        let Some(cell) = cell.upgrade() else { return };
        let (request, pieces) = match &cell.borrow().current {
            Some(p) if p.id == id => (p.request.clone(), p.pieces.clone()),
            _ => return,
        };
        let files: Vec<(String, Vec<u8>)> = request
            .files
            .iter()
            .map(|(_, f)| (f.0.clone(), f.1.clone()))
            .collect();
        let run = |piece: Option<Vec<usize>>| {
            super::serve::handle(&wire(id, &request, piece), files.clone(), &mut |_, _| {})
        };
        let outcome = if pieces.is_empty() {
            run(None)
        } else {
            pieces
                .into_iter()
                .map(|p| run(Some(p)))
                .collect::<Result<Vec<Output>, Failure>>()
                .and_then(|outputs| super::join(request.job, request.scenario.as_ref(), outputs))
        };
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

/// Handles one reply of the worker `key`: progress and outcomes of the current request only.
fn on_reply(
    cell: &RefCell<Inner>,
    view: &UseReducerDispatcher<RunView>,
    key: u32,
    reply: Result<Reply, String>,
) {
    let reply = match reply {
        Ok(r) => r,
        Err(message) => return fail(cell, view, message),
    };
    let current = cell.borrow().current.as_ref().map(|p| p.id);
    match reply {
        Reply::Ready => {
            let send = {
                let mut inner = cell.borrow_mut();
                inner.slot(key).map(|slot| {
                    slot.ready = true;
                    (slot.worker.clone(), core::mem::take(&mut slot.queued))
                })
            };
            if let Some((worker, messages)) = send {
                for message in &messages {
                    post(&worker, message);
                }
            }
        }
        Reply::Progress { id, done, total } if Some(id) == current => {
            // A whole request's own steps; a split one counts its pieces instead.
            let whole = cell
                .borrow()
                .current
                .as_ref()
                .is_some_and(|p| p.pieces.is_empty());
            if whole {
                view.dispatch(ViewAction::Progress(id, done, total));
            }
        }
        Reply::Done { id, output } if Some(id) == current => {
            let (posts, finished) = {
                let mut inner = cell.borrow_mut();
                let Some(task) = inner.slot(key).and_then(|s| s.tasks.pop_front()) else {
                    return;
                };
                let Some(pending) = inner.current.as_mut() else {
                    return;
                };
                if let Some(out) = pending.outputs.get_mut(task) {
                    *out = Some(*output);
                }
                let (done, total) = (pending.finished(), pending.tasks());
                if done == total {
                    (Ok(Vec::new()), Some(inner.current.take()))
                } else {
                    if !pending.pieces.is_empty() {
                        view.dispatch(ViewAction::Progress(id, done, total));
                    }
                    (inner.dispatch(), None)
                }
            };
            if let Some(Some(pending)) = finished {
                let done = pending.done.clone();
                let outcome = outcome_of(pending);
                view.dispatch(ViewAction::Finish(id));
                done.emit(outcome);
                return;
            }
            match posts {
                Ok(posts) => {
                    for (worker, message) in posts {
                        post(&worker, &message);
                    }
                }
                Err(e) => fail(cell, view, e),
            }
        }
        Reply::Failed { id, failure } if Some(id) == current => {
            let pending = {
                let mut inner = cell.borrow_mut();
                inner.kill_busy();
                inner.current.take()
            };
            view.dispatch(ViewAction::Finish(id));
            if let Some(p) = pending {
                p.done.emit(Err(failure));
            }
        }
        // A superseded request's reply.
        Reply::Progress { .. } | Reply::Done { .. } | Reply::Failed { .. } => {}
    }
}

/// The wire form of `request` (or of one of its pieces) as request `id`.
fn wire(id: u32, request: &RunRequest, piece: Option<Vec<usize>>) -> Request {
    Request {
        id,
        job: request.job,
        scenario: request.scenario.as_ref().map(Scenario::to_json),
        inputs: request
            .files
            .iter()
            .map(|(slot, f)| super::Input {
                slot: (*slot).to_string(),
                name: f.0.clone(),
            })
            .collect(),
        piece,
    }
}

fn encode(id: u32, request: &RunRequest, piece: Option<Vec<usize>>) -> Result<JsValue, String> {
    let text = serde_json::to_string(&wire(id, request, piece))
        .map_err(|e| format!("cannot encode the request ({e})"))?;
    let files = js_sys::Array::new();
    for (_, f) in &request.files {
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
