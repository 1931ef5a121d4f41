//! The simulations run in a dedicated Web Worker, not on the page's main thread.
//!
//! Trunk builds one module of this crate (`bubblelab-web`) for both sides: the page loads it,
//! and `./bubblelab-worker.js` (relative to the page, so `dist/` works from any path) loads it
//! again in an ES module worker, where `main` starts [`serve`] instead of the app.
//!
//! The protocol, one message each way per step:
//! * page → worker: `{ request: <JSON of a [`Request`]>, files: [Uint8Array, …] }`: what to
//!   run, the scenario as its JSON text, and the bytes of the uploaded files (their slots and
//!   names in `Request::inputs`), which the worker reads with the lab's own readers;
//! * worker → page: a [`Reply`] as bytes in a transferred `Uint8Array` ([`encode_reply`]: a
//!   fairness piece as bincode, anything else as JSON): `Ready` once its module is loaded,
//!   then for each
//!   request `Progress` at the core's natural steps and finally `Done` with the [`Output`] or
//!   `Failed`.
//!
//! A request split into pieces ([`Request::piece`]: the fairness lab, one piece per policy)
//! runs on several workers at once; the page joins their outputs ([`join`]).
//!
//! The page's side is [`client`]; the worker's is [`serve`].

pub mod client;
pub mod serve;

use bubblelab_core::labs::fairness::policies::PolicyKind;
use bubblelab_core::labs::fairness::report::{RunDigest, TraceFacts};
use bubblelab_core::labs::fairness::sim::Sample;
use bubblelab_core::labs::fairness::{Dropped, PolicyRun, Segment};
use bubblelab_core::labs::resilience::job::Plan;
use bubblelab_core::report::Timeline;
use bubblelab_core::{Report, Scenario, ScenarioError};
use serde::{Deserialize, Serialize};

/// What the worker is asked to do with the request's scenario and files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Job {
    /// Runs the scenario's lab on the request's files, each in one of the lab's input slots
    /// ([`bubblelab_core::run_with_inputs`], as `bubblelab run --input SLOT=FILE`), answered
    /// with the Report; a lab whose page draws from its runs answers with what it draws
    /// ([`serve`]'s views).
    Run,
    /// Reads the files into the scenario's parameters ([`Scenario::with_inputs`]: a tenant
    /// shares file), answered with [`Output::Scenario`].
    Read,
    /// The trace view: Kineto traces, one per rank (the CLI's `kineto` verb; no lab).
    Kineto,
}

/// One file of a request: the input slot it fills (`trace`, `stage_logs`) and its name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// The lab's input slot ([`bubblelab_core::scenario::InputSlot::name`]).
    pub slot: String,
    /// The file's name, as errors and the Report's source line call it.
    pub name: String,
}

/// One request: `id` ties the worker's replies to it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Request {
    /// Run id, new for every request of the page.
    pub id: u32,
    /// What to do.
    pub job: Job,
    /// The scenario as JSON text (`Scenario::to_json`), when the job has one.
    pub scenario: Option<String>,
    /// The files whose bytes travel beside the request, in order.
    pub inputs: Vec<Input>,
    /// One piece of a request split across workers ([`client`] runs a split request's pieces
    /// in several workers at once): for the fairness lab, the positions of the scenario's
    /// policies to run, answered with [`Output::FairnessPiece`]; `None` runs the whole job.
    #[serde(default)]
    pub piece: Option<Vec<usize>>,
}

/// A worker's message to the page.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The worker's module is loaded; it reads requests from now on.
    Ready,
    /// `done` of `total` steps of request `id` are finished.
    Progress {
        /// The request.
        id: u32,
        /// Steps done.
        done: usize,
        /// Steps in all.
        total: usize,
    },
    /// Request `id` finished.
    Done {
        /// The request.
        id: u32,
        /// What it produced.
        output: Box<Output>,
    },
    /// Request `id` failed.
    Failed {
        /// The request.
        id: u32,
        /// Why.
        failure: Failure,
    },
}

