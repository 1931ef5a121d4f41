//! The serving engine below the admission controller: paged KV blocks, a prefix cache with LRU
//! eviction, continuous batching with chunked prefill, and preemption by recompute, after
//! vLLM V1's scheduler (Kwon et al., SOSP'23; vLLM `v1/core/sched/scheduler.py`).
//!
//! Every agent owns one sequence (its history). Its KV lives in blocks of `block_tokens`
//! tokens. While a request of the agent runs, its blocks are *referenced*; when it finishes or is
//! preempted, its full blocks stay in the prefix cache, unreferenced and evictable, and its last
//! partial block is freed. Each agent's cached blocks are a prefix of its sequence, all last used
//! at one instant; eviction takes the least recently used agent's blocks from the tail (vLLM
//! frees a request's blocks tail first into its LRU free queue), so a prefix-cache lookup finds
//! exactly the agent's remaining cached blocks. KV usage is referenced blocks / all blocks
//! (vLLM's `kv_cache_usage_perc`); hits and queries are counted in tokens at each scheduling of a
//! waiting request (vLLM's prefix-cache stats).
//!
//! One step: running requests first, in admission order (decodes take 1 token, prefills a chunk
//! of the remaining budget); a request that needs a block when none is free or evictable
//! preempts the most recently admitted running request (itself if it is the last), which drops
//! its KV reference and will recompute its prompt and generated tokens later. Then, if nothing
//! was preempted, waiting requests are admitted first come first served while the token budget,
//! the request limit and the blocks allow. Step time = a + b·prefill tokens + c·decoding
//! sequences + d·context tokens read.

use alloc::collections::{BTreeSet, VecDeque};
use alloc::vec::Vec;

use super::params::EngineSpec;
use crate::units::nanos_from_f64;

/// Cumulative counters of an engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Prompt tokens computed for the first time.
    pub prefill_new_tokens: u64,
    /// Tokens computed again because their KV had been evicted or dropped by a preemption
    /// (whole blocks; see `partial_block_tokens` for the rest).
    pub recompute_tokens: u64,
    /// Tokens of a sequence's last, partial block computed again: a prefix cache keeps whole
    /// blocks only (vLLM), so each turn re-prefills up to `block_tokens − 1` history tokens.
    pub partial_block_tokens: u64,
    /// Tokens generated (one per decode step of a request).
    pub decode_tokens: u64,
    /// Prompt tokens looked up in the prefix cache when a waiting request was scheduled.
    pub prefix_query_tokens: u64,
    /// Of those, tokens found cached.
    pub prefix_hit_tokens: u64,
    /// Reusable history tokens of scheduled requests: the leading prompt tokens computed before
    /// (whole blocks, at most prompt − 1), i.e. what a perfect cache would have served.
    pub history_query_tokens: u64,
    /// Of those, tokens found cached (= `prefix_hit_tokens`; first turns have none to reuse).
    pub history_hit_tokens: u64,
    /// Cached blocks evicted.
    pub evicted_blocks: u64,
    /// Requests preempted by recompute.
    pub preemptions: u64,
    /// Engine steps run.
    pub steps: u64,
    /// Time the engine spent in steps, ns.
    pub busy_ns: u64,
}

/// What a tracked agent's request was doing (for the per-agent timeline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not in the engine.
    Idle,
    /// Waiting to be scheduled.
    Queued,
    /// Waiting to be rescheduled after a preemption.
    Preempted,
    /// Computing its prompt.
    Prefill,
    /// Generating.
    Decode,
}

/// A finished phase of a tracked agent: `[start_ns, end_ns)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseSpan {
    /// The agent.
    pub agent: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// What it was doing.
    pub phase: Phase,
    /// For a prefill: some of its tokens were recomputed.
    pub recompute: bool,
}

#[derive(Clone, Debug, Default)]
struct Seq {
    /// Idle: cached (evictable) blocks of its sequence prefix.
    cached_blocks: u64,
    /// Key in the LRU set while cached blocks > 0 and not running.
    lru_ns: Option<u64>,
    /// Running: referenced blocks.
    held_blocks: u64,
    /// Running: tokens whose KV is in the held blocks.
    computed: u64,
    /// Leading positions of the sequence ever computed (recompute accounting).
    known: u64,
    /// Start of the partial last block dropped at the last release (granularity, not eviction).
    tail_from: u64,
    /// Original prompt of the current request.
    base_prompt: u64,
    /// Tokens to prefill (base prompt + generated tokens after a preemption).
    prompt: u64,
    output: u64,
    generated: u64,
    running: bool,
    /// Blocks were evicted while idle (cleared by the caller).
    evicted: bool,
    phase: Option<Phase>,
    phase_start_ns: u64,
    phase_recompute: bool,
}

