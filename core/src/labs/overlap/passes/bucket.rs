//! Bucketing: merge tile siblings back into one operator where the simulator says it pays,
//! under a memory budget, choosing the set of merges by dynamic programming.
//!
//! **Candidates.** Siblings are the K tiles of one original operator (the K tiles of a GEMM, or
//! the K collectives of one group with their waits). Layers are identical, so one decision
//! covers an operator *role* (`qkv`, `sp_allgather1`, `fc1.wgrad`, …) in every layer: a
//! candidate is a role, and merging it merges its siblings in every layer. A merged operator
//! reads the concatenation of its siblings' inputs (a view) and its output is split again (a
//! view) for the streams' consumers; it is issued where its last sibling was (a merged
//! collective starts when its last input is ready and is waited for where its first wait was).
//! So a merge recovers GEMM efficiency and saves launches and collective latencies, and may
//! re-expose communication or hold memory longer: the simulator measures both.
//!
//! **Scoring.** Each of the C candidates is merged alone and the graph simulated: its gain
//! g_c = makespan(base) − makespan(merged) and its memory cost w_c = max(0, peak(merged) −
//! peak(base)). A candidate whose own peak breaks the budget, or that does not gain, is dropped.
//!
//! **Dynamic programming.** A 0/1 knapsack over the memory headroom (budget − peak(base))
//! discretized into [`HEADROOM_UNITS`] units: best[c][u] = max(best[c−1][u],
//! best[c−1][u − w_c] + g_c), O(C·U) time and memory, choosing the set with the largest summed
//! gain whose summed memory cost fits. Sums of separately measured gains and peaks approximate
//! the joint effect, so the chosen set is simulated once more; while it breaks the budget or is
//! slower than the best single merge, the chosen candidate with the least gain per memory unit
//! is dropped and the set simulated again. Scored candidates: C + the verifications (at most
//! C + 1 more). Without a budget the headroom is unbounded and every gaining candidate fits.
//!
//! A merge never makes the result exceed the budget: every returned graph was simulated and
//! its peak is at most the budget, or nothing is merged.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Reverse;

use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef, IntoEdgeReferences};
use petgraph::Direction;

use super::{add, concat_view, persistent_input_bytes, role, slice_views};
use crate::cost::{ComputeWork, CostModel};
use crate::graph::sim::simulate_valid;
use crate::graph::validate::{validate, GraphError};
use crate::graph::{Dim, Edge, Graph, NodeKind, Op};

/// Units the memory headroom is divided into for the knapsack.
pub const HEADROOM_UNITS: usize = 512;

/// Makespan and peak activation memory of a simulated graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Score {
    /// Step time, ns.
    pub makespan_ns: u64,
    /// Peak activation bytes.
    pub peak_bytes: u64,
}

/// One bucketing candidate: an operator role and its sibling sets (one per layer/instance).
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The role, e.g. `fc1`.
    pub role: String,
    /// Sibling sets, each the K tiles in stream order (collective starts for collectives).
    pub sets: Vec<Vec<NodeIndex>>,
    /// The split dimension.
    pub dim: Dim,
}

/// What the pass did.
#[derive(Clone, Debug)]
pub struct Bucketed {
    /// The bucketed graph.
    pub graph: Graph,
    /// Candidate roles found (C).
    pub candidates: usize,
    /// Simulations run to score candidates and verify the choice.
    pub scored: usize,
    /// Roles merged.
    pub chosen: Vec<String>,
    /// The input's score.
    pub base: Score,
    /// The output's score.
    pub result: Score,
    /// The budget, bytes (`None`: no budget).
    pub budget_bytes: Option<u64>,
}