/// A reply as the worker posts it ([`serve`]) and the page reads it ([`decode_reply`]): a
/// fairness piece, the page's largest reply (megabytes of per-tenant timelines, segments and
/// shares per policy), as bincode behind a 0 byte; any other reply as JSON, which never starts
/// with a 0 byte. A Report holds an untagged enum ([`bubblelab_core::report::Cell`]) that
/// only a self-describing format reads back, and a piece holds none. Both forms carry every
/// f64 exactly, and bincode is read without parsing a number from text: the page's thread,
/// which shares the machine's cores with the workers, reads a piece several times faster.
///
/// # Errors
/// The encoder's message when the reply cannot be encoded.
pub fn encode_reply(reply: &Reply) -> Result<Vec<u8>, String> {
    if matches!(reply, Reply::Done { output, .. } if matches!(**output, Output::FairnessPiece { .. }))
    {
        let mut bytes = vec![0u8];
        bincode::serialize_into(&mut bytes, reply).map_err(|e| e.to_string())?;
        Ok(bytes)
    } else {
        serde_json::to_vec(reply).map_err(|e| e.to_string())
    }
}

/// Reads a reply written by [`encode_reply`].
///
/// # Errors
/// What the decoder found wrong, naming the form it read.
pub fn decode_reply(bytes: &[u8]) -> Result<Reply, String> {
    match bytes.split_first() {
        Some((0, piece)) => bincode::deserialize(piece).map_err(|e| format!("bincode: {e}")),
        _ => serde_json::from_slice(bytes).map_err(|e| format!("JSON: {e}")),
    }
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Failure {
    /// The core refused the scenario or its run (the message names the field).
    Scenario(ScenarioError),
    /// An uploaded file could not be read (the message names the file, row or byte).
    Upload(String),
    /// The worker itself failed (it could not start, stopped, or sent what the page cannot
    /// read).
    Worker(String),
}

impl core::fmt::Display for Failure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Failure::Scenario(e) => write!(f, "{e}"),
            Failure::Upload(m) => write!(f, "{m}"),
            Failure::Worker(m) => write!(f, "the simulation worker failed: {m}"),
        }
    }
}

/// What a finished request produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Output {
    /// A Report (most labs, and uploads shown as one Report).
    Report(Report),
    /// The fairness lab's Report with what the cluster view and the share chart read of every
    /// policy's run, and the simulated trace's tenant names.
    Fairness {
        /// The Report.
        report: Report,
        /// One run per policy, in the scenario's order.
        runs: Vec<ClusterRun>,
        /// Tenant names, by index.
        tenants: Vec<String>,
    },
    /// One piece of a fairness run split across workers ([`Request::piece`]): what the Report
    /// and the page read of the piece's policies, each tagged with its position in the
    /// scenario's policies; [`join`] makes [`Output::Fairness`] of all the pieces.
    FairnessPiece {
        /// The simulated trace's facts (the same in every piece).
        facts: TraceFacts,
        /// Jobs left out of every run (the same in every piece).
        dropped: Dropped,
        /// Tenant names, by index (the same in every piece).
        tenants: Vec<String>,
        /// (position, digest) of each policy of the piece.
        digests: Vec<(usize, RunDigest)>,
        /// (position, what the page draws) of each policy of the piece.
        runs: Vec<(usize, ClusterRun)>,
    },
    /// The scenario with files read into its parameters ([`Job::Read`]), as JSON text.
    Scenario(String),
    /// The agentic lab's Report and how many agents the workload has.
    Agentic {
        /// The Report.
        report: Report,
        /// Agents (sessions) in the synthetic or uploaded workload.
        agents: u64,
    },
    /// The sharing lab's Report and each policy's cluster at the end of the first seed.
    Sharing {
        /// The Report.
        report: Report,
        /// One picture per policy, in the scenario's order.
        pictures: Vec<bubblelab_core::labs::sharing::ClusterPicture>,
    },
    /// The overlap lab's Report and the timelines of the graph as built and after each pass.
    Overlap {
        /// The Report.
        report: Report,
        /// (pass name, timeline) in order, `original` first.
        steps: Vec<(String, Timeline)>,
    },
    /// The resilience lab's Report, ResiHP's playback and its layout after re-planning.
    Resilience {
        /// The Report.
        report: Report,
        /// ResiHP's iterations for the playback.
        playback: Playback,
        /// ResiHP's final layout, when it re-planned.
        replanned: Option<Plan>,
    },
}

