//! One controller on one workload: agents (admitted by the controller) submit turns to the
//! [`Engine`]; tool calls and arrivals are events on the core's `EventQueue`; the engine runs
//! steps back to back while it has work. At every control interval the controller reads the
//! signals of the interval and a [`Sample`] is recorded.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use super::controllers::{ControllerSpec, Signals};
use super::engine::{Counters, Engine, Phase, RequestRecord};
use super::params::EngineSpec;
use super::workload::Workload;
use crate::engine::EventQueue;
use crate::scenario::ScenarioError;
use crate::units::Nanos;

/// Most control intervals one run may record (a bound on idle stretches of traces).
pub const MAX_SAMPLES: u64 = 2_000_000;

/// What happened during one control interval (counters are deltas over it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// End of the interval, ns.
    pub end_ns: u64,
    /// The controller's window after its update (`u32::MAX` = no limit).
    pub window: u32,
    /// The running-request limit a batch controller had set at the end of the interval
    /// (`None` for the controllers that leave the engine's own limit).
    pub batch_limit: Option<u32>,
    /// Agents active at the end of the interval.
    pub active_agents: u32,
    /// Referenced KV blocks / all blocks at the end of the interval.
    pub kv_usage: f64,
    /// Cached (unreferenced) KV blocks / all blocks at the end of the interval.
    pub kv_cached: f64,
    /// Counter deltas over the interval.
    pub delta: Counters,
}

/// A span of a tracked agent in the per-agent timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentSpan {
    /// The agent.
    pub agent: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// What it was.
    pub kind: SpanKind,
}

/// Kinds of per-agent spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// Arrived but not admitted (or paused by the controller).
    Paused,
    /// Request waiting in the engine.
    Queued,
    /// Preempted by recompute, waiting to be rescheduled.
    Preempted,
    /// Prefill of new tokens only.
    Prefill,
    /// Prefill that recomputed evicted or dropped history.
    Recompute,
    /// Generating.
    Decode,
    /// Tool call; its KV stayed cached.
    Tool,
    /// Tool call during which some of its cached KV was evicted.
    ToolEvicted,
}

impl SpanKind {
    /// Category used for colour in timelines and Chrome traces.
    #[must_use]
    pub fn cat(self) -> &'static str {
        match self {
            SpanKind::Paused => "paused",
            SpanKind::Queued => "queued",
            SpanKind::Preempted => "preempted",
            SpanKind::Prefill => "prefill",
            SpanKind::Recompute => "recompute",
            SpanKind::Decode => "decode",
            SpanKind::Tool => "tool",
            SpanKind::ToolEvicted => "tool-evicted",
        }
    }
}

/// Everything one controller's run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ControllerRun {
    /// The controller.
    pub spec: ControllerSpec,
    /// Time the last agent finished, ns.
    pub makespan_ns: u64,
    /// Engine counters over the whole run.
    pub counters: Counters,
    /// Finish − arrival of each agent, ns, by agent id.
    pub agent_latency_ns: Vec<u64>,
    /// One sample per control interval.
    pub samples: Vec<Sample>,
    /// Spans of the tracked agents, sorted by (agent, start).
    pub spans: Vec<AgentSpan>,
    /// KV blocks of the engine.
    pub total_blocks: u64,
    /// Latencies of every finished request, in finish order.
    pub requests: Vec<RequestRecord>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Arrive(u32),
    ToolDone(u32),
}

