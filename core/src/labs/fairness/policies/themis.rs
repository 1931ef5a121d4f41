//! Themis (Mahajan et al., NSDI'20): GPUs auctioned to the apps furthest behind their
//! finish-time fairness ρ, as its authors' simulator runs the auction (kshiteejm/mltiply
//! @24ace82, "I" = `src/main/java/com/wisr/mlsched/globalsched/ThemisInterJobScheduler.java`,
//! line numbers of that commit) with the partial-allocation mechanism's hidden payments (Cole,
//! Gkatzelis and Goel, 2013), which that simulator computes but does not apply.
//!
//! - **Apps and ρ**: every job is an app; ρ = T_shared / T_id as largest ρ first computes it
//!   ([`super::largest_rho::rho`]).
//! - **What is offered**: whenever GPUs are free or leases end, the GPUs not held under a
//!   lease (I `onResourceAvailable`, lines 307–325).
//! - **The fairness knob f** (I lines 340–365; the YARN prototype's `Themis.runLogic` takes
//!   ⌊(1 − f)·N⌋ the same way): the apps that want GPUs, largest ρ first, and of them the first
//!   max(⌊(1 − f)·N⌋, 1) bid. Ties at the cut: submission order (the simulator shuffles them
//!   with a seeded `Random(0)`).
//! - **Bids**: an app bids its gang and its ρ improvement v = ρ_old / ρ_new over the lease
//!   the auction hands out (the paper's valuation; the simulator at this commit bids the
//!   speed-up instead). For a gang job the lease of length L is all it can win, and T_id cancels
//!   in the ratio: v = (T_shared + L) / T_shared, T_shared its finish time now (elapsed +
//!   remaining), T_shared + L if it waits out the lease.
//! - **Winners** (I `pickWinningBids`, lines 26–153): the bids that fit the offered GPUs and
//!   maximise the product of the winners' v (Σ ln v, each app at most one bid; the simulator
//!   solves it with Gurobi, here a 0/1 knapsack solved exactly by dynamic programming).
//! - **Leftovers** (I lines 326–415): while GPUs remain, the auction runs again over them
//!   among the apps that did not win; when none of the bidders fits, they leave and the next
//!   apps by ρ bid.
//! - **Hidden payments** (partial allocation; I lines 155–279 compute them, but their call,
//!   lines 138–143, is commented out): winner i keeps a share
//!   c_i = Π_{j≠i} v_j / max_{S∌i} Π_{j∈S} v_j of its allocation. A gang job cannot run on a
//!   share of its GPUs, so here it keeps all of them for c_i of the lease; the rest of the lease
//!   its GPUs go back to auction, among the apps that paid no hidden payment.
//!   `themis.hidden_payments` = false runs the simulator's way.
//! - **Placement**: the auction counts GPUs and the lab places the winners; GPUs a winner
//!   cannot be placed on stay on offer to the other apps, largest ρ first (the simulator's bids
//!   name their GPUs, so they always can be).
//!
//! Ours: gang jobs (the simulator's apps grow to any GPU count up to their parallelism, bidding
//! per GPU subset and placement); placement is the lab's; T_shared reads the job's remaining
//! work, as the simulator's apps read their remaining iterations.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec;
use alloc::vec::Vec;

use super::largest_rho::rho;
use super::{takeable, Emit, Key, LazySorted, Needs, Policy, PolicySpec, Preemption, Runs};
use crate::labs::fairness::params::{s_to_ns, ThemisParams};
use crate::labs::fairness::sim::RoundCtx;

/// One app's bid: its gang and its valuation v = ρ_old / ρ_new (> 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bid {
    /// GPUs asked.
    pub gpus: u32,
    /// The ρ improvement the GPUs would bring.
    pub value: f64,
    /// Breaks ties between equal bids, smaller first (the job index), so that the outcome does
    /// not depend on the order of the bids.
    pub tie: usize,
}

/// What one auction decides.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The winning bids (indices into the bids), ascending.
    pub winners: Vec<usize>,
    /// Each winner's partial-allocation share c_i ∈ (0, 1].
    pub shares: Vec<f64>,
}

/// How many of `n` apps wanting GPUs bid under fairness knob `f`: max(⌊(1 − f)·n⌋, 1), 0
/// without apps (I line 345).
#[must_use]
pub fn bidders(n: usize, f: f64) -> usize {
    if n == 0 {
        return 0;
    }
    (libm::floor((1.0 - f) * n as f64) as usize).clamp(1, n)
}

