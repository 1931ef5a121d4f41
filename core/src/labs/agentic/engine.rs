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

use super::params::{attention_pairs, EngineMode, EngineSpec};
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
    /// Of that, time charged to prefill attention (the quadratic term), ns.
    pub attention_ns: u64,
}

/// One finished request's latencies, as a serving user measures them at the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    /// Submission to the end of its first decode step (first token out), ns; a request that
    /// generates nothing counts submission to finish.
    pub ttft_ns: u64,
    /// (finish − first token) / (generated − 1), ns per token; 0 for one generated token.
    pub tpot_ns: u64,
    /// Tokens it generated.
    pub output_tokens: u64,
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
    /// Submission of the current request, ns.
    submit_ns: u64,
    /// End of the current request's first decode step, ns.
    first_token_ns: Option<u64>,
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
    /// Latencies of every finished request, in finish order.
    pub requests: Vec<RequestRecord>,
    scheduled: Vec<(u32, u64, bool)>,
    sglang: SglangState,
}

/// SGLang's `SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION`: most future tokens reserved per request.
pub const SGLANG_CLIP_MAX_NEW_TOKENS: u64 = 4_096;
/// SGLang's initial `new_token_ratio` (0.7 × `schedule_conservativeness` 1.0).
pub const SGLANG_INIT_NEW_TOKEN_RATIO: f64 = 0.7;
/// SGLang's floor of `new_token_ratio`: the initial ratio × 0.14.
pub const SGLANG_MIN_NEW_TOKEN_RATIO: f64 = SGLANG_INIT_NEW_TOKEN_RATIO * 0.14;
/// Decode steps over which `new_token_ratio` decays from its initial value to its floor.
pub const SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS: f64 = 600.0;
/// SGLang's `retract_decode_steps`: decode steps of room a retraction frees for every request
/// left, and the steps the ratio re-estimate assumes after a retraction.
pub const SGLANG_RETRACT_DECODE_STEPS: u64 = 20;

/// The SGLang scheduler's own state.
#[derive(Clone, Copy, Debug)]
struct SglangState {
    /// Share of each running request's remaining `max_new_tokens` reserved at admission.
    new_token_ratio: f64,
    /// A waiting request did not fit the token budget: admission stops until a running
    /// request finishes or is retracted.
    batch_is_full: bool,
    /// The one request whose prompt is being prefilled in chunks.
    chunked: Option<u32>,
}

impl Default for SglangState {
    fn default() -> Self {
        SglangState {
            new_token_ratio: SGLANG_INIT_NEW_TOKEN_RATIO,
            batch_is_full: false,
            chunked: None,
        }
    }
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
    /// Sets the most requests that may run at once (a batch controller's limit, ≥ 1). Requests
    /// already running beyond it are not preempted; the next admissions wait until the batch
    /// is under it.
    pub fn set_max_running(&mut self, requests: u32) {
        self.max_running = requests.max(1) as usize;
    }

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
            requests: Vec::new(),
            scheduled: Vec::new(),
            sglang: SglangState::default(),
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

    /// Whether the agent's request is running (admitted, not finished, preempted or retracted).
    #[must_use]
    pub fn is_running(&self, agent: u32) -> bool {
        self.seqs[agent as usize].running
    }