impl crate::engine::Prioritized for Ev {
    /// Arrivals before tool completions at the same instant.
    fn priority(&self) -> u8 {
        match self {
            Ev::Arrive(_) => 0,
            Ev::ToolDone(_) => 1,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct AgentState {
    next_turn: usize,
    active: bool,
    done: bool,
    since_ns: u64,
    was_paused: bool,
}

struct Sim<'a> {
    work: &'a Workload,
    engine: Engine,
    controller: super::controllers::Controller,
    agents: Vec<AgentState>,
    pending: BTreeSet<(u64, u32)>,
    active: u32,
    unfinished: u32,
    events: EventQueue<Ev>,
    latency: Vec<u64>,
    spans: Vec<AgentSpan>,
    tracked: u32,
    makespan: u64,
}

impl Sim<'_> {
    fn span(&mut self, agent: u32, start: u64, end: u64, kind: SpanKind) {
        if agent < self.tracked && end > start {
            self.spans.push(AgentSpan {
                agent,
                start_ns: start,
                end_ns: end,
                kind,
            });
        }
    }

    fn submit(&mut self, a: u32, now: u64) {
        let st = &self.agents[a as usize];
        let turn = self.work.agents[a as usize].turns[st.next_turn];
        self.engine.submit(
            a,
            turn.prompt_tokens,
            turn.shared_prefix_tokens,
            turn.output_tokens,
            now,
        );
    }

    fn admit(&mut self, now: u64) {
        let window = self.controller.window();
        while self.active < window {
            let Some((key, a)) = self.pending.pop_first() else {
                break;
            };
            let _ = key;
            let st = &mut self.agents[a as usize];
            st.active = true;
            let since = st.since_ns;
            self.active += 1;
            self.span(a, since, now, SpanKind::Paused);
            self.submit(a, now);
        }
    }

    fn on_turn_end(&mut self, a: u32, now: u64) {
        let turns = &self.work.agents[a as usize].turns;
        let st = &mut self.agents[a as usize];
        let tool_ns = turns[st.next_turn].tool_ns;
        st.next_turn += 1;
        if st.next_turn == turns.len() {
            st.done = true;
            st.active = false;
            self.active -= 1;
            self.unfinished -= 1;
            self.latency[a as usize] = now - self.work.agents[a as usize].arrival_ns;
            self.makespan = self.makespan.max(now);
        } else {
            st.since_ns = now;
            let _ = self.engine.take_evicted(a);
            self.events.schedule(Nanos(now + tool_ns), Ev::ToolDone(a));
        }
    }

    fn on_event(&mut self, t: u64, ev: Ev) {
        match ev {
            Ev::Arrive(a) => {
                let st = &mut self.agents[a as usize];
                st.since_ns = t;
                self.pending
                    .insert((self.work.agents[a as usize].arrival_ns, a));
            }
            Ev::ToolDone(a) => {
                let evicted = self.engine.take_evicted(a);
                let since = self.agents[a as usize].since_ns;
                let kind = if evicted {
                    SpanKind::ToolEvicted
                } else {
                    SpanKind::Tool
                };
                self.span(a, since, t, kind);
                if self.active > self.controller.window() {
                    // Paused at a turn boundary: it holds no KV reference while it waits.
                    self.active -= 1;
                    let st = &mut self.agents[a as usize];
                    st.active = false;
                    st.was_paused = true;
                    st.since_ns = t;
                    self.pending
                        .insert((self.work.agents[a as usize].arrival_ns, a));
                } else {
                    self.submit(a, t);
                }
            }
        }
    }
}

/// Runs `spec` on `work` (every agent fits the engine; arrivals as given); a batch controller
/// holds each engine step to `step_objective_ns` (the TPOT objective).
///
/// # Errors
/// [`ScenarioError::Run`] if the engine stalls (a bug) or the run exceeds [`MAX_SAMPLES`].
#[allow(clippy::too_many_lines)] // the simulator's one event loop, its events handled in rank order in one place
pub fn run_controller(
    engine_spec: &EngineSpec,
    spec: &ControllerSpec,
    work: &Workload,
    control_interval_ns: u64,
    step_objective_ns: u64,
    tracked: u32,
) -> Result<ControllerRun, ScenarioError> {
    let n = work.agents.len();
    let engine_limit = engine_spec.max_running_requests;
    let mut engine_spec = engine_spec.clone();
    let controller = spec.build(step_objective_ns, engine_limit);
    engine_spec.max_running_requests = controller
        .running_limit()
        .unwrap_or_else(|| spec.running_limit(engine_limit));
    let mut sim = Sim {
        work,
        engine: Engine::new(&engine_spec, n, tracked),
        controller,
        agents: alloc::vec![AgentState::default(); n],
        pending: BTreeSet::new(),
        active: 0,
        unfinished: n as u32,
        events: EventQueue::new(),
        latency: alloc::vec![0; n],
        spans: Vec::new(),
        tracked,
        makespan: 0,
    };
    for (i, a) in work.agents.iter().enumerate() {
        sim.events
            .schedule(Nanos(a.arrival_ns), Ev::Arrive(i as u32));
    }
    let interval = control_interval_ns.max(1);
    let mut next_tick = interval;
    let mut last = Counters::default();
    let mut samples = Vec::new();
    let mut now = 0u64;
    while sim.unfinished > 0 {
        while let Some(t) = sim.events.peek_time() {
            if t.0 > now {
                break;
            }
            if let Some((t, ev)) = sim.events.pop() {
                sim.on_event(t.0, ev);
            }
        }
        sim.admit(now);
        while next_tick <= now {
            if samples.len() as u64 >= MAX_SAMPLES {
                return Err(ScenarioError::Run(alloc::format!(
                    "more than {MAX_SAMPLES} control intervals; raise agentic.control_interval_s"
                )));
            }
            let c = sim.engine.counters;
            let delta = diff(&c, &last);
            last = c;
            let signals = Signals {
                kv_usage: sim.engine.usage(),
                prefix_query_tokens: delta.prefix_query_tokens,
                prefix_hit_tokens: delta.prefix_hit_tokens,
                history_query_tokens: delta.history_query_tokens,
                history_hit_tokens: delta.history_hit_tokens,
                preemptions: delta.preemptions,
                active_agents: sim.active,
                unfinished_agents: sim.unfinished,
            };
            sim.controller.on_interval(&signals);
            let total = sim.engine.total_blocks().max(1) as f64;
            samples.push(Sample {
                end_ns: next_tick,
                window: sim.controller.window(),
                batch_limit: sim.controller.running_limit(),
                active_agents: sim.active,
                kv_usage: sim.engine.usage(),
                kv_cached: sim.engine.cached_blocks() as f64 / total,
                delta,
            });
            next_tick += interval;
            sim.admit(now);
        }
        if sim.engine.has_work() {
            let Some(out) = sim.engine.step(now) else {
                return Err(ScenarioError::Run(alloc::format!(
                    "the engine could schedule nothing at {now} ns with requests waiting"
                )));
            };
            sim.controller.on_step(out.end_ns - now);
            if let Some(limit) = sim.controller.running_limit() {
                sim.engine.set_max_running(limit);
            }
            now = out.end_ns;
            for &a in &out.finished {
                sim.on_turn_end(a, now);
            }
        } else if let Some(t) = sim.events.peek_time() {
            now = now.max(t.0);
        } else {
            return Err(ScenarioError::Run(alloc::format!(
                "{} agents left unfinished with nothing to run or wait for",
                sim.unfinished
            )));
        }
    }
    // The last partial interval.
    let c = sim.engine.counters;
    let delta = diff(&c, &last);
    let total = sim.engine.total_blocks().max(1) as f64;
    samples.push(Sample {
        end_ns: now.max(next_tick - interval),
        window: sim.controller.window(),
        batch_limit: sim.controller.running_limit(),
        active_agents: sim.active,
        kv_usage: sim.engine.usage(),
        kv_cached: sim.engine.cached_blocks() as f64 / total,
        delta,
    });
    let mut spans = sim.spans;
    for p in &sim.engine.spans {
        let kind = match p.phase {
            Phase::Queued => SpanKind::Queued,
            Phase::Preempted => SpanKind::Preempted,
            Phase::Prefill if p.recompute => SpanKind::Recompute,
            Phase::Prefill => SpanKind::Prefill,
            Phase::Decode => SpanKind::Decode,
            Phase::Idle => continue,
        };
        if p.end_ns > p.start_ns {
            spans.push(AgentSpan {
                agent: p.agent,
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                kind,
            });
        }
    }
    spans.sort_by_key(|s| (s.agent, s.start_ns, s.end_ns));
    let requests = core::mem::take(&mut sim.engine.requests);
    Ok(ControllerRun {
        spec: spec.clone(),
        makespan_ns: sim.makespan,
        counters: sim.engine.counters,
        agent_latency_ns: sim.latency,
        samples,
        spans,
        total_blocks: sim.engine.total_blocks(),
        requests,
    })
}

fn diff(a: &Counters, b: &Counters) -> Counters {
    Counters {
        prefill_new_tokens: a.prefill_new_tokens - b.prefill_new_tokens,
        recompute_tokens: a.recompute_tokens - b.recompute_tokens,
        partial_block_tokens: a.partial_block_tokens - b.partial_block_tokens,
        decode_tokens: a.decode_tokens - b.decode_tokens,
        prefix_query_tokens: a.prefix_query_tokens - b.prefix_query_tokens,
        prefix_hit_tokens: a.prefix_hit_tokens - b.prefix_hit_tokens,
        history_query_tokens: a.history_query_tokens - b.history_query_tokens,
        history_hit_tokens: a.history_hit_tokens - b.history_hit_tokens,
        evicted_blocks: a.evicted_blocks - b.evicted_blocks,
        preemptions: a.preemptions - b.preemptions,
        steps: a.steps - b.steps,
        busy_ns: a.busy_ns - b.busy_ns,
        attention_ns: a.attention_ns - b.attention_ns,
    }
}