/// The auction of `capacity` GPUs among `bids`: the winners maximise the product of their
/// valuations among the sets that fit, and each winner's share is its partial allocation.
#[must_use]
pub fn auction(bids: &[Bid], capacity: u64) -> Outcome {
    let items = kept_items(bids, capacity);
    // Uncontested (every bid that fits fits together): all of them win, and without any one
    // of them the others' best is what they have, so each share is 1.
    let asked: u64 = items.iter().map(|&i| u64::from(bids[i].gpus)).sum();
    if asked <= capacity {
        let winners: Vec<usize> = items.into_iter().filter(|&i| bids[i].value > 1.0).collect();
        let shares = vec![1.0; winners.len()];
        return Outcome { winners, shares };
    }
    let table = Knapsack::solve(
        items.iter().map(|&i| (bids[i].gpus as usize, bids[i].value)),
        capacity as usize,
    );
    let mut won: Vec<(usize, f64)> = table
        .chosen()
        .into_iter()
        .map(|k| {
            let share = libm::exp(table.best() - table.gains[k] - table.best_without(k));
            (items[k], share.min(1.0))
        })
        .collect();
    won.sort_unstable_by_key(|w| w.0);
    let (winners, shares) = won.into_iter().unzip();
    Outcome { winners, shares }
}

/// The 0/1 knapsack of the winners: items of `weights` GPUs and `gains` = ln v, solved
/// exactly from both ends, so that the best without any one item is one pass over the GPUs.
struct Knapsack {
    weights: Vec<usize>,
    gains: Vec<f64>,
    width: usize,
    /// `prefix[k·width + c]`: the best Σ gain of items 0..k within c GPUs.
    prefix: Vec<f64>,
    /// Whether item k is in that best within c GPUs (`take[k·width + c]`).
    take: Vec<bool>,
    /// `suffix[k·width + c]`: the best of items k.. within c GPUs.
    suffix: Vec<f64>,
}

impl Knapsack {
    fn solve(items: impl Iterator<Item = (usize, f64)>, capacity: usize) -> Self {
        let (weights, gains): (Vec<usize>, Vec<f64>) = items
            .map(|(w, v)| (w, libm::log(v.max(f64::MIN_POSITIVE))))
            .unzip();
        let (n, width) = (weights.len(), capacity + 1);
        let mut t = Knapsack {
            weights,
            gains,
            width,
            prefix: vec![0.0; (n + 1) * width],
            take: vec![false; n * width],
            suffix: vec![0.0; (n + 1) * width],
        };
        for k in 0..n {
            for c in 0..width {
                let skip = t.prefix[k * width + c];
                let with = t.fits(k, c).then(|| t.prefix[k * width + c - t.weights[k]] + t.gains[k]);
                let taken = with.is_some_and(|w| w > skip);
                t.take[k * width + c] = taken;
                t.prefix[(k + 1) * width + c] = with.filter(|_| taken).unwrap_or(skip);
            }
        }
        for k in (0..n).rev() {
            for c in 0..width {
                let skip = t.suffix[(k + 1) * width + c];
                let with = t.fits(k, c).then(|| t.suffix[(k + 1) * width + c - t.weights[k]] + t.gains[k]);
                t.suffix[k * width + c] = with.map_or(skip, |w| w.max(skip));
            }
        }
        t
    }

    fn fits(&self, k: usize, c: usize) -> bool {
        self.weights[k] <= c
    }

    /// The best Σ gain within the capacity.
    fn best(&self) -> f64 {
        self.prefix[self.weights.len() * self.width + self.width - 1]
    }

    /// The items of that best, ascending.
    fn chosen(&self) -> Vec<usize> {
        let mut chosen = Vec::new();
        let mut c = self.width - 1;
        for k in (0..self.weights.len()).rev() {
            if self.take[k * self.width + c] {
                chosen.push(k);
                c -= self.weights[k];
            }
        }
        chosen.reverse();
        chosen
    }

    /// The best Σ gain within the capacity without item `k`.
    fn best_without(&self, k: usize) -> f64 {
        let (w, cap) = (self.width, self.width - 1);
        (0..w)
            .map(|c| self.prefix[k * w + c] + self.suffix[(k + 1) * w + cap - c])
            .fold(0.0, f64::max)
    }
}

/// The bids an exact auction of `capacity` GPUs needs, by tie: those that fit, and of each
/// gang size only the ⌊capacity/g⌋ + 1 most valuable (no set that fits holds more than
/// ⌊capacity/g⌋ of them, and one more stands in for a winner left out of a share's auction).
fn kept_items(bids: &[Bid], capacity: u64) -> Vec<usize> {
    let mut by_size: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, b) in bids.iter().enumerate() {
        if b.gpus > 0 && u64::from(b.gpus) <= capacity {
            by_size.entry(b.gpus).or_default().push(i);
        }
    }
    let better = |&a: &usize, &b: &usize| {
        bids[b]
            .value
            .total_cmp(&bids[a].value)
            .then(bids[a].tie.cmp(&bids[b].tie))
    };
    let mut kept = Vec::new();
    for (g, mut list) in by_size {
        let room = (capacity / u64::from(g)) as usize + 1;
        if list.len() > room {
            list.select_nth_unstable_by(room - 1, better);
            list.truncate(room);
        }
        kept.extend(list);
    }
    kept.sort_unstable_by_key(|&i| bids[i].tie);
    kept
}

