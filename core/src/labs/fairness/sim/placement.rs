//! Where a job's GPUs go: the node sets kept by free count, the placements of
//! [`Placement`] (best fit, first fit, topology-aware, the artifact's consolidate-or-spread),
//! the fragmentation of the free GPUs, and which tenant holds which GPUs at an instant (the
//! page's cluster view).

use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use super::{NodeAlloc, PolicyRun, Segment, Sim};
use crate::labs::fairness::params::Placement;

/// A set of node indices as a bitset (one per GPU type and free count: [`Sim::place`]'s best
/// and first fits): insert and remove flip a bit, and the members of a range come in
/// ascending order a word at a time, where an ordered tree would allocate and chase pointers
/// at every change of a node's free count.
#[derive(Clone, Debug)]
pub(super) struct NodeSet {
    words: Vec<u64>,
}

impl NodeSet {
    /// An empty set for nodes `0..nodes`.
    pub(super) fn new(nodes: usize) -> Self {
        NodeSet {
            words: vec![0; nodes.div_ceil(64)],
        }
    }

    pub(super) fn insert(&mut self, n: u32) {
        self.words[(n / 64) as usize] |= 1 << (n % 64);
    }

    pub(super) fn remove(&mut self, n: u32) {
        self.words[(n / 64) as usize] &= !(1 << (n % 64));
    }

    /// The members in `r`, ascending.
    pub(super) fn range(&self, r: Range<u32>) -> impl Iterator<Item = u32> + '_ {
        let Range { start: lo, end: hi } = r;
        let mut w = (lo / 64) as usize;
        let mut bits = self.words.get(w).map_or(0, |&x| x & (!0u64 << (lo % 64)));
        core::iter::from_fn(move || loop {
            if bits != 0 {
                let n = w as u32 * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                return (n < hi).then_some(n);
            }
            w += 1;
            if w as u64 * 64 >= u64::from(hi) {
                return None;
            }
            bits = *self.words.get(w)?;
        })
    }
}

impl Sim<'_> {
    pub(super) fn fragmentation(&self) -> f64 {
        if self.free_gpus == 0 {
            return 0.0;
        }
        self.partial_free as f64 / self.free_gpus as f64
    }

    /// Every node, as a range for [`Sim::place`].
    pub(super) fn all_nodes(&self) -> (u32, u32) {
        (0, self.node_free.len() as u32)
    }

    /// Sets the free GPUs of node `n`, keeping [`Sim::partial_free`].
    pub(super) fn set_node_free(&mut self, n: usize, free: u32) {
        let partial = |f: u32| {
            if f > 0 && f < self.gpus_per_node {
                u64::from(f)
            } else {
                0
            }
        };
        self.partial_free = self.partial_free - partial(self.node_free[n]) + partial(free);
        let by_free = &mut self.nodes_by_free[self.node_type[n] as usize];
        by_free[self.node_free[n] as usize].remove(n as u32);
        by_free[free as usize].insert(n as u32);
        self.node_free[n] = free;
    }

    /// True when [`Sim::place`] would find `gpus` GPUs on nodes of type `t` once the running
    /// jobs `freed` had given theirs back (nothing is changed).
    pub(super) fn would_fit_without(
        &self,
        gpus: u32,
        t: u32,
        freed: &[usize],
        (lo, hi): (u32, u32),
    ) -> bool {
        let gpn = self.gpus_per_node;
        let mut free: Vec<u32> = self.node_free.clone();
        for &j in freed {
            for &(n, c) in &self.jobs[j].alloc {
                free[n as usize] += c;
            }
        }
        let of_type = free
            .iter()
            .enumerate()
            .filter(|(n, _)| self.node_type[*n] == t && (lo..hi).contains(&(*n as u32)))
            .map(|(_, &f)| f);
        match self.params.cluster.placement {
            Placement::Consolidated => {
                let (full, rest) = (gpus / gpn, gpus % gpn);
                let whole = of_type.clone().filter(|&f| f == gpn).count() as u32;
                let partial = of_type.clone().any(|f| f >= rest && f < gpn);
                whole >= full && (rest == 0 || partial || whole > full)
            }
            Placement::TopologyAware | Placement::FirstFit | Placement::ConsolidateOrSpread => {
                of_type.map(u64::from).sum::<u64>() >= u64::from(gpus)
            }
        }
    }

    /// Picks GPUs for `gpus` on nodes of type `t` among nodes `lo..hi`, or None.
    pub(super) fn place(&self, gpus: u32, t: u32, (lo, hi): (u32, u32)) -> Option<NodeAlloc> {
        let gpn = self.gpus_per_node;
        let hi = hi.min(self.node_free.len() as u32);
        let lo = lo.min(hi);
        let nodes = move || (lo..hi).filter(move |&n| self.node_type[n as usize] == t);
        let by_free = &self.nodes_by_free[t as usize];
        // The node of type `t` with the fewest free GPUs ≥ `need`, lowest index first, not in
        // `exclude`.
        let best_fit = |need: u32, exclude: &[(u32, u32)]| {
            (need..=gpn)
                .flat_map(|f| by_free[f as usize].range(lo..hi))
                .find(|n| !exclude.iter().any(|e| e.0 == *n))
        };
        match self.params.cluster.placement {
            Placement::Consolidated => {
                let full = gpus / gpn;
                let rest = gpus % gpn;
                let mut out: NodeAlloc = by_free[gpn as usize]
                    .range(lo..hi)
                    .take(full as usize)
                    .map(|n| (n, gpn))
                    .collect();
                if out.len() < full as usize {
                    return None;
                }
                if rest > 0 {
                    let n = best_fit(rest, &out)?;
                    out.push((n, rest));
                }
                Some(out)
            }
            Placement::TopologyAware => {
                if gpus <= gpn {
                    if let Some(n) = best_fit(gpus, &[]) {
                        return Some(smallvec::smallvec![(n, gpus)]);
                    }
                }
                let mut order: Vec<u32> = nodes()
                    .filter(|&n| self.node_free[n as usize] > 0)
                    .collect();
                order.sort_by_key(|&n| (core::cmp::Reverse(self.node_free[n as usize]), n));
                take_in_order(&self.node_free, order.into_iter(), gpus)
            }
            Placement::FirstFit => take_in_order(
                &self.node_free,
                nodes().filter(|&n| self.node_free[n as usize] > 0),
                gpus,
            ),
            Placement::ConsolidateOrSpread => {
                // Chunks of a node's GPUs, each on the first node with that many free.
                let mut taken: Vec<(u32, u32)> = Vec::new();
                let avail = |taken: &[(u32, u32)], n: u32| {
                    let t: u32 = taken.iter().filter(|e| e.0 == n).map(|e| e.1).sum();
                    self.node_free[n as usize] - t
                };
                let mut missing = gpus;
                while missing > 0 {
                    let need = missing.min(gpn);
                    // The first node in order with `need` free, among the untouched ones (a
                    // chunk is a node's GPUs or the last rest, so a touched node has fewer).
                    let Some(n) = (need..=gpn)
                        .filter_map(|f| {
                            by_free[f as usize]
                                .range(lo..hi)
                                .find(|n| !taken.iter().any(|e| e.0 == *n))
                        })
                        .min()
                    else {
                        break;
                    };
                    taken.push((n, need));
                    missing -= need;
                }
                // Spread what is still missing over the nodes in order.
                if missing > 0 {
                    for n in nodes() {
                        let take = avail(&taken, n).min(missing);
                        if take > 0 {
                            taken.push((n, take));
                            missing -= take;
                        }
                        if missing == 0 {
                            break;
                        }
                    }
                }
                if missing > 0 {
                    return None;
                }
                let mut merged = NodeAlloc::new();
                for (n, c) in taken {
                    match merged.iter_mut().find(|e| e.0 == n) {
                        Some(e) => e.1 += c,
                        None => merged.push((n, c)),
                    }
                }
                Some(merged)
            }
        }
    }
}

