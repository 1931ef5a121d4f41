//! ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", arXiv 2401.10241 §6), planned as the
//! authors' code plans it: `PipelineGraph.try_v_schedule` and `create_schedule` in sail-sg
//! zero-bubble-pipeline-parallelism `megatron/core/pipeline_parallel/zerobubble/scheduler/zbv.py`
//! (@39f2c18), called by `runtime.py` 1550–1558 with the stages' median chunk times and
//! `max_mem = None` (so 2p forwards' worth, 1F1B's activation memory).
//!
//! Device d holds two half-size chunks: chunk 0 is stage d of the 2p-stage path, chunk 1 stage
//! 2p − 1 − d, so the forward runs down the devices and back up (a V) and the backward the
//! other way. The planner places ops greedily on simulated times: warm-up forwards of both
//! chunks, then per round one B per device (W passes fill gaps while the awaited input is still
//! on its way, or when the wait would exceed the worst stage's bubble so far), then one F per
//! device under the memory cap. It re-plans with the bubbles found as the allowance until the
//! worst stage's bubble stops shrinking, for each of the four fill modes, and keeps the best.
//!
//! Inside the planner, as in the source, a backward's chunk index counts in backward order
//! (planner chunk 0 is model chunk 1); [`orders`] maps back.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::{Op, OpKind};
use crate::labs::pipeline::params::PipelineParams;
use crate::scenario::ScenarioError;
use crate::units::nanos_from_f64;

/// Activation units of one chunk's forward (the source's `f_mem`, any positive scale).
const F_MEM: i64 = 1_000_000;

/// Most re-plans per fill mode (the source recurses while the bubble shrinks; each step shrinks
/// it by at least 1 ns, so this cap is never reached on sane inputs).
const MAX_REPLANS: usize = 64;

/// Op category, as the source's `cat`: 0 = F, 1 = B, 2 = W.
type Cat = usize;

struct Costs {
    /// F, B, W of one chunk, ns.
    fbw: [i64; 3],
    /// P2P, ns.
    comm: i64,
    /// Memory change of F, B, W in activation units.
    mem: [i64; 3],
    max_mem: i64,
}

/// One try of the planner: the source's `try_v_schedule` state.
struct Plan<'a> {
    c: &'a Costs,
    n: usize,
    m: usize,
    count: Vec<[usize; 6]>,
    end: Vec<i64>,
    cur: Vec<i64>,
    mem: Vec<i64>,
    bubble: Vec<i64>,
    pending_w: Vec<VecDeque<usize>>,
    schedule: Vec<Vec<(Cat, usize, usize)>>,
    /// `approved_bubble` of the call, and its maximum (−1 when absent).
    approved: Vec<i64>,
    max_approved: i64,
}

struct Outcome {
    schedule: Vec<Vec<(Cat, usize, usize)>>,
    bubble: Vec<i64>,
    max_bubble: i64,
}