/// Themis' auctions at lease ends.
#[derive(Clone, Debug)]
pub struct Themis {
    /// Lease length, ns.
    pub lease_ns: u64,
    /// The knob and the hidden payments.
    pub params: ThemisParams,
    /// This round's winners whose lease ends early (their hidden payment): job → instant.
    early_end: BTreeMap<usize, u64>,
    /// Apps that paid a hidden payment: out of the auctions until the instant.
    paid_until: BTreeMap<usize, u64>,
}

impl Themis {
    /// A fresh instance with leases of `lease_ns`.
    #[must_use]
    pub fn new(lease_ns: u64, params: ThemisParams) -> Self {
        Themis {
            lease_ns: lease_ns.max(1),
            params,
            early_end: BTreeMap::new(),
            paid_until: BTreeMap::new(),
        }
    }

    /// The GPUs on offer now: those not held under a lease.
    fn offered(ctx: &RoundCtx<'_>) -> u64 {
        let held: u64 = ctx
            .running
            .iter()
            .filter(|&&j| !takeable(ctx, j))
            .map(|&j| u64::from(ctx.jobs[j].gpus))
            .sum();
        ctx.total_gpus.saturating_sub(held)
    }

    /// Job `j`'s bid for a lease of `lease_left_ns`.
    fn bid(ctx: &RoundCtx<'_>, j: usize, lease_left_ns: u64) -> Bid {
        let job = &ctx.jobs[j];
        let now = ctx.now_ns;
        let shared = ((now - job.submit_ns) + job.remaining_at(now) + job.pending_overhead_ns)
            .max(1) as f64;
        Bid {
            gpus: job.gpus,
            value: (shared + lease_left_ns as f64) / shared,
            tie: j,
        }
    }
}