    /// The agents whose requests wait to be scheduled, in queue order.
    #[must_use]
    pub fn waiting(&self) -> Vec<u32> {
        self.waiting.iter().copied().collect()
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
        s.submit_ns = now;
        s.first_token_ns = None;
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

    /// vLLM's preemption by recompute: the request's whole computed blocks stay cached, it goes
    /// to the front of the queue and re-prefills prompt + generated tokens.
    fn preempt(&mut self, agent: u32, now: u64) {
        self.release(agent, now);
        self.requeue(agent, now, true);
    }

    /// A released request waits again to re-prefill its prompt and what it generated.
    fn requeue(&mut self, agent: u32, now: u64, front: bool) {
        let s = &mut self.seqs[agent as usize];
        s.prompt = s.base_prompt + s.generated;
        s.computed = 0;
        self.counters.preemptions += 1;
        self.running.retain(|&a| a != agent);
        if front {
            self.waiting.push_front(agent);
        } else {
            self.waiting.push_back(agent);
        }
        self.set_phase(agent, Phase::Preempted, now);
    }

    /// Runs one step starting at `now` under the engine's scheduler; `None` when nothing could
    /// be scheduled.
    pub fn step(&mut self, now: u64) -> Option<StepOutcome> {
        match self.spec.mode {
            EngineMode::VllmV1 => self.step_vllm(now),
            EngineMode::Sglang => self.step_sglang(now),
        }
    }

    /// Admits waiting request `a` with `hit_blocks` of its cached blocks as its prefix and `n`
    /// tokens to prefill now: locks the hit, allocates the chunk's blocks, counts the lookup.
    fn admit(&mut self, a: u32, hit_blocks: u64, n: u64, now: u64) {
        let bs = self.block_tokens;
        let s = &self.seqs[a as usize];
        let hit = hit_blocks * bs;
        let need = (hit + n).div_ceil(bs) - hit_blocks;
        let excess = s.cached_blocks - hit_blocks;
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
    }

    /// The prefix-cache hit of waiting request `a`: whole cached blocks, leaving at least one
    /// prompt token to compute.
    fn hit_blocks(&self, a: u32) -> u64 {
        let s = &self.seqs[a as usize];
        s.cached_blocks
            .min(s.prompt.saturating_sub(1) / self.block_tokens)
    }

    /// vLLM V1: running requests first (decodes and prefill chunks share one token budget),
    /// preemption of the newest running request when a block is missing, then waiting requests
    /// first come first served.
    fn step_vllm(&mut self, now: u64) -> Option<StepOutcome> {
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
                let hit_blocks = self.hit_blocks(a);
                let s = &self.seqs[a as usize];
                let hit = hit_blocks * bs;
                let n = (s.prompt - hit).min(budget);
                let need = (hit + n).div_ceil(bs) - hit_blocks;
                // Its own cached blocks cannot serve its allocation: they are about to be
                // referenced (the excess beyond the hit is freed first).
                if self.available_for(a) < need {
                    break;
                }
                self.waiting.pop_front();
                self.admit(a, hit_blocks, n, now);
                scheduled.push((a, n, true));
                budget -= n;
            }
        }
        self.execute(now, scheduled)
    }

    /// Future tokens SGLang reserves for request `a` (of `max_new_tokens`, clipped; never more
    /// than the pool leaves after its prompt, as SGLang clips `max_new_tokens` to the pool).
    fn sglang_future_tokens(&self, a: u32) -> u64 {
        let s = &self.seqs[a as usize];
        let pool = self.total_blocks * self.block_tokens;
        u64::from(self.spec.max_new_tokens)
            .saturating_sub(s.generated)
            .min(SGLANG_CLIP_MAX_NEW_TOKENS)
            .min(pool.saturating_sub(s.prompt + 2 * self.block_tokens))
    }

    /// SGLang: a step is either a prefill (extend) batch or a decode batch, never both
    /// (`enable_mixed_chunk` off). A prefill batch forms first if it can: the chunked request,
    /// then waiting requests first come first served while each one's new tokens, its reserved
    /// future tokens and a page fit the pool (free + evictable) less what the batch already took
    /// and less the future tokens reserved for the running requests (× `new_token_ratio`); the
    /// first that does not fit marks the batch full. Otherwise every running request decodes one
    /// token; if the pool cannot hold their new tokens, requests are *retracted*, fewest
    /// generated tokens first (ties: longest prompt): at least one, then until the pool holds
    /// 20 tokens for each request left (SGLang 0.4's `retract_decode`).
    #[allow(clippy::too_many_lines)] // one engine step as SGLang's scheduler takes it, in its order
    fn step_sglang(&mut self, now: u64) -> Option<StepOutcome> {
        let bs = self.block_tokens;
        if self.running.is_empty() && self.sglang.chunked.is_none() {
            // The scheduler idles: the ratio starts over.
            self.sglang.new_token_ratio = SGLANG_INIT_NEW_TOKEN_RATIO;
            self.sglang.batch_is_full = false;
        }
        let mut scheduled = core::mem::take(&mut self.scheduled);
        scheduled.clear();
        let mut rem_chunk = self.max_batched_tokens;
        let ratio = self.sglang.new_token_ratio;
        // The pool as the scheduling pass starts (free + evictable); what this batch takes is
        // charged to `offset`, as SGLang's PrefillAdder does.
        let pool_start = ((self.free_blocks + self.cached_total) * bs) as f64;
        let mut offset: f64 = self
            .running
            .iter()
            .filter(|&&a| Some(a) != self.sglang.chunked)
            .map(|&a| self.sglang_future_tokens(a) as f64 * ratio)
            .sum();
        if let Some(a) = self.sglang.chunked {
            let s = &self.seqs[a as usize];
            let n = (s.prompt - s.computed).min(rem_chunk);
            let need = (s.computed + n).div_ceil(bs).saturating_sub(s.held_blocks);
            if self.allocate(need) {
                self.seqs[a as usize].held_blocks += need;
                scheduled.push((a, n, true));
                rem_chunk -= n;
                offset += (n.div_ceil(bs) * bs + bs) as f64;
                let s = &self.seqs[a as usize];
                if s.computed + n == s.prompt {
                    self.sglang.chunked = None;
                    offset += self.sglang_future_tokens(a) as f64;
                }
            }
        }
        while !self.sglang.batch_is_full
            && rem_chunk > 0
            && self.running.len() < self.max_running
            && self.sglang.chunked.is_none()
        {
            let Some(&a) = self.waiting.front() else {
                break;
            };
            let hit_blocks = self.hit_blocks(a);
            let s = &self.seqs[a as usize];
            let hit = hit_blocks * bs;
            let extend = s.prompt - hit;
            let future = self.sglang_future_tokens(a);
            // Its own prefix hit is locked while it is checked: not evictable for it.
            let fits = ((extend + future + bs) as f64) < pool_start - hit as f64 - offset;
            // Progress guard: with nothing running, the head request is admitted if its prompt
            // fits at all (the budget's future-token reservation could otherwise stall it).
            let alone = self.running.is_empty()
                && scheduled.is_empty()
                && extend <= self.available_for(a) * bs;
            if !(fits || alone) {
                self.sglang.batch_is_full = true;
                break;
            }
            let n = if extend > rem_chunk {
                rem_chunk / bs * bs
            } else {
                extend
            };
            if n == 0 {
                break;
            }
            let need = (hit + n).div_ceil(bs) - hit_blocks;
            if self.available_for(a) < need {
                self.sglang.batch_is_full = true;
                break;
            }
            self.waiting.pop_front();
            self.admit(a, hit_blocks, n, now);
            scheduled.push((a, n, true));
            rem_chunk -= n;
            offset += (n.div_ceil(bs) * bs + bs) as f64;
            if n < extend {
                self.sglang.chunked = Some(a);
            } else {
                offset += future as f64;
            }
        }
        if !scheduled.is_empty() {
            return self.execute(now, scheduled);
        }
        // A decode batch of every running request but the one mid-prefill.
        let chunked = self.sglang.chunked;
        let mut decoding: Vec<u32> = self
            .running
            .iter()
            .copied()
            .filter(|&a| Some(a) != chunked)
            .collect();
        if decoding.is_empty() {
            self.scheduled = scheduled;
            return None;
        }
        let need_of = |e: &Engine, list: &[u32]| -> u64 {
            list.iter()
                .filter(|&&a| {
                    let s = &e.seqs[a as usize];
                    (s.computed + 1).div_ceil(bs) > s.held_blocks
                })
                .count() as u64
        };
        let mut retracted = false;
        if self.free_blocks + self.cached_total < need_of(self, &decoding) {
            // Retraction order: sorted by (generated, −prompt) descending, popped from the end.
            decoding.sort_by(|&x, &y| {
                let (sx, sy) = (&self.seqs[x as usize], &self.seqs[y as usize]);
                sy.generated
                    .cmp(&sx.generated)
                    .then(sx.base_prompt.cmp(&sy.base_prompt))
                    .then(y.cmp(&x))
            });
            // SGLang 0.4's `retract_decode`: at least one, then until the pool (free +
            // evictable) holds `retract_decode_steps` (20) tokens for every request left; the
            // last request stays.
            let room = |e: &Engine, n: usize| {
                (e.free_blocks + e.cached_total) * bs >= SGLANG_RETRACT_DECODE_STEPS * n as u64
            };
            while decoding.len() > 1 && (!retracted || !room(self, decoding.len())) {
                let Some(victim) = decoding.pop() else {
                    break;
                };
                self.retract(victim, now);
                retracted = true;
            }
            // SGLang would abort the last one if even it cannot grow; the simulator cannot
            // abort, so it retracts that one too (the chunked prefill then proceeds).
            if self.free_blocks + self.cached_total < need_of(self, &decoding) {
                if let Some(victim) = decoding.pop() {
                    self.retract(victim, now);
                    retracted = true;
                }
            }
            let (out, max_new): (u64, u64) = decoding.iter().fold((0, 0), |(o, m), &a| {
                (
                    o + self.seqs[a as usize].generated,
                    m + u64::from(self.spec.max_new_tokens),
                )
            });
            let n = decoding.len() as u64;
            self.sglang.new_token_ratio =
                ((out + SGLANG_RETRACT_DECODE_STEPS * n) as f64 / (max_new + 1) as f64).min(1.0);
            self.sglang.batch_is_full = false;
            // Keep admission order for the batch.
            decoding = self
                .running
                .iter()
                .copied()
                .filter(|a| decoding.contains(a))
                .collect();
        }
        if !retracted {
            let decay = (SGLANG_INIT_NEW_TOKEN_RATIO - SGLANG_MIN_NEW_TOKEN_RATIO)
                / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS;
            self.sglang.new_token_ratio =
                (self.sglang.new_token_ratio - decay).max(SGLANG_MIN_NEW_TOKEN_RATIO);
        }
        for &a in &decoding {
            let s = &self.seqs[a as usize];
            let need = (s.computed + 1).div_ceil(bs).saturating_sub(s.held_blocks);
            let ok = self.allocate(need);
            debug_assert!(ok, "the pool was checked for every decoding request");
            if !ok {
                continue;
            }
            self.seqs[a as usize].held_blocks += need;
            scheduled.push((a, 1, false));
        }
        if scheduled.is_empty() && retracted {
            // Every decoding request was retracted: what they freed serves the next batch.
            return self.step_sglang(now);
        }
        self.execute(now, scheduled)
    }

    /// SGLang's retraction of a decoding request: its prompt stays in the radix cache,
    /// unreferenced (the prompt was inserted when its prefill finished); its generated tokens'
    /// KV is freed; it goes to the back of the queue and re-prefills prompt + generated tokens.
    fn retract(&mut self, agent: u32, now: u64) {
        {
            let s = &mut self.seqs[agent as usize];
            s.computed = s.computed.min(s.prompt);
        }
        self.release(agent, now);
        self.requeue(agent, now, false);
    }

    /// Blocks an allocation for waiting request `a` may use: free + evictable, less `a`'s own
    /// cached blocks that its prefix hit will reference.
    fn available_for(&self, a: u32) -> u64 {
        let s = &self.seqs[a as usize];
        let hit_blocks = self.hit_blocks(a);
        self.free_blocks + self.cached_total - s.cached_blocks + (s.cached_blocks - hit_blocks)
    }

    /// Runs the scheduled batch from `now`: its time from the step-time fit, then each request's
    /// progress, finishes and their latencies.
    fn execute(&mut self, now: u64, scheduled: Vec<(u32, u64, bool)>) -> Option<StepOutcome> {
        if scheduled.is_empty() {
            self.scheduled = scheduled;
            return None;
        }
        let mut prefill_tokens = 0u64;
        let mut decode_seqs = 0u64;
        let mut context = 0u64;
        let mut pairs = 0.0_f64;
        for &(a, n, prefill) in &scheduled {
            let s = &self.seqs[a as usize];
            context += s.computed + n;
            if prefill {
                prefill_tokens += n;
                pairs += attention_pairs(s.computed, n);
            } else {
                decode_seqs += 1;
            }
        }
        let fit = &self.spec.step_time;
        let attention = fit.attention_ns(pairs);
        let dur = nanos_from_f64(fit.linear_ns(prefill_tokens, decode_seqs, context) + attention)
            .0
            .max(1);
        let end = now + dur;
        self.counters.steps += 1;
        self.counters.busy_ns += dur;
        self.counters.attention_ns += nanos_from_f64(attention).0.min(dur);
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
                s.first_token_ns.get_or_insert(end);
                self.counters.decode_tokens += 1;
            }
            let s = &self.seqs[a as usize];
            if s.computed >= s.prompt && s.generated >= s.output {
                finished.push(a);
                let first = s.first_token_ns.unwrap_or(end);
                self.requests.push(RequestRecord {
                    ttft_ns: first - s.submit_ns,
                    tpot_ns: if s.generated > 1 {
                        (end - first) / (s.generated - 1)
                    } else {
                        0
                    },
                    output_tokens: s.generated,
                });
            }
        }
        for &a in &finished {
            self.running.retain(|&x| x != a);
            self.release(a, end);
            self.set_phase(a, Phase::Idle, end);
        }
        if !finished.is_empty() {
            self.sglang.batch_is_full = false;
        }
        self.scheduled = scheduled;
        Some(StepOutcome {
            end_ns: end,
            finished,
        })
    }
}