/// The engine.
#[derive(Clone, Debug)]
pub struct Engine {
    block_tokens: u64,
    total_blocks: u64,
    free_blocks: u64,
    cached_total: u64,
    held_total: u64,
    lru: BTreeSet<(u64, u32)>,
    seqs: Vec<Seq>,
    waiting: VecDeque<u32>,
    running: Vec<u32>,
    max_batched_tokens: u64,
    max_running: usize,
    spec: EngineSpec,
    tracked: u32,
    /// Cumulative counters.
    pub counters: Counters,
    /// Finished phases of tracked agents, in end order.
    pub spans: Vec<PhaseSpan>,
    scheduled: Vec<(u32, u64, bool)>,
}

/// What one step did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepOutcome {
    /// End of the step, ns.
    pub end_ns: u64,
    /// Agents whose request finished in this step.
    pub finished: Vec<u32>,
}

impl Engine {
    /// An empty engine for `agents` agents with `spec`'s capacity; phases of agents with id
    /// below `tracked` are recorded in [`Engine::spans`].
    #[must_use]
    pub fn new(spec: &EngineSpec, agents: usize, tracked: u32) -> Engine {
        let total = spec.capacity_blocks();
        Engine {
            block_tokens: u64::from(spec.block_tokens.max(1)),
            total_blocks: total,
            free_blocks: total,
            cached_total: 0,
            held_total: 0,
            lru: BTreeSet::new(),
            seqs: alloc::vec![Seq::default(); agents],
            waiting: VecDeque::new(),
            running: Vec::new(),
            max_batched_tokens: u64::from(spec.max_batched_tokens.max(1)),
            max_running: spec.max_running_requests.max(1) as usize,
            spec: spec.clone(),
            tracked,
            counters: Counters::default(),
            spans: Vec::new(),
            scheduled: Vec::new(),
        }
    }

    /// KV blocks in the engine.
    #[must_use]
    pub fn total_blocks(&self) -> u64 {
        self.total_blocks
    }

    /// Tokens per block.
    #[must_use]
    pub fn block_tokens(&self) -> u64 {
        self.block_tokens
    }

    /// Referenced blocks / all blocks (vLLM's KV-cache usage).
    #[must_use]
    pub fn usage(&self) -> f64 {
        if self.total_blocks == 0 {
            0.0
        } else {
            self.held_total as f64 / self.total_blocks as f64
        }
    }

    /// Blocks cached but unreferenced (evictable).
    #[must_use]
    pub fn cached_blocks(&self) -> u64 {
        self.cached_total
    }

    /// Requests waiting or running.
    #[must_use]
    pub fn has_work(&self) -> bool {
        !self.waiting.is_empty() || !self.running.is_empty()
    }

    /// Running requests.
    #[must_use]
    pub fn running_requests(&self) -> usize {
        self.running.len()
    }

    /// True (and cleared) if blocks of this agent were evicted since the last call.
    pub fn take_evicted(&mut self, agent: u32) -> bool {
        core::mem::take(&mut self.seqs[agent as usize].evicted)
    }

    /// Checks the block ledger: free + cached + held = total.
    #[must_use]
    pub fn ledger_balances(&self) -> bool {
        let cached: u64 = self.seqs.iter().map(|s| s.cached_blocks).sum();
        let held: u64 = self.seqs.iter().map(|s| s.held_blocks).sum();
        cached == self.cached_total
            && held == self.held_total
            && self.free_blocks + self.cached_total + self.held_total == self.total_blocks
    }

    fn set_phase(&mut self, agent: u32, phase: Phase, now: u64) {
        if agent >= self.tracked {
            return;
        }
        let s = &mut self.seqs[agent as usize];
        if let Some(old) = s.phase {
            if old != Phase::Idle && now >= s.phase_start_ns {
                self.spans.push(PhaseSpan {
                    agent,
                    start_ns: s.phase_start_ns,
                    end_ns: now,
                    phase: old,
                    recompute: s.phase_recompute,
                });
            }
        }
        s.phase = Some(phase);
        s.phase_start_ns = now;
        s.phase_recompute = false;
    }