/// The bucketing candidates of a tiled graph, in issue order of their first sibling.
#[must_use]
pub fn candidates(g: &Graph) -> Vec<Candidate> {
    let mut position = vec![0usize; super::super::schedule::node_bound(g)];
    for (i, n) in g.order.iter().enumerate() {
        position[n.index()] = i;
    }
    let mut by_origin: BTreeMap<&str, Vec<NodeIndex>> = BTreeMap::new();
    for n in g.dag.node_indices() {
        let node = &g.dag[n];
        let Some(tag) = &node.tile else { continue };
        if matches!(node.kind, NodeKind::Wait { .. })
            || matches!(node.op, Some(Op::Slice { .. } | Op::Concat { .. }))
        {
            continue;
        }
        by_origin.entry(tag.origin.as_str()).or_default().push(n);
    }
    let mut roles: BTreeMap<String, Candidate> = BTreeMap::new();
    for (origin, mut set) in by_origin {
        set.sort_by_key(|n| g.dag[*n].tile.as_ref().map_or(0, |t| t.stream));
        let Some(tag) = g.dag[set[0]].tile.clone() else {
            continue;
        };
        if set.len() != tag.streams as usize || set.len() < 2 {
            continue;
        }
        let collective = matches!(g.dag[set[0]].kind, NodeKind::CollectiveStart { .. });
        let same_class = set
            .iter()
            .all(|&n| matches!(g.dag[n].kind, NodeKind::CollectiveStart { .. }) == collective);
        // Siblings that feed each other (an accumulation chain) cannot be one operator.
        let chained = set.iter().any(|&n| {
            g.dag
                .neighbors_directed(n, Direction::Incoming)
                .any(|p| set.contains(&p))
        });
        if !same_class || chained {
            continue;
        }
        roles
            .entry(String::from(role(origin)))
            .or_insert_with(|| Candidate {
                role: String::from(role(origin)),
                sets: Vec::new(),
                dim: tag.dim,
            })
            .sets
            .push(set);
    }
    let mut out: Vec<Candidate> = roles.into_values().collect();
    out.sort_by_key(|c| {
        c.sets
            .iter()
            .flat_map(|s| s.iter().map(|n| position[n.index()]))
            .min()
            .unwrap_or(0)
    });
    out
}

