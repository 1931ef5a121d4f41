//! The one discrete-event engine.
//!
//! * [`EventQueue`] orders events by (time, event-kind priority, sequence number). The sequence
//!   number makes ties deterministic: two events at the same instant with the same priority pop
//!   in the order they were pushed, on every platform.
//! * [`TaskGraph`] + [`simulate`] run a dependency graph of tasks on resources (GPU streams,
//!   pipeline stages, links). A task starts when all its dependencies have finished (each plus an
//!   optional delay, e.g. a P2P latency) and its resource is free. A resource either follows a
//!   fixed program order ([`Discipline::InOrder`], like a CUDA stream) or serves ready tasks
//!   first-come first-served ([`Discipline::Fifo`], like a link). [`simulate_on_processors`]
//!   runs the same graph with a limited number of processors that the resources take turns on
//!   (streams multiplexed onto a CPU's cores by a worker pool).
//! * [`MemoryLedger`] follows allocations and frees per pool over time and reports the peak.

use alloc::collections::BinaryHeap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::{Ordering, Reverse};

use crate::units::Nanos;

/// An event of kind `E` scheduled at `time`.
#[derive(Debug)]
struct Entry<E> {
    time: Nanos,
    priority: u8,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}
impl<E> Entry<E> {
    fn key(&self) -> (Nanos, u8, u64) {
        (self.time, self.priority, self.seq)
    }
}

/// A simulator's event, which knows its rank among events at the same instant (lower first):
/// each simulator's event enum states its ranks once, so no push names a number.
pub trait Prioritized {
    /// Rank among events at the same time, lowest first.
    fn priority(&self) -> u8;
}

/// A priority queue of timed events: earliest time first, then lowest `priority` value, then
/// insertion order.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    #[must_use]
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
            popped: 0,
        }
    }

    /// Schedules `event` at `time`; among events at the same time, lower `priority` pops first.
    pub fn push(&mut self, time: Nanos, priority: u8, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Entry {
            time,
            priority,
            seq,
            event,
        }));
    }

    /// Schedules `event` at `time` at its own rank ([`Prioritized::priority`]).
    pub fn schedule(&mut self, time: Nanos, event: E)
    where
        E: Prioritized,
    {
        let priority = event.priority();
        self.push(time, priority, event);
    }

    /// Removes and returns the next event and its time.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let Reverse(entry) = self.heap.pop()?;
        self.popped += 1;
        Some((entry.time, entry.event))
    }

    /// Time of the next event, without removing it.
    #[must_use]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse(entry)| entry.time)
    }

    /// The next event's place in the order — (time, priority, sequence number) —, without
    /// removing it.
    #[must_use]
    pub fn peek_key(&self) -> Option<(Nanos, u8, u64)> {
        self.heap.peek().map(|Reverse(entry)| entry.key())
    }

    /// Takes the sequence number the next push would get, for an event a simulator keeps
    /// outside the queue (a list it knows to be in time order) and merges with it by
    /// [`EventQueue::peek_key`]: the merged order is the one the queue would have given.
    pub fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Number of events waiting.
    #[must_use]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when no event waits.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Drops every waiting event for which `keep` returns false (events the simulator knows
    /// can no longer do anything); the others keep their order.
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        self.heap.retain(|Reverse(entry)| keep(&entry.event));
    }

    /// Number of events popped so far (the engine's work count, used by benchmarks).
    #[must_use]
    pub fn processed(&self) -> u64 {
        self.popped
    }
}

/// Index of a task in a [`TaskGraph`].
pub type TaskId = usize;
/// Index of a resource in a [`TaskGraph`].
pub type ResourceId = usize;

/// How a resource picks its next task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// Tasks run in exactly this order (a CUDA stream, a pipeline stage's schedule).
    InOrder(Vec<TaskId>),
    /// Ready tasks run first-come first-served; ties by task id (a link, a copy engine).
    Fifo,
}