impl Output {
    /// The Report the output carries, if it carries one.
    #[must_use]
    pub fn into_report(mut self) -> Option<Report> {
        self.take_report()
    }

    /// Moves the Report out of the output (an empty one stays behind), so a page keeps the
    /// rest (a lab's runs) without a second copy of the Report.
    pub fn take_report(&mut self) -> Option<Report> {
        match self {
            Output::Report(report)
            | Output::Fairness { report, .. }
            | Output::Agentic { report, .. }
            | Output::Sharing { report, .. }
            | Output::Overlap { report, .. }
            | Output::Resilience { report, .. } => Some(core::mem::take(report)),
            Output::FairnessPiece { .. } | Output::Scenario(_) => None,
        }
    }
}

/// The output of a request run in pieces: the pieces' outputs joined into what the whole
/// request would have produced (for the fairness lab, the Report built from every piece's
/// digests, byte for byte the Report of the run in one worker:
/// [`bubblelab_core::labs::fairness::FairnessParams::assemble`]).
///
/// # Errors
/// [`Failure::Worker`] for pieces that do not make up the request (a piece missing, repeated
/// or of another job), [`Failure::Scenario`] when the core refuses them.
pub fn join(job: Job, scenario: Option<&Scenario>, pieces: Vec<Output>) -> Result<Output, Failure> {
    let Some(Scenario::Fairness(params)) = scenario.filter(|_| job == Job::Run) else {
        return Err(Failure::Worker(format!(
            "a {job:?} request cannot be run in pieces"
        )));
    };
    let mut first: Option<(TraceFacts, Dropped, Vec<String>)> = None;
    let mut all_digests = Vec::new();
    let mut all_runs = Vec::new();
    for piece in pieces {
        let Output::FairnessPiece {
            facts,
            dropped,
            tenants,
            mut digests,
            mut runs,
        } = piece
        else {
            return Err(Failure::Worker(
                "a piece that is not a fairness piece".into(),
            ));
        };
        all_digests.append(&mut digests);
        all_runs.append(&mut runs);
        first.get_or_insert((facts, dropped, tenants));
    }
    let Some((facts, dropped, tenants)) = first else {
        return Err(Failure::Worker("a run in no pieces".into()));
    };
    let report = params
        .assemble(&facts, dropped, all_digests)
        .map_err(Failure::Scenario)?;
    all_runs.sort_by_key(|(i, _)| *i);
    Ok(Output::Fairness {
        report,
        runs: all_runs.into_iter().map(|(_, r)| r).collect(),
        tenants,
    })
}

/// What the fairness page's cluster view and share chart read of one policy's run. The worker
/// sends this rather than the [`PolicyRun`]: a run's job and tenant states (per-job speeds,
/// per-tenant usage rings) are megabytes of JSON per policy that the page never reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterRun {
    /// The policy.
    pub kind: PolicyKind,
    /// Tenant of each job, by job index.
    pub job_tenants: Vec<u32>,
    /// The run's segments (each a maximal stretch of a job on one set of GPUs: a renewed
    /// lease does not split one).
    pub segments: Vec<Segment>,
    /// The shares at each sample, at most [`MAX_SHARE_SAMPLES`] ([`merge_share_samples`]):
    /// (time ns, used share and deserved share per tenant).
    pub samples: Vec<ShareSample>,
    /// Tenants in the trace.
    pub tenant_count: usize,
    /// Time of the first submission, ns.
    pub first_submit_ns: u64,
    /// Time of the last finish, ns.
    pub last_finish_ns: u64,
}