impl Plan<'_> {
    fn id(&self, cat: Cat, chunk: usize, stage: usize, micro: usize) -> usize {
        ((cat * 2 + chunk) * self.n + stage) * self.m + micro
    }

    /// The end time of node `id`, or −1; `None` reads the last node, as Python's `end_time[-1]`
    /// does where the source indexes with `fa_id = -1`.
    fn end_of(&self, id: Option<usize>) -> i64 {
        match id {
            Some(i) => self.end[i],
            None => self.end[self.end.len() - 1],
        }
    }

    fn max_stage_bubble(&self, stage: Option<usize>) -> i64 {
        let mut worst = self.bubble.iter().copied().max().unwrap_or(0).max(0);
        if let Some(s) = stage {
            worst = worst.max(self.max_approved - self.approved[s]);
        }
        worst
    }

    fn fail(&self, what: &str) -> ScenarioError {
        ScenarioError::Run(format!(
            "ZB-V planner (zbv.py) cannot place {what} with p={} and m={}",
            self.n, self.m
        ))
    }

    fn put(&mut self, cat: Cat, chunk: usize, stage: usize) -> Result<(), ScenarioError> {
        let cost = self.c.fbw[cat];
        let no_bubble = self.cur[stage] + cost;
        let mut t = no_bubble;
        let cnt = self.count[stage][cat * 2 + chunk];
        if cnt >= self.m {
            return Err(self.fail("more ops than micro-batches"));
        }
        if self.mem[stage] + self.c.mem[cat] > self.c.max_mem {
            return Err(self.fail("an op within the memory cap"));
        }
        if cat < 2 {
            let upstream = match chunk {
                1 if stage + 1 < self.n => Some(stage + 1),
                0 if stage > 0 => Some(stage - 1),
                _ => None,
            };
            if let Some(u) = upstream {
                let e = self.end[self.id(cat, chunk, u, cnt)];
                if e < 0 {
                    return Err(self.fail("an op before its input"));
                }
                t = t.max(e + self.c.comm + cost);
            }
        }
        if self.count[stage][0] > 0 {
            self.bubble[stage] += t - no_bubble;
        }
        let id = self.id(cat, chunk, stage, cnt);
        self.end[id] = t;
        self.cur[stage] = t;
        self.mem[stage] += self.c.mem[cat];
        self.schedule[stage].push((cat, chunk, cnt));
        if cat == 1 {
            self.pending_w[stage].push_back(chunk);
        }
        self.count[stage][cat * 2 + chunk] += 1;
        Ok(())
    }

    fn put_w(&mut self, stage: usize) -> Result<(), ScenarioError> {
        let chunk = self.pending_w[stage]
            .pop_front()
            .ok_or_else(|| self.fail("a W pass to free memory"))?;
        self.put(2, chunk, stage)
    }

    /// Fills the wait for input `fa` with W passes, as the source does before every B and F.
    fn fill_wait(&mut self, stage: usize, fa: Option<usize>, fill: bool) -> Result<(), ScenarioError> {
        while !self.pending_w[stage].is_empty()
            && fa.is_some()
            && self.end_of(fa) + self.c.comm >= self.cur[stage] + self.c.fbw[2]
        {
            self.put_w(stage)?;
        }
        let wait = self.end_of(fa) + self.c.comm - self.cur[stage];
        let room = self.max_stage_bubble(Some(stage)) - self.bubble[stage];
        if !self.pending_w[stage].is_empty() && wait > room && fill {
            self.put_w(stage)?;
        }
        Ok(())
    }

    fn warm_up(&mut self) -> Result<(), ScenarioError> {
        let (n, m) = (self.n, self.m);
        for i in 0..n {
            self.put(0, 0, i)?;
        }
        for i in (0..n).rev() {
            if i == n - 1 {
                self.put(0, 1, i)?;
                continue;
            }
            let tmp = self.end[self.id(0, 1, i + 1, 0)] + self.c.comm;
            while self.mem[i] + self.c.mem[0] * (2 + 2 * i as i64) <= self.c.max_mem
                && self.cur[i] + self.c.fbw[0] <= tmp
                && self.count[i][0] < m
            {
                for j in 0..=i {
                    self.put(0, 0, j)?;
                }
            }
            self.put(0, 1, i)?;
        }
        let mut chunk = 0;
        for i in 1..n {
            loop {
                let (a, b) = (self.count[i], self.count[i - 1]);
                if !(a[0] + a[1] < b[0] + b[1] || (a[1] <= b[1] && b[1] < m)) {
                    break;
                }
                for j in (i..n).rev() {
                    if self.count[j][chunk] < m {
                        self.put(0, chunk, j)?;
                    }
                }
                chunk = 1 - chunk;
            }
        }
        Ok(())
    }

    fn backwards(&mut self, fill_b: bool) -> Result<(), ScenarioError> {
        let n = self.n;
        for i in 0..n {
            while self.mem[i] + self.c.mem[1] > self.c.max_mem {
                self.put_w(i)?;
            }
        }
        let (mut b0, mut b1) = (Vec::new(), Vec::new());
        for i in 0..n {
            let c = self.count[i];
            if c[3] >= c[2] {
                b0.push(i);
            } else if i == n - 1 || self.end[self.id(1, 1, i + 1, c[3])] >= 0 || c[2] >= self.m {
                b1.push(i);
            } else {
                b0.push(i);
            }
        }
        let order: Vec<(usize, usize)> = b1
            .iter()
            .rev()
            .map(|&i| (i, 1))
            .chain(b0.iter().map(|&i| (i, 0)))
            .collect();
        for (i, chunk) in order {
            let fa = match chunk {
                1 if i + 1 < n => Some(self.id(1, 1, i + 1, self.count[i][3])),
                0 if i > 0 => Some(self.id(1, 0, i - 1, self.count[i][2])),
                _ => None,
            };
            self.fill_wait(i, fa, chunk == 1 || fill_b)?;
            self.put(1, chunk, i)?;
        }
        Ok(())
    }

    fn forwards(&mut self, fill_f: bool) -> Result<(), ScenarioError> {
        let (n, m) = (self.n, self.m);
        for i in 0..n {
            let c = self.count[i];
            if c[1] >= m {
                continue;
            }
            let item = if c[1] >= c[0] {
                Some(0)
            } else if i == n - 1 || self.end[self.id(0, 1, i + 1, c[1])] >= 0 {
                Some(1)
            } else if c[0] < m && (i == 0 || self.end[self.id(0, 0, i - 1, c[0])] >= 0) {
                Some(0)
            } else {
                None
            };
            let Some(item) = item else { continue };
            while self.mem[i] + self.c.mem[0] > self.c.max_mem {
                self.put_w(i)?;
            }
            let fa = match item {
                0 if i > 0 => Some(self.id(0, 0, i - 1, c[0])),
                1 if i + 1 < n => Some(self.id(0, 1, i + 1, c[1])),
                _ => None,
            };
            self.fill_wait(i, fa, fill_f)?;
            self.put(0, item, i)?;
        }
        Ok(())
    }
}