/// A resource that runs one task at a time.
#[derive(Clone, Debug)]
pub struct Resource {
    /// Display name, e.g. `stage 2` or `link 1→2`.
    pub name: String,
    /// How the next task is chosen.
    pub discipline: Discipline,
}

/// A dependency: the task may start `delay_ns` after `task` finishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dep {
    /// The task that must finish first.
    pub task: TaskId,
    /// Extra time between that task's end and this task becoming ready, in ns.
    pub delay_ns: u64,
}

/// One unit of work on a resource.
#[derive(Clone, Debug)]
pub struct Task {
    /// Where the task runs.
    pub resource: ResourceId,
    /// How long it occupies the resource, in ns.
    pub duration_ns: u64,
    /// What must finish before it may start.
    pub deps: Vec<Dep>,
}

/// Tasks and the resources they run on.
#[derive(Clone, Debug, Default)]
pub struct TaskGraph {
    /// All resources, indexed by [`ResourceId`].
    pub resources: Vec<Resource>,
    /// All tasks, indexed by [`TaskId`].
    pub tasks: Vec<Task>,
}

/// When each task ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TaskTiming {
    /// Start time.
    pub start: Nanos,
    /// End time.
    pub end: Nanos,
}

/// Why a simulation could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineError {
    /// A dependency or program order names a task or resource that does not exist.
    BadReference(String),
    /// Some tasks never became runnable: a cycle, or a program order that contradicts a
    /// dependency. Carries the first stuck task and its resource name.
    Deadlock {
        /// How many tasks finished.
        finished: usize,
        /// How many tasks exist.
        total: usize,
        /// The first task that never ran.
        stuck_task: TaskId,
        /// The resource it was waiting on.
        resource: String,
    },
}

impl core::fmt::Display for EngineError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EngineError::BadReference(what) => write!(f, "bad reference: {what}"),
            EngineError::Deadlock {
                finished,
                total,
                stuck_task,
                resource,
            } => write!(
                f,
                "deadlock: {finished} of {total} tasks finished; task {stuck_task} on {resource} never became runnable"
            ),
        }
    }
}

/// Event kinds of the task simulation. Ends are processed before readiness at the same instant
/// so that a resource freed at time t is seen free by a task that becomes ready at t.
#[derive(Clone, Copy, Debug)]
enum TaskEvent {
    /// A task's end, valid while its version is the task's latest (contention between
    /// processors moves ends when the number of busy processors changes).
    End(TaskId, u64),
    DepSatisfied(TaskId),
}

/// Processors that resources take turns on ([`simulate_on_processors`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Processors {
    /// How many (at least 1).
    pub count: u32,
    /// Fraction by which a task slows for each other busy processor: with k busy, each runs at
    /// 1 / (1 + contention·(k − 1)) of its speed (shared caches, memory bandwidth and clock).
    pub contention: f64,
}

/// A task on a processor: work left (ns at full speed), since when, at which rate, and the
/// version of its pending end.
#[derive(Clone, Copy, Debug)]
struct OnProcessor {
    task: TaskId,
    remaining_ns: f64,
    since: Nanos,
    rate: f64,
    version: u64,
}

/// Re-rates the tasks on processors after their number changed: each keeps the work it has
/// done and gets a new end at the new rate.
fn rerate(
    on: &mut [OnProcessor],
    contention: f64,
    now: Nanos,
    version: &mut u64,
    queue: &mut EventQueue<TaskEvent>,
) {
    let rate = 1.0 / (1.0 + contention.max(0.0) * (on.len().max(1) - 1) as f64);
    for p in on.iter_mut() {
        if p.version != 0 && (p.rate - rate).abs() < f64::EPSILON {
            continue;
        }
        let elapsed = (now - p.since).0 as f64;
        p.remaining_ns = (p.remaining_ns - elapsed * p.rate).max(0.0);
        p.since = now;
        p.rate = rate;
        *version += 1;
        p.version = *version;
        queue.schedule(
            now + crate::units::nanos_from_f64(p.remaining_ns / rate),
            TaskEvent::End(p.task, p.version),
        );
    }
}
impl Prioritized for TaskEvent {
    /// A task's end before the dependencies satisfied at the same instant.
    fn priority(&self) -> u8 {
        match self {
            TaskEvent::End(..) => 0,
            TaskEvent::DepSatisfied(_) => 1,
        }
    }
}