/// Most share samples the worker sends per run: the share chart is 720 px wide, and Philly's
/// 2,610 hourly buckets × 111 tenants × 12 policies were 150 MB of JSON for the page to decode.
pub const MAX_SHARE_SAMPLES: usize = 360;

/// The run's bucket samples, consecutive buckets merged so that at most `max` remain: a merged
/// sample closes at its last bucket's time and holds the mean of its buckets' shares, which is
/// the share of the merged window's GPU-time because every bucket has the same length.
#[must_use]
pub fn merge_share_samples(samples: &[Sample], max: usize) -> Vec<ShareSample> {
    let group = samples.len().div_ceil(max.max(1)).max(1);
    samples
        .chunks(group)
        .filter_map(|chunk| {
            let last = chunk.last()?;
            let n = chunk.len() as f64;
            let mean = |pick: fn(&Sample) -> &Vec<f64>| {
                let mut out = vec![0.0; pick(last).len()];
                for s in chunk {
                    for (o, v) in out.iter_mut().zip(pick(s)) {
                        *o += v;
                    }
                }
                for o in &mut out {
                    *o /= n;
                }
                out
            };
            Some(ShareSample {
                t_ns: last.t_ns,
                tenant_used_share: mean(|s| &s.tenant_used_share),
                tenant_deserved_share: mean(|s| &s.tenant_deserved_share),
            })
        })
        .collect()
}

/// One sample of a run's per-tenant shares of GPU-time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareSample {
    /// Sample time, ns.
    pub t_ns: u64,
    /// Each tenant's share of the GPU-time used.
    pub tenant_used_share: Vec<f64>,
    /// Each tenant's deserved share.
    pub tenant_deserved_share: Vec<f64>,
}

impl ClusterRun {
    /// What the page reads of `run`.
    #[must_use]
    pub fn of(run: PolicyRun) -> ClusterRun {
        ClusterRun {
            kind: run.kind,
            job_tenants: run.jobs.iter().map(|j| j.tenant).collect(),
            samples: merge_share_samples(&run.samples, MAX_SHARE_SAMPLES),
            segments: run.segments,
            tenant_count: run.tenants.len(),
            first_submit_ns: run.first_submit_ns,
            last_finish_ns: run.last_finish_ns,
        }
    }

    /// GPUs each tenant holds on each node at `t_ns` ([`bubblelab_core::labs::fairness::occupancy_at`]).
    #[must_use]
    pub fn occupancy_at(&self, nodes: usize, t_ns: u64) -> Vec<Vec<(u32, u32)>> {
        bubblelab_core::labs::fairness::occupancy_of(
            &self.segments,
            |job| self.job_tenants.get(job).copied().unwrap_or(0),
            nodes,
            t_ns,
        )
    }
}

/// What the resilience page's playback shows of ResiHP's run, iteration by iteration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Playback {
    /// (iteration, observed ns, predicted ns) of each executed iteration, in order.
    pub steps: Vec<(u32, u64, Option<f64>)>,
    /// Iterations at whose end ResiHP raised a fail-slow alarm, with the GPUs it blamed.
    pub alarms: Vec<(u32, Vec<u32>)>,
    /// First iteration run on the re-planned layout.
    pub replanned_at: Option<u32>,
}

impl Playback {
    /// The playback of one strategy's run.
    #[must_use]
    pub fn of(run: &bubblelab_core::labs::resilience::StrategyRun) -> Playback {
        let first_reconfig = run
            .pauses
            .iter()
            .find(|p| p.cat == "reconfigure")
            .map(|p| p.start_ns);
        Playback {
            steps: run
                .steps
                .iter()
                .map(|s| (s.iteration, s.dur_ns, s.predicted_ns))
                .collect(),
            alarms: run
                .alarms
                .iter()
                .map(|a| (a.iteration, a.gpus.clone()))
                .collect(),
            replanned_at: first_reconfig.and_then(|t| {
                run.steps
                    .iter()
                    .find(|s| s.start_ns >= t)
                    .map(|s| s.iteration)
            }),
        }
    }
}