/// `g` with the sibling sets of `chosen` merged; `None` when a merge would create a cycle.
///
/// The merged graph is built from *units*: every node not in a chosen set is a unit of its own
/// (index = its node index), every chosen sibling set is one unit (index `bound + set`) and so
/// are the waits of a merged collective (index `bound + sets + set`). Units are issued by a
/// list schedule over their dependencies, each at its priority: a set where its last sibling
/// was, merged waits where the first wait was, every other node where it was.
///
/// # Errors
/// The validator's error (a bug).
#[allow(clippy::too_many_lines)]
pub fn merge(g: &Graph, chosen: &[&Candidate]) -> Result<Option<Graph>, GraphError> {
    let bound = super::super::schedule::node_bound(g);
    let mut unit_of: Vec<usize> = (0..bound).collect();
    let mut sets: Vec<(Vec<NodeIndex>, Vec<NodeIndex>, Dim)> = Vec::new();
    for c in chosen {
        for set in &c.sets {
            let waits: Vec<NodeIndex> = set
                .iter()
                .filter_map(|&s| {
                    g.dag
                        .neighbors_directed(s, Direction::Outgoing)
                        .find(|&w| matches!(g.dag[w].kind, NodeKind::Wait { start } if start == s))
                })
                .collect();
            sets.push((set.clone(), waits, c.dim));
        }
    }
    let set_unit = |id: usize| bound + id;
    let waits_unit = |id: usize| bound + sets.len() + id;
    for (id, (set, waits, _)) in sets.iter().enumerate() {
        for &n in set {
            unit_of[n.index()] = set_unit(id);
        }
        for &w in waits {
            unit_of[w.index()] = waits_unit(id);
        }
    }
    let unit_count = bound + 2 * sets.len();
    // Unit priority (`None`: no node belongs to the unit) and dependencies.
    let mut prio: Vec<Option<usize>> = vec![None; unit_count];
    for (p, &n) in g.order.iter().enumerate() {
        let u = unit_of[n.index()];
        let waits = u >= bound + sets.len();
        prio[u] = Some(match prio[u] {
            None => p,
            Some(e) if waits => e.min(p),
            Some(e) => e.max(p),
        });
    }
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); unit_count];
    let mut indeg = vec![0usize; unit_count];
    for e in (&g.dag).edge_references() {
        let (a, b) = (unit_of[e.source().index()], unit_of[e.target().index()]);
        if a != b && !succ[a].contains(&b) {
            succ[a].push(b);
            indeg[b] += 1;
        }
    }
    let mut heap = alloc::collections::BinaryHeap::new();
    for (u, p) in prio.iter().enumerate() {
        if let (Some(p), 0) = (p, indeg[u]) {
            heap.push(Reverse((*p, u)));
        }
    }
    let units = prio.iter().filter(|p| p.is_some()).count();
    let mut unit_order = Vec::with_capacity(units);
    while let Some(Reverse((_, u))) = heap.pop() {
        unit_order.push(u);
        for &s in &succ[u] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                if let Some(p) = prio[s] {
                    heap.push(Reverse((p, s)));
                }
            }
        }
    }
    if unit_order.len() != units {
        return Ok(None);
    }

    // Emit.
    // Each merged set adds at most a few views per sibling: room for the input's size and a
    // margin.
    let extra = 4 * sets.iter().map(|s| s.0.len()).sum::<usize>();
    let mut out = Graph::with_capacity(
        g.dag.node_count() + extra,
        g.dag.edge_count() + 2 * extra,
        g.tensors.len() + extra,
    );
    out.groups.clone_from(&g.groups);
    let mut map: Vec<Option<usize>> = vec![None; g.tensors.len()];
    for (t, tensor) in g.tensors.iter().enumerate() {
        if tensor.producer.is_none() {
            let id = out.add_input(&tensor.name, tensor.bytes, tensor.persistent);
            out.tensors[id].shape = tensor.shape;
            map[t] = Some(id);
        }
    }
    let mut new_node: Vec<Option<NodeIndex>> = vec![None; bound];
    let mut merged_start: Vec<Option<NodeIndex>> = vec![None; sets.len()];
    let mapped = |map: &[Option<usize>], t: usize| map[t].unwrap_or(t);
    for &u in &unit_order {
        match u {
            i if i < bound => {
                let n = NodeIndex::new(i);
                let node = &g.dag[n];
                let inputs: Vec<usize> = node.inputs.iter().map(|&t| mapped(&map, t)).collect();
                let kind = match node.kind {
                    NodeKind::Wait { start } => NodeKind::Wait {
                        start: new_node[start.index()].unwrap_or(start),
                    },
                    ref k => k.clone(),
                };
                let wait_of = match kind {
                    NodeKind::Wait { start } => Some(start),
                    _ => None,
                };
                let outputs = node.outputs.iter().map(|&t| &g.tensors[t]);
                let c = out.add_copy(node, kind, inputs, outputs);
                if let Some(start) = wait_of {
                    out.control(start, c);
                }
                new_node[i] = Some(c);
                for (&t, &o) in node.outputs.iter().zip(&out.dag[c].outputs) {
                    map[t] = Some(o);
                }
            }
            u if u < bound + sets.len() => {
                let id = u - bound;
                let (members, _, dim) = &sets[id];
                let first = &g.dag[members[0]];
                let origin = first
                    .tile
                    .as_ref()
                    .map_or_else(|| first.name.clone(), |t| t.origin.clone());
                let k = members.len();
                let mut inputs = Vec::with_capacity(first.inputs.len());
                for j in 0..first.inputs.len() {
                    let ts: Vec<usize> = members
                        .iter()
                        .map(|&m| mapped(&map, g.dag[m].inputs[j]))
                        .collect();
                    if ts.iter().all(|&t| t == ts[0]) {
                        inputs.push(ts[0]);
                    } else {
                        let name = format!("{origin}.in{j}");
                        inputs.push(concat_view(&mut out, &ts, *dim, &name));
                    }
                }
                let (kind, outs) = match &first.kind {
                    NodeKind::Compute(work) => {
                        let persistent = persistent_input_bytes(g, first) as f64;
                        let (mut flops, mut bytes) = (0.0, 0.0);
                        for &m in members {
                            if let NodeKind::Compute(w) = &g.dag[m].kind {
                                flops += w.flops;
                                bytes += w.bytes;
                            }
                        }
                        let merged = ComputeWork {
                            kind: work.kind,
                            flops,
                            bytes: bytes - persistent * (k as f64 - 1.0),
                        };
                        let outs: Vec<(String, u64, Option<[u64; 3]>)> = (0..first.outputs.len())
                            .map(|j| {
                                let t0 = &g.tensors[first.outputs[j]];
                                let total: u64 = members
                                    .iter()
                                    .map(|&m| g.tensors[g.dag[m].outputs[j]].bytes)
                                    .sum();
                                (
                                    format!("{origin}.out{j}"),
                                    total,
                                    t0.shape.map(|s| super::joined_shape(s, *dim, k as u64)),
                                )
                            })
                            .collect();
                        (NodeKind::Compute(merged), outs)
                    }
                    NodeKind::CollectiveStart { kind, group, .. } => {
                        let bytes = members
                            .iter()
                            .map(|&m| match g.dag[m].kind {
                                NodeKind::CollectiveStart { bytes, .. } => bytes,
                                _ => 0,
                            })
                            .sum();
                        (
                            NodeKind::CollectiveStart {
                                kind: *kind,
                                group: *group,
                                bytes,
                            },
                            Vec::new(),
                        )
                    }
                    NodeKind::Wait { .. } => continue,
                };
                let (c, o) = add(&mut out, &origin, kind, first.op.clone(), &inputs, &outs);
                for &m in members {
                    new_node[m.index()] = Some(c);
                }
                if matches!(first.kind, NodeKind::CollectiveStart { .. }) {
                    merged_start[id] = Some(c);
                } else {
                    for (j, &full) in o.iter().enumerate() {
                        let parts = slice_views(&mut out, full, *dim, k as u32);
                        for (i, &m) in members.iter().enumerate() {
                            map[g.dag[m].outputs[j]] = Some(parts[i]);
                        }
                    }
                }
            }
            u => {
                let id = u - bound - sets.len();
                let (_, waits, dim) = &sets[id];
                let Some(start) = merged_start[id] else {
                    return Ok(None);
                };
                let k = waits.len();
                let w0 = &g.dag[waits[0]];
                let origin = w0
                    .tile
                    .as_ref()
                    .map_or_else(|| w0.name.clone(), |t| t.origin.clone());
                let outs: Vec<(String, u64, Option<[u64; 3]>)> = (0..w0.outputs.len())
                    .map(|j| {
                        let total: u64 = waits
                            .iter()
                            .map(|&w| g.tensors[g.dag[w].outputs[j]].bytes)
                            .sum();
                        let shape = g.tensors[w0.outputs[j]]
                            .shape
                            .map(|s| super::joined_shape(s, *dim, k as u64));
                        (format!("{origin}.out{j}"), total, shape)
                    })
                    .collect();
                let (c, o) = add(
                    &mut out,
                    &origin,
                    NodeKind::Wait { start },
                    w0.op.clone(),
                    &[],
                    &outs,
                );
                out.control(start, c);
                for &w in waits {
                    new_node[w.index()] = Some(c);
                }
                for (j, &full) in o.iter().enumerate() {
                    let parts = slice_views(&mut out, full, *dim, k as u32);
                    for (i, &w) in waits.iter().enumerate() {
                        map[g.dag[w].outputs[j]] = Some(parts[i]);
                    }
                }
            }
        }
    }
    for e in (&g.dag).edge_references() {
        if *e.weight() != Edge::Control {
            continue;
        }
        let (u, v) = (e.source(), e.target());
        if matches!(g.dag[v].kind, NodeKind::Wait { start } if start == u) {
            continue;
        }
        if let (Some(a), Some(b)) = (new_node[u.index()], new_node[v.index()]) {
            if a != b {
                out.control(a, b);
            }
        }
    }
    validate(&out)?;
    Ok(Some(out))
}