/// The result of [`simulate`].
#[derive(Clone, Debug)]
pub struct Simulation {
    /// Start and end of every task, indexed by [`TaskId`].
    pub timings: Vec<TaskTiming>,
    /// Latest end time over all tasks.
    pub makespan: Nanos,
    /// Number of events the engine processed.
    pub events: u64,
}

struct ResourceState {
    busy: bool,
    /// InOrder: position of the next task in the program.
    cursor: usize,
    /// Fifo: ready tasks in arrival order (arrival is already deterministic).
    ready: alloc::collections::VecDeque<TaskId>,
}

/// Runs every task of `graph` and returns when each ran.
///
/// # Errors
/// [`EngineError::BadReference`] for out-of-range ids or a task listed in the wrong resource's
/// program; [`EngineError::Deadlock`] when some task can never run.
pub fn simulate(graph: &TaskGraph) -> Result<Simulation, EngineError> {
    run(graph, None)
}

/// [`simulate`] with a limited number of processors that the resources take turns on, as a
/// pool of worker threads runs a CPU executor's streams on its cores: a resource whose next task
/// is ready waits for a free processor; a freed processor takes the resource that has waited
/// longest (first come, first served; at one instant in the order the engine saw them); a task
/// runs to its end on its processor (no time slicing), slowed while other processors are busy
/// by [`Processors::contention`]. With at least as many processors as resources and no
/// contention this equals [`simulate`].
///
/// # Errors
/// As [`simulate`]; 0 processors are taken as 1.
pub fn simulate_on_processors(
    graph: &TaskGraph,
    processors: Processors,
) -> Result<Simulation, EngineError> {
    run(
        graph,
        Some(Processors {
            count: processors.count.max(1),
            ..processors
        }),
    )
}