impl Policy for Themis {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        let now = ctx.now_ns;
        self.early_end.clear();
        self.paid_until.retain(|_, until| *until > now);
        let mut free = Self::offered(ctx);
        if free == 0 {
            return;
        }
        let lease_end = (now + self.lease_ns).div_ceil(self.lease_ns) * self.lease_ns;
        let lease_left = lease_end - now;
        let candidates: Vec<usize> = ctx
            .active
            .iter()
            .copied()
            .filter(|&j| takeable(ctx, j) && !self.paid_until.contains_key(&j))
            .collect();
        // No app fits what is on offer: no auction, nothing to place.
        if !candidates.iter().any(|&j| u64::from(ctx.jobs[j].gpus) <= free) {
            return;
        }
        // (−ρ, submission) ascending: largest ρ first.
        let keyed: Vec<((Key, u64), usize)> = candidates
            .into_iter()
            .map(|j| ((Key(0, -rho(ctx, j)), ctx.jobs[j].submit_ns), j))
            .collect();
        let mut apps = keyed.clone();
        let mut won = BTreeSet::new();
        while free > 0 && !apps.is_empty() {
            // The first n by ρ, in no particular order (the auction does not depend on it).
            let n = bidders(apps.len(), self.params.fairness_knob);
            if n < apps.len() {
                apps.select_nth_unstable(n - 1);
            }
            let bidding: Vec<usize> = apps[..n]
                .iter()
                .map(|a| a.1)
                .filter(|&j| u64::from(ctx.jobs[j].gpus) <= free)
                .collect();
            if bidding.is_empty() {
                apps.drain(..n);
                continue;
            }
            let bids: Vec<Bid> = bidding.iter().map(|&j| Self::bid(ctx, j, lease_left)).collect();
            let out = auction(&bids, free);
            let mut winners: Vec<(usize, f64)> = out
                .winners
                .iter()
                .zip(&out.shares)
                .map(|(&w, &share)| (bidding[w], share))
                .collect();
            winners.sort_by_key(|&(j, _)| (Key(0, -rho(ctx, j)), ctx.jobs[j].submit_ns, j));
            for (j, share) in winners {
                free -= u64::from(ctx.jobs[j].gpus);
                let end = now + libm::ceil(share * lease_left as f64) as u64;
                if self.params.hidden_payments && end < lease_end {
                    self.early_end.insert(j, end);
                    self.paid_until.insert(j, lease_end);
                }
                won.insert(j);
                if !emit(j) {
                    return;
                }
            }
            apps.retain(|a| !won.contains(&a.1));
        }
        // GPUs a winner could not be placed on (the auction counts GPUs, the lab places them)
        // stay on offer to the others, by ρ.
        let mut rest = LazySorted::new(keyed.into_iter().filter(|a| !won.contains(&a.1)).collect());
        while let Some(j) = rest.pop() {
            if !emit(j) {
                return;
            }
        }
    }

    fn preemption(&self) -> Preemption {
        Preemption::AtLeaseEnd(self.lease_ns)
    }

    fn lease_end_ns(&self, _ctx: &RoundCtx<'_>, j: usize) -> Option<u64> {
        self.early_end.get(&j).copied()
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 0),
    fair: true,
    needs: Needs::Nothing,
    runs: Runs::Policy(|p, _, _| Box::new(Themis::new(s_to_ns(p.lease_s), p.themis))),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Bids of (GPUs, value), each tied by its position.
    fn bids(list: &[(u32, f64)]) -> Vec<Bid> {
        list.iter()
            .enumerate()
            .map(|(tie, &(gpus, value))| Bid { gpus, value, tie })
            .collect()
    }

    #[test]
    fn three_apps_known_answer() {
        // 4 GPUs; A: 2 GPUs, v = 2; B: 2 GPUs, v = 1.5; C: 4 GPUs, v = 2.5. The best product is
        // A and B's, 3 > 2.5. Without A the best is C's 2.5, so c_A = 1.5 / 2.5 = 0.6; without B
        // it is C's too, so c_B = 2 / 2.5 = 0.8.
        let out = auction(&bids(&[(2, 2.0), (2, 1.5), (4, 2.5)]), 4);
        assert_eq!(out.winners, vec![0, 1]);
        assert!((out.shares[0] - 0.6).abs() < 1e-12, "{:?}", out.shares);
        assert!((out.shares[1] - 0.8).abs() < 1e-12, "{:?}", out.shares);
    }

    #[test]
    fn an_uncontested_winner_keeps_everything() {
        let out = auction(&bids(&[(2, 3.0), (8, 9.0)]), 4);
        assert_eq!(out.winners, vec![0]);
        assert_eq!(out.shares, vec![1.0]);
    }

    #[test]
    fn the_auction_is_exact_against_every_subset() {
        // Six bids of sizes 1–4 on 6 GPUs: the winners' product is the largest of all 64
        // subsets that fit, and each share is its ratio against the best subset without it.
        let bids = bids(&[(1, 1.3), (2, 2.1), (3, 2.9), (1, 1.05), (4, 4.2), (2, 1.6)]);
        let fits = |m: u32| (0..6).filter(|i| m >> i & 1 == 1).map(|i| bids[i].gpus).sum::<u32>() <= 6;
        let product = |m: u32| (0..6).filter(|i| m >> i & 1 == 1).map(|i| bids[i].value).product::<f64>();
        let best = (0..64u32).filter(|&m| fits(m)).map(product).fold(0.0, f64::max);
        let out = auction(&bids, 6);
        let won: f64 = out.winners.iter().map(|&i| bids[i].value).product();
        assert!((won - best).abs() < 1e-9, "{won} vs {best}");
        for (&i, &c) in out.winners.iter().zip(&out.shares) {
            let without = (0..64u32)
                .filter(|&m| fits(m) && m >> i & 1 == 0)
                .map(product)
                .fold(0.0, f64::max);
            assert!((c - won / bids[i].value / without).abs() < 1e-9);
        }
    }

    #[test]
    fn the_order_of_the_bids_changes_nothing() {
        // Equal bids (two 1-GPU apps of the same value for one GPU): the smaller tie wins,
        // whichever comes first.
        let list = [(1, 1.5), (2, 2.2), (1, 1.5), (2, 1.9), (3, 2.9)];
        let forward = bids(&list);
        let mut backward = forward.clone();
        backward.reverse();
        let won = |b: &[Bid], cap| {
            let out = auction(b, cap);
            let mut w: Vec<(usize, u64)> = out
                .winners
                .iter()
                .zip(&out.shares)
                .map(|(&i, &c)| (b[i].tie, libm::round(c * 1e12) as u64))
                .collect();
            w.sort_unstable();
            w
        };
        for cap in 1..=9 {
            assert_eq!(won(&forward, cap), won(&backward, cap), "{cap} GPUs");
        }
        assert_eq!(won(&forward, 1)[0].0, 0);
    }

    #[test]
    fn the_knob_picks_the_worst_off_fraction() {
        assert_eq!(bidders(10, 0.2), 8);
        assert_eq!(bidders(10, 0.0), 10);
        assert_eq!(bidders(10, 1.0), 1);
        assert_eq!(bidders(3, 0.9), 1);
        assert_eq!(bidders(0, 0.2), 0);
    }
}