/// The score of `g`, which `merge` has validated.
fn score(g: &Graph, cost: &CostModel) -> Result<Score, GraphError> {
    let sim = simulate_valid(g, cost)?;
    Ok(Score {
        makespan_ns: sim.makespan_ns,
        peak_bytes: sim.peak_bytes,
    })
}

/// Chooses and applies merges of `graph`'s tile siblings under `budget_bytes` (see the module
/// documentation for the dynamic program).
///
/// # Errors
/// The simulator's or validator's error (a bug).
#[allow(clippy::too_many_lines)]
pub fn bucket(
    graph: &Graph,
    cost: &CostModel,
    budget_bytes: Option<u64>,
) -> Result<Bucketed, GraphError> {
    validate(graph)?;
    let base = score(graph, cost)?;
    let cands = candidates(graph);
    let mut scored = 1usize;
    let fits = |s: &Score| budget_bytes.is_none_or(|b| s.peak_bytes <= b);
    // (candidate, gain ns, memory cost bytes, its own score)
    let mut useful: Vec<(usize, u64, u64, Score)> = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        let Some(merged) = merge(graph, &[c])? else {
            continue;
        };
        let s = score(&merged, cost)?;
        scored += 1;
        if fits(&s) && s.makespan_ns < base.makespan_ns {
            useful.push((
                i,
                base.makespan_ns - s.makespan_ns,
                s.peak_bytes.saturating_sub(base.peak_bytes),
                s,
            ));
        }
    }
    let unchanged = |scored| Bucketed {
        graph: graph.clone(),
        candidates: cands.len(),
        scored,
        chosen: Vec::new(),
        base,
        result: base,
        budget_bytes,
    };
    if useful.is_empty() {
        return Ok(unchanged(scored));
    }
    // Knapsack over the headroom.
    let headroom = budget_bytes.map(|b| b.saturating_sub(base.peak_bytes));
    let (units, unit_bytes) = match headroom {
        None => (0usize, 1u64),
        Some(h) => (HEADROOM_UNITS, (h / HEADROOM_UNITS as u64).max(1)),
    };
    let weight = |mem: u64| -> usize {
        if headroom.is_none() {
            0
        } else {
            usize::try_from(mem.div_ceil(unit_bytes)).unwrap_or(usize::MAX)
        }
    };
    // best[c][u]: largest gain from the first c useful candidates within u units.
    let n = useful.len();
    let mut best = vec![vec![0u64; units + 1]; n + 1];
    for (c, &(_, gain, mem, _)) in useful.iter().enumerate() {
        let w = weight(mem);
        for u in 0..=units {
            let skip = best[c][u];
            let take = if w <= u {
                best[c][u - w].saturating_add(gain)
            } else {
                0
            };
            best[c + 1][u] = if w <= u && take > skip { take } else { skip };
        }
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut u = units;
    for c in (0..n).rev() {
        if best[c + 1][u] != best[c][u] {
            chosen.push(c);
            u -= weight(useful[c].2);
        }
    }
    chosen.reverse();
    // The best single merge is the fallback the joint choice must beat.
    let single = useful
        .iter()
        .enumerate()
        .min_by_key(|(_, u)| (u.3.makespan_ns, u.3.peak_bytes))
        .map_or(0, |(i, _)| i);
    loop {
        if chosen.is_empty() {
            chosen.push(single);
        }
        let set: Vec<&Candidate> = chosen.iter().map(|&c| &cands[useful[c].0]).collect();
        if let Some(merged) = merge(graph, &set)? {
            let s = score(&merged, cost)?;
            scored += 1;
            let beats_single = s.makespan_ns <= useful[single].3.makespan_ns;
            if fits(&s) && (beats_single || chosen.len() == 1) {
                return Ok(Bucketed {
                    graph: merged,
                    candidates: cands.len(),
                    scored,
                    chosen: set.iter().map(|c| c.role.clone()).collect(),
                    base,
                    result: s,
                    budget_bytes,
                });
            }
        }
        if chosen.len() == 1 {
            if chosen[0] == single {
                return Ok(unchanged(scored));
            }
            chosen[0] = single;
            continue;
        }
        // Drop the chosen candidate with the least gain per unit of memory.
        let worst = (0..chosen.len())
            .min_by(|&a, &b| {
                let r = |c: usize| useful[c].1 as f64 / (useful[c].2 as f64 + 1.0);
                r(chosen[a]).total_cmp(&r(chosen[b]))
            })
            .unwrap_or(0);
        chosen.remove(worst);
    }
}

/// A one-line account of the pass for the Report's findings.
#[must_use]
pub fn describe(b: &Bucketed) -> String {
    format!(
        "Bucketing scored {} of {} candidate roles with {} simulations and merged {} ({})",
        b.candidates.min(b.scored.saturating_sub(1)),
        b.candidates,
        b.scored,
        b.chosen.len(),
        if b.chosen.is_empty() {
            String::from("none")
        } else {
            b.chosen.join(", ")
        }
    )
}