#[allow(clippy::too_many_lines)] // the engine's one event loop, its events handled in one place
fn run(graph: &TaskGraph, processors: Option<Processors>) -> Result<Simulation, EngineError> {
    let n = graph.tasks.len();
    let mut successors: Vec<Vec<(TaskId, u64)>> = vec![Vec::new(); n];
    let mut waiting: Vec<usize> = vec![0; n];
    for (id, task) in graph.tasks.iter().enumerate() {
        if task.resource >= graph.resources.len() {
            return Err(EngineError::BadReference(alloc::format!(
                "task {id} names resource {} of {}",
                task.resource,
                graph.resources.len()
            )));
        }
        for dep in &task.deps {
            if dep.task >= n {
                return Err(EngineError::BadReference(alloc::format!(
                    "task {id} depends on task {} of {n}",
                    dep.task
                )));
            }
            successors[dep.task].push((id, dep.delay_ns));
        }
        waiting[id] = task.deps.len();
    }
    // Each InOrder task must appear exactly once, in the program of its own resource.
    let mut listed = vec![false; n];
    for (rid, res) in graph.resources.iter().enumerate() {
        if let Discipline::InOrder(program) = &res.discipline {
            for &t in program {
                if t >= n || graph.tasks[t].resource != rid || listed[t] {
                    return Err(EngineError::BadReference(alloc::format!(
                        "program of {} lists task {t} that is missing, repeated or on another resource",
                        res.name
                    )));
                }
                listed[t] = true;
            }
        }
    }
    for (id, task) in graph.tasks.iter().enumerate() {
        if matches!(
            graph.resources[task.resource].discipline,
            Discipline::InOrder(_)
        ) && !listed[id]
        {
            return Err(EngineError::BadReference(alloc::format!(
                "task {id} is not in the program of {}",
                graph.resources[task.resource].name
            )));
        }
    }

    let mut ready = vec![false; n];
    let mut done = vec![false; n];
    let mut timings = vec![TaskTiming::default(); n];
    let mut states: Vec<ResourceState> = graph
        .resources
        .iter()
        .map(|_| ResourceState {
            busy: false,
            cursor: 0,
            ready: alloc::collections::VecDeque::new(),
        })
        .collect();
    let mut queue: EventQueue<TaskEvent> = EventQueue::new();
    for (id, w) in waiting.iter().enumerate() {
        if *w == 0 {
            queue.schedule(Nanos::ZERO, TaskEvent::DepSatisfied(id));
            // Counted as satisfied by the event itself.
        }
    }
    // DepSatisfied decrements; seed tasks with zero deps get one synthetic increment.
    for (id, w) in waiting.iter_mut().enumerate() {
        if graph.tasks[id].deps.is_empty() {
            *w = 1;
        }
    }

    let mut finished = 0usize;
    let mut makespan = Nanos::ZERO;
    // With limited processors: how many run a task, and the tasks waiting for one (their
    // resources are taken, their cursors moved), first come first served.
    let mut on: Vec<OnProcessor> = Vec::new();
    let mut version = 0u64;
    let mut waiting_for_processor: alloc::collections::VecDeque<TaskId> =
        alloc::collections::VecDeque::new();
    let place = |t: TaskId, now: Nanos, on: &mut Vec<OnProcessor>, timings: &mut [TaskTiming]| {
        timings[t].start = now;
        on.push(OnProcessor {
            task: t,
            remaining_ns: graph.tasks[t].duration_ns as f64,
            since: now,
            rate: 1.0,
            version: 0,
        });
    };
    while let Some((now, event)) = queue.pop() {
        let resource = match event {
            TaskEvent::End(t, v) => {
                if let Some(p) = processors {
                    let Some(i) = on.iter().position(|x| x.task == t && x.version == v) else {
                        continue; // superseded by a later rate
                    };
                    on.remove(i);
                    if let Some(w) = waiting_for_processor.pop_front() {
                        place(w, now, &mut on, &mut timings);
                    }
                    rerate(&mut on, p.contention, now, &mut version, &mut queue);
                }
                timings[t].end = now;
                done[t] = true;
                finished += 1;
                makespan = makespan.max(now);
                for &(succ, delay) in &successors[t] {
                    queue.schedule(now + Nanos(delay), TaskEvent::DepSatisfied(succ));
                }
                let r = graph.tasks[t].resource;
                states[r].busy = false;
                r
            }
            TaskEvent::DepSatisfied(t) => {
                waiting[t] -= 1;
                if waiting[t] > 0 {
                    continue;
                }
                ready[t] = true;
                let r = graph.tasks[t].resource;
                if graph.resources[r].discipline == Discipline::Fifo {
                    states[r].ready.push_back(t);
                }
                r
            }
        };
        // Try to start the next task on the resource that changed.
        let state = &mut states[resource];
        if state.busy {
            continue;
        }
        let next = match &graph.resources[resource].discipline {
            Discipline::InOrder(program) => match program.get(state.cursor) {
                Some(&t) if ready[t] => {
                    state.cursor += 1;
                    Some(t)
                }
                _ => None,
            },
            Discipline::Fifo => state.ready.pop_front(),
        };
        if let Some(t) = next {
            state.busy = true;
            match processors {
                None => {
                    let end = now + Nanos(graph.tasks[t].duration_ns);
                    timings[t] = TaskTiming { start: now, end };
                    queue.schedule(end, TaskEvent::End(t, 0));
                }
                Some(p) if on.len() >= p.count as usize => waiting_for_processor.push_back(t),
                Some(p) => {
                    place(t, now, &mut on, &mut timings);
                    rerate(&mut on, p.contention, now, &mut version, &mut queue);
                }
            }
        }
    }

    if finished < n {
        let stuck_task = (0..n).find(|&t| !done[t]).unwrap_or(0);
        return Err(EngineError::Deadlock {
            finished,
            total: n,
            stuck_task,
            resource: graph.resources[graph.tasks[stuck_task].resource]
                .name
                .clone(),
        });
    }
    Ok(Simulation {
        timings,
        makespan,
        events: queue.processed(),
    })
}