/// One `try_v_schedule` pass (without its recursion).
fn try_once(
    c: &Costs,
    n: usize,
    m: usize,
    fill: (bool, bool),
    approved: Option<&[i64]>,
) -> Result<Outcome, ScenarioError> {
    let approved: Vec<i64> = approved.map_or_else(|| vec![-1; n], <[i64]>::to_vec);
    let max_approved = approved.iter().copied().max().unwrap_or(-1);
    let mut plan = Plan {
        c,
        n,
        m,
        count: vec![[0; 6]; n],
        end: vec![-1; 6 * n * m],
        cur: vec![0; n],
        mem: vec![0; n],
        bubble: vec![0; n],
        pending_w: vec![VecDeque::new(); n],
        schedule: vec![Vec::new(); n],
        approved,
        max_approved,
    };
    plan.warm_up()?;
    for _ in 0..2 * m {
        plan.backwards(fill.1)?;
        plan.forwards(fill.0)?;
    }
    for i in 0..n {
        while !plan.pending_w[i].is_empty() {
            plan.put_w(i)?;
        }
    }
    let max_bubble = plan.max_stage_bubble(None);
    Ok(Outcome {
        schedule: plan.schedule,
        bubble: plan.bubble,
        max_bubble,
    })
}

/// `try_v_schedule` with its recursion: re-plan with the bubbles found as the allowance while
/// the worst bubble shrinks, and return the deepest plan that beat its caller.
fn try_v_schedule(c: &Costs, n: usize, m: usize, fill: (bool, bool)) -> Result<Outcome, ScenarioError> {
    let mut chain = vec![try_once(c, n, m, fill, None)?];
    while chain.len() < MAX_REPLANS {
        let last = &chain[chain.len() - 1];
        let improving = chain.len() == 1 || last.max_bubble < chain[chain.len() - 2].max_bubble;
        if !improving {
            break;
        }
        let next = try_once(c, n, m, fill, Some(&last.bubble))?;
        chain.push(next);
    }
    let mut best = chain.pop().ok_or_else(|| ScenarioError::Run("ZB-V planner: no plan".into()))?;
    while let Some(upper) = chain.pop() {
        if best.max_bubble >= upper.max_bubble {
            best = upper;
        }
    }
    Ok(best)
}

/// The median over devices of one chunk's op time (`runtime.py` `avg_then_mid`).
fn median_chunk_ns(params: &PipelineParams, pick: fn((f64, f64, f64)) -> f64) -> i64 {
    let mut v: Vec<u64> = (0..params.stages as usize)
        .map(|d| nanos_from_f64(pick(params.stage_op_ns(d)) * 0.5).0)
        .collect();
    v.sort_unstable();
    i64::try_from(v[v.len() / 2]).unwrap_or(i64::MAX)
}

/// ZB-V's order for every device: the best of the source's four fill modes.
pub(super) fn orders(params: &PipelineParams) -> Result<Vec<Vec<Op>>, ScenarioError> {
    let n = params.stages as usize;
    let m = params.micro_batches as usize;
    let keep = nanos_from_f64(params.w_memory_fraction * F_MEM as f64).0 as i64;
    let costs = Costs {
        fbw: [
            median_chunk_ns(params, |t| t.0),
            median_chunk_ns(params, |t| t.1),
            median_chunk_ns(params, |t| t.2),
        ],
        comm: i64::try_from(params.p2p_ns).unwrap_or(i64::MAX),
        mem: [F_MEM, -(F_MEM - keep), -keep],
        max_mem: F_MEM * n as i64 * 2,
    };
    let mut best: Option<Outcome> = None;
    for fill_b in [true, false] {
        for fill_f in [true, false] {
            let out = try_v_schedule(&costs, n, m, (fill_f, fill_b))?;
            if best.as_ref().is_none_or(|b| out.max_bubble < b.max_bubble) {
                best = Some(out);
            }
        }
    }
    let best = best.ok_or_else(|| ScenarioError::Run("ZB-V planner: no plan".into()))?;
    Ok(best
        .schedule
        .iter()
        .map(|ops| {
            ops.iter()
                .map(|&(cat, chunk, micro)| {
                    let (kind, chunk) = match cat {
                        0 => (OpKind::Forward, chunk),
                        1 => (OpKind::BackwardInput, 1 - chunk),
                        _ => (OpKind::BackwardWeight, 1 - chunk),
                    };
                    Op::new(kind, micro as u32, chunk as u32)
                })
                .collect()
        })
        .collect())
}