    fn lru_remove(&mut self, agent: u32) {
        if let Some(t) = self.seqs[agent as usize].lru_ns.take() {
            self.lru.remove(&(t, agent));
        }
    }

    fn lru_insert(&mut self, agent: u32, now: u64) {
        self.lru_remove(agent);
        if self.seqs[agent as usize].cached_blocks > 0 {
            self.seqs[agent as usize].lru_ns = Some(now);
            self.lru.insert((now, agent));
        }
    }

    /// Frees `n` of the agent's cached blocks from the tail (not counted as eviction).
    fn drop_cached(&mut self, agent: u32, n: u64) {
        let s = &mut self.seqs[agent as usize];
        let n = n.min(s.cached_blocks);
        s.cached_blocks -= n;
        self.cached_total -= n;
        self.free_blocks += n;
        if s.cached_blocks == 0 {
            self.lru_remove(agent);
        }
    }

    /// Takes `n` blocks, evicting least recently used cached blocks as needed.
    fn allocate(&mut self, n: u64) -> bool {
        if self.free_blocks + self.cached_total < n {
            return false;
        }
        while self.free_blocks < n {
            let Some(&(t, victim)) = self.lru.iter().next() else {
                return false;
            };
            let s = &mut self.seqs[victim as usize];
            let k = (n - self.free_blocks).min(s.cached_blocks);
            s.cached_blocks -= k;
            s.evicted = true;
            self.cached_total -= k;
            self.free_blocks += k;
            self.counters.evicted_blocks += k;
            if s.cached_blocks == 0 {
                self.lru.remove(&(t, victim));
                s.lru_ns = None;
            }
        }
        self.free_blocks -= n;
        self.held_total += n;
        true
    }

    /// Submits an agent's next request at `now`: `prompt` tokens of which the first
    /// `shared_prefix` equal its previous sequence, then `output` generated tokens.
    pub fn submit(&mut self, agent: u32, prompt: u64, shared_prefix: u64, output: u64, now: u64) {
        let bs = self.block_tokens;
        let shared = shared_prefix.min(prompt);
        let s = &mut self.seqs[agent as usize];
        s.known = s.known.min(shared);
        let keep = shared / bs;
        let excess = s.cached_blocks.saturating_sub(keep);
        s.base_prompt = prompt;
        s.prompt = prompt;
        s.output = output;
        s.generated = 0;
        s.computed = 0;
        if excess > 0 {
            self.drop_cached(agent, excess);
        }
        self.waiting.push_back(agent);
        self.set_phase(agent, Phase::Queued, now);
    }

    /// Drops a request's KV reference: full computed blocks stay cached (evictable), the rest is
    /// freed.
    fn release(&mut self, agent: u32, now: u64) {
        let bs = self.block_tokens;
        let s = &mut self.seqs[agent as usize];
        let keep = (s.computed / bs).min(s.held_blocks);
        let freed = s.held_blocks - keep;
        self.held_total -= s.held_blocks;
        s.held_blocks = 0;
        s.cached_blocks = keep;
        s.tail_from = keep * bs;
        s.running = false;
        self.cached_total += keep;
        self.free_blocks += freed;
        self.lru_insert(agent, now);
    }

    fn preempt(&mut self, agent: u32, now: u64) {
        self.release(agent, now);
        let s = &mut self.seqs[agent as usize];
        s.prompt = s.base_prompt + s.generated;
        s.computed = 0;
        self.counters.preemptions += 1;
        self.running.retain(|&a| a != agent);
        self.waiting.push_front(agent);
        self.set_phase(agent, Phase::Preempted, now);
    }