/// Follows allocations and frees over time in several pools (one per GPU or stage) and reports
/// each pool's peak and its curve.
#[derive(Clone, Debug, Default)]
pub struct MemoryLedger {
    /// (time, pool, signed change in bytes), in the order recorded.
    changes: Vec<(Nanos, usize, i64)>,
    pools: usize,
}

/// One pool's memory over time.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryCurve {
    /// Highest bytes held at any instant.
    pub peak_bytes: u64,
    /// Bytes held at the end (equals the start when every allocation was freed).
    pub final_bytes: i64,
    /// (time, bytes held from that time on), one point per instant where the level changed.
    pub points: Vec<(Nanos, i64)>,
}

impl MemoryLedger {
    /// A ledger with `pools` pools, all starting at zero bytes.
    #[must_use]
    pub fn new(pools: usize) -> Self {
        MemoryLedger {
            changes: Vec::new(),
            pools,
        }
    }

    /// A ledger like [`MemoryLedger::new`] with room for `changes` allocations and frees.
    #[must_use]
    pub fn with_capacity(pools: usize, changes: usize) -> Self {
        MemoryLedger {
            changes: Vec::with_capacity(changes),
            pools,
        }
    }

    /// Records `bytes` allocated in `pool` at `time`.
    pub fn alloc(&mut self, time: Nanos, pool: usize, bytes: u64) {
        self.changes.push((time, pool, bytes as i64));
    }

    /// Records `bytes` freed in `pool` at `time`.
    pub fn free(&mut self, time: Nanos, pool: usize, bytes: u64) {
        self.changes.push((time, pool, -(bytes as i64)));
    }