fn take_in_order(
    free: &[u32],
    nodes: impl Iterator<Item = u32>,
    gpus: u32,
) -> Option<NodeAlloc> {
    let mut need = gpus;
    let mut out = NodeAlloc::new();
    for n in nodes {
        if need == 0 {
            break;
        }
        let take = free[n as usize].min(need);
        if take > 0 {
            out.push((n, take));
            need -= take;
        }
    }
    (need == 0).then_some(out)
}

/// GPUs each tenant holds on each node at `t_ns`: per node, (tenant, GPUs) pairs in tenant
/// order. A segment covers [start, end), so at a job's finish instant its GPUs are free.
#[must_use]
pub fn occupancy_at(run: &PolicyRun, nodes: usize, t_ns: u64) -> Vec<Vec<(u32, u32)>> {
    occupancy_of(&run.segments, |job| run.jobs[job].tenant, nodes, t_ns)
}

/// [`occupancy_at`] from a run's segments and each job's tenant alone (what the page's cluster
/// view keeps of a run).
#[must_use]
pub fn occupancy_of(
    segments: &[Segment],
    tenant_of: impl Fn(usize) -> u32,
    nodes: usize,
    t_ns: u64,
) -> Vec<Vec<(u32, u32)>> {
    let mut out: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nodes];
    for seg in segments {
        if seg.start_ns > t_ns || seg.end_ns <= t_ns {
            continue;
        }
        let tenant = tenant_of(seg.job);
        for &(n, g) in &seg.alloc {
            let Some(node) = out.get_mut(n as usize) else {
                continue;
            };
            match node.binary_search_by_key(&tenant, |e| e.0) {
                Ok(i) => node[i].1 += g,
                Err(i) => node.insert(i, (tenant, g)),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::NodeSet;
    use alloc::collections::BTreeSet;
    use alloc::vec::Vec;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    /// Random inserts, removes and ranges: a [`NodeSet`] holds and yields what an ordered set
    /// of the same nodes does, across word boundaries.
    #[test]
    fn node_set_ranges_as_an_ordered_set() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut rnd = move |n: u64| rng.random_range(0..n);
        for nodes in [1u32, 63, 64, 65, 140, 200] {
            let mut ours = NodeSet::new(nodes as usize);
            let mut tree = BTreeSet::new();
            for _ in 0..2_000 {
                let n = rnd(u64::from(nodes)) as u32;
                if rnd(2) == 0 {
                    ours.insert(n);
                    tree.insert(n);
                } else {
                    ours.remove(n);
                    tree.remove(&n);
                }
                let lo = rnd(u64::from(nodes) + 1) as u32;
                let hi = lo + rnd(u64::from(nodes - lo) + 1) as u32;
                let got: Vec<u32> = ours.range(lo..hi).collect();
                let want: Vec<u32> = tree.range(lo..hi).copied().collect();
                assert_eq!(got, want, "{nodes} nodes, range {lo}..{hi}");
            }
        }
    }
}