    /// Runs one step starting at `now`; `None` when nothing could be scheduled.
    pub fn step(&mut self, now: u64) -> Option<StepOutcome> {
        let bs = self.block_tokens;
        let mut budget = self.max_batched_tokens;
        let mut scheduled = core::mem::take(&mut self.scheduled);
        scheduled.clear();
        let mut preempted = false;
        let mut i = 0;
        while i < self.running.len() {
            if budget == 0 {
                break;
            }
            let a = self.running[i];
            let s = &self.seqs[a as usize];
            let (n, prefill) = if s.computed < s.prompt {
                ((s.prompt - s.computed).min(budget), true)
            } else {
                (1, false)
            };
            let need = (s.computed + n).div_ceil(bs).saturating_sub(s.held_blocks);
            let mut self_preempted = false;
            while !self.allocate(need) {
                let Some(&victim) = self.running.last() else {
                    break;
                };
                self.preempt(victim, now);
                preempted = true;
                if victim == a {
                    self_preempted = true;
                    break;
                }
            }
            if self_preempted {
                break;
            }
            self.seqs[a as usize].held_blocks += need;
            scheduled.push((a, n, prefill));
            budget -= n;
            i += 1;
        }
        if !preempted {
            while budget > 0 && self.running.len() < self.max_running {
                let Some(&a) = self.waiting.front() else {
                    break;
                };
                let s = &self.seqs[a as usize];
                let hit_blocks = s.cached_blocks.min(s.prompt.saturating_sub(1) / bs);
                let hit = hit_blocks * bs;
                let n = (s.prompt - hit).min(budget);
                let need = (hit + n).div_ceil(bs) - hit_blocks;
                let excess = s.cached_blocks - hit_blocks;
                let own_cached = s.cached_blocks;
                // Its own cached blocks cannot serve its allocation: they are about to be
                // referenced.
                if self.free_blocks + self.cached_total - own_cached + excess < need {
                    break;
                }
                self.waiting.pop_front();
                self.drop_cached(a, excess);
                self.lru_remove(a);
                self.cached_total -= hit_blocks;
                self.held_total += hit_blocks;
                {
                    let s = &mut self.seqs[a as usize];
                    s.cached_blocks = 0;
                    s.held_blocks = hit_blocks;
                    s.computed = hit;
                    s.running = true;
                }
                let ok = self.allocate(need);
                debug_assert!(ok, "capacity was checked");
                self.seqs[a as usize].held_blocks += need;
                self.counters.prefix_query_tokens += self.seqs[a as usize].prompt;
                self.counters.prefix_hit_tokens += hit;
                let s = &self.seqs[a as usize];
                let reusable = s.known.min(s.prompt.saturating_sub(1)) / bs * bs;
                self.counters.history_query_tokens += reusable;
                self.counters.history_hit_tokens += hit.min(reusable);
                self.running.push(a);
                self.set_phase(a, Phase::Prefill, now);
                scheduled.push((a, n, true));
                budget -= n;
            }
        }
        if scheduled.is_empty() {
            self.scheduled = scheduled;
            return None;
        }
        let mut prefill_tokens = 0u64;
        let mut decode_seqs = 0u64;
        let mut context = 0u64;
        for &(a, n, prefill) in &scheduled {
            let s = &self.seqs[a as usize];
            context += s.computed + n;
            if prefill {
                prefill_tokens += n;
            } else {
                decode_seqs += 1;
            }
        }
        let dur = nanos_from_f64(
            self.spec
                .step_time
                .step_ns(prefill_tokens, decode_seqs, context),
        )
        .0
        .max(1);
        let end = now + dur;
        self.counters.steps += 1;
        self.counters.busy_ns += dur;
        let mut finished = Vec::new();
        for &(a, n, prefill) in &scheduled {
            let s = &mut self.seqs[a as usize];
            if prefill {
                let upto = s.computed + n;
                let redo = upto.min(s.known).saturating_sub(s.computed);
                let tail = upto
                    .min(s.known)
                    .saturating_sub(s.computed.max(s.tail_from));
                self.counters.recompute_tokens += redo - tail;
                self.counters.partial_block_tokens += tail;
                self.counters.prefill_new_tokens += n - redo;
                s.computed += n;
                s.known = s.known.max(s.computed);
                if redo > 0 {
                    s.phase_recompute = true;
                }
                if s.computed == s.prompt && s.generated < s.output {
                    self.set_phase(a, Phase::Decode, end);
                }
            } else {
                s.generated += 1;
                s.computed += 1;
                s.known = s.known.max(s.computed);
                self.counters.decode_tokens += 1;
            }
            let s = &self.seqs[a as usize];
            if s.computed >= s.prompt && s.generated >= s.output {
                finished.push(a);
            }
        }
        for &a in &finished {
            self.running.retain(|&x| x != a);
            self.release(a, end);
            self.set_phase(a, Phase::Idle, end);
        }
        self.scheduled = scheduled;
        Some(StepOutcome {
            end_ns: end,
            finished,
        })
    }
}