    /// The curve of each pool. At one instant frees apply before allocations, so memory handed
    /// from a finishing op to a starting one is not double counted.
    #[must_use]
    pub fn curves(&self) -> Vec<MemoryCurve> {
        let mut sorted = self.changes.clone();
        // Unstable is exact: changes with equal keys share pool, instant and sign, so their
        // order changes neither the level after the instant nor the peak (a run of increases
        // peaks at its end, a run of decreases at its start).
        // One u128 key (pool, time, allocation after free) compares faster than the tuple.
        sorted.sort_unstable_by_key(|&(t, pool, delta)| {
            ((pool as u128) << 65) | (u128::from(t.0) << 1) | u128::from(delta > 0)
        });
        let mut curves: Vec<MemoryCurve> = (0..self.pools)
            .map(|_| MemoryCurve {
                peak_bytes: 0,
                final_bytes: 0,
                points: vec![(Nanos::ZERO, 0)],
            })
            .collect();
        for (time, pool, delta) in sorted {
            let Some(curve) = curves.get_mut(pool) else {
                continue;
            };
            curve.final_bytes += delta;
            curve.peak_bytes = curve.peak_bytes.max(curve.final_bytes.max(0) as u64);
            match curve.points.last_mut() {
                Some(last) if last.0 == time => last.1 = curve.final_bytes,
                _ => curve.points.push((time, curve.final_bytes)),
            }
        }
        curves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(name: &str, program: Vec<TaskId>) -> Resource {
        Resource {
            name: name.into(),
            discipline: Discipline::InOrder(program),
        }
    }

    #[test]
    fn queue_orders_by_time_priority_then_sequence() {
        let mut q = EventQueue::new();
        q.push(Nanos(5), 1, "c");
        q.push(Nanos(5), 0, "b");
        q.push(Nanos(1), 9, "a");
        q.push(Nanos(5), 1, "d");
        let order: Vec<_> = core::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
        assert_eq!(q.processed(), 4);
    }

    fn independent(durations: &[u64]) -> TaskGraph {
        TaskGraph {
            resources: (0..durations.len()).map(|i| stream("r", vec![i])).collect(),
            tasks: durations
                .iter()
                .map(|&d| Task {
                    resource: 0,
                    duration_ns: d,
                    deps: vec![],
                })
                .enumerate()
                .map(|(i, t)| Task { resource: i, ..t })
                .collect(),
        }
    }

    fn procs(count: u32, contention: f64) -> Processors {
        Processors { count, contention }
    }

    #[test]
    fn busy_processors_slow_each_other_by_the_contention() {
        // 10 and 30 ns on two processors slowing each other by 100 %: both at half speed until
        // the first ends at 20 (10 of work), then the second alone: 20 left, ends at 40.
        let sim = simulate_on_processors(&independent(&[10, 30]), procs(2, 1.0)).unwrap();
        assert_eq!(
            sim.timings[0],
            TaskTiming {
                start: Nanos(0),
                end: Nanos(20)
            }
        );
        assert_eq!(
            sim.timings[1],
            TaskTiming {
                start: Nanos(0),
                end: Nanos(40)
            }
        );
    }

    #[test]
    fn resources_take_turns_on_limited_processors() {
        // 10 and 30 ns on one processor: the first ready (resource 0) runs first, the second
        // waits for the processor, runs 10..40.
        let sim = simulate_on_processors(&independent(&[10, 30]), procs(1, 0.0)).unwrap();
        assert_eq!(
            sim.timings[0],
            TaskTiming {
                start: Nanos(0),
                end: Nanos(10)
            }
        );
        assert_eq!(
            sim.timings[1],
            TaskTiming {
                start: Nanos(10),
                end: Nanos(40)
            }
        );
        // Three tasks on two processors: the third waits for the first free one (at 5).
        let sim = simulate_on_processors(&independent(&[5, 10, 10]), procs(2, 0.0)).unwrap();
        assert_eq!(
            sim.timings[2],
            TaskTiming {
                start: Nanos(5),
                end: Nanos(15)
            }
        );
        assert_eq!(sim.makespan, Nanos(15));
        // A chain never needs a second processor.
        let sim = simulate_on_processors(&independent(&[7]), procs(1, 0.5)).unwrap();
        assert_eq!(sim.makespan, Nanos(7));
    }

    #[test]
    fn enough_processors_equal_the_unshared_engine() {
        let graph = TaskGraph {
            resources: vec![stream("a", vec![0, 2]), stream("b", vec![1])],
            tasks: vec![
                Task {
                    resource: 0,
                    duration_ns: 10,
                    deps: vec![],
                },
                Task {
                    resource: 1,
                    duration_ns: 7,
                    deps: vec![Dep {
                        task: 0,
                        delay_ns: 3,
                    }],
                },
                Task {
                    resource: 0,
                    duration_ns: 4,
                    deps: vec![Dep {
                        task: 1,
                        delay_ns: 0,
                    }],
                },
            ],
        };
        let plain = simulate(&graph).unwrap();
        for p in [2, 3, 64] {
            let shared = simulate_on_processors(&graph, procs(p, 0.0)).unwrap();
            assert_eq!(shared.timings, plain.timings, "{p} processors");
        }
        // On one processor the chain never overlaps, so it is unchanged too.
        assert_eq!(
            simulate_on_processors(&graph, procs(1, 0.3))
                .unwrap()
                .timings,
            plain.timings
        );
    }

    #[test]
    fn chain_makespan_is_the_sum_plus_delays() {
        let graph = TaskGraph {
            resources: vec![stream("a", vec![0]), stream("b", vec![1])],
            tasks: vec![
                Task {
                    resource: 0,
                    duration_ns: 10,
                    deps: vec![],
                },
                Task {
                    resource: 1,
                    duration_ns: 7,
                    deps: vec![Dep {
                        task: 0,
                        delay_ns: 3,
                    }],
                },
            ],
        };
        let sim = simulate(&graph).unwrap();
        assert_eq!(sim.makespan, Nanos(20));
        assert_eq!(
            sim.timings[1],
            TaskTiming {
                start: Nanos(13),
                end: Nanos(20)
            }
        );
    }

    #[test]
    fn in_order_stream_waits_for_its_head() {
        // Task 1 is ready at 0 but task 0 is first in the program and waits for task 2.
        let graph = TaskGraph {
            resources: vec![stream("s", vec![0, 1]), stream("t", vec![2])],
            tasks: vec![
                Task {
                    resource: 0,
                    duration_ns: 5,
                    deps: vec![Dep {
                        task: 2,
                        delay_ns: 0,
                    }],
                },
                Task {
                    resource: 0,
                    duration_ns: 5,
                    deps: vec![],
                },
                Task {
                    resource: 1,
                    duration_ns: 4,
                    deps: vec![],
                },
            ],
        };
        let sim = simulate(&graph).unwrap();
        assert_eq!(sim.timings[0].start, Nanos(4));
        assert_eq!(sim.timings[1].start, Nanos(9));
    }

    #[test]
    fn fifo_serves_in_ready_order() {
        let graph = TaskGraph {
            resources: vec![
                stream("s", vec![0, 1]),
                Resource {
                    name: "link".into(),
                    discipline: Discipline::Fifo,
                },
            ],
            tasks: vec![
                Task {
                    resource: 0,
                    duration_ns: 2,
                    deps: vec![],
                },
                Task {
                    resource: 0,
                    duration_ns: 2,
                    deps: vec![],
                },
                Task {
                    resource: 1,
                    duration_ns: 10,
                    deps: vec![Dep {
                        task: 1,
                        delay_ns: 0,
                    }],
                },
                Task {
                    resource: 1,
                    duration_ns: 10,
                    deps: vec![Dep {
                        task: 0,
                        delay_ns: 0,
                    }],
                },
            ],
        };
        let sim = simulate(&graph).unwrap();
        assert_eq!(sim.timings[3].start, Nanos(2));
        assert_eq!(sim.timings[2].start, Nanos(12));
    }

    #[test]
    fn contradictory_program_is_a_deadlock_not_a_hang() {
        let graph = TaskGraph {
            resources: vec![stream("s", vec![1, 0])],
            tasks: vec![
                Task {
                    resource: 0,
                    duration_ns: 1,
                    deps: vec![],
                },
                Task {
                    resource: 0,
                    duration_ns: 1,
                    deps: vec![Dep {
                        task: 0,
                        delay_ns: 0,
                    }],
                },
            ],
        };
        assert!(matches!(
            simulate(&graph),
            Err(EngineError::Deadlock { finished: 0, .. })
        ));
    }

    #[test]
    fn bad_references_are_errors() {
        let graph = TaskGraph {
            resources: vec![stream("s", vec![0])],
            tasks: vec![Task {
                resource: 0,
                duration_ns: 1,
                deps: vec![Dep {
                    task: 9,
                    delay_ns: 0,
                }],
            }],
        };
        assert!(matches!(
            simulate(&graph),
            Err(EngineError::BadReference(_))
        ));
    }

    #[test]
    fn ledger_frees_before_allocs_at_one_instant() {
        let mut ledger = MemoryLedger::new(1);
        ledger.alloc(Nanos(0), 0, 100);
        ledger.alloc(Nanos(10), 0, 50);
        ledger.free(Nanos(10), 0, 100);
        ledger.free(Nanos(20), 0, 50);
        let curve = &ledger.curves()[0];
        assert_eq!(curve.peak_bytes, 100);
        assert_eq!(curve.final_bytes, 0);
        assert_eq!(
            curve.points,
            vec![(Nanos(0), 100), (Nanos(10), 50), (Nanos(20), 0)]
        );
    }
}
