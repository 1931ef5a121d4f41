//! The one reordering primitive every pass and baseline shares: a list schedule (Kahn's
//! topological sort) that emits, among the nodes whose predecessors are all issued, the one with
//! the smallest priority. Any priority gives a valid issue order; the priority says which valid
//! order a strategy wants.

use alloc::collections::BinaryHeap;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Reverse;

use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;

use crate::graph::validate::{validate, GraphError};
use crate::graph::Graph;

/// A topological order of `graph` that follows `priority` (indexed by `NodeIndex::index()`,
/// smaller first; ties by the current issue position). `None` on a cycle.
#[must_use]
pub fn list_schedule(graph: &Graph, priority: &[u64]) -> Option<Vec<NodeIndex>> {
    let bound = graph
        .dag
        .node_indices()
        .map(|n| n.index() + 1)
        .max()
        .unwrap_or(0);
    let mut position = vec![0usize; bound];
    for (i, n) in graph.order.iter().enumerate() {
        position[n.index()] = i;
    }
    let mut pending = vec![0usize; bound];
    let mut heap = BinaryHeap::new();
    for n in graph.dag.node_indices() {
        pending[n.index()] = graph.dag.neighbors_directed(n, Direction::Incoming).count();
        if pending[n.index()] == 0 {
            heap.push(Reverse((
                priority[n.index()],
                position[n.index()],
                n.index(),
            )));
        }
    }
    let mut out = Vec::with_capacity(graph.dag.node_count());
    while let Some(Reverse((_, _, i))) = heap.pop() {
        let n = NodeIndex::new(i);
        out.push(n);
        for s in graph.dag.neighbors_directed(n, Direction::Outgoing) {
            pending[s.index()] -= 1;
            if pending[s.index()] == 0 {
                heap.push(Reverse((
                    priority[s.index()],
                    position[s.index()],
                    s.index(),
                )));
            }
        }
    }
    (out.len() == graph.dag.node_count()).then_some(out)
}

/// `graph` with the issue order `list_schedule` gives for `priority`, validated.
///
/// # Errors
/// A cycle, or the validator's error.
pub fn reordered(graph: &Graph, priority: &[u64]) -> Result<Graph, GraphError> {
    let order = list_schedule(graph, priority).ok_or_else(|| GraphError {
        at: "graph".into(),
        message: "has a cycle: no issue order exists".into(),
    })?;
    let mut out = graph.clone();
    out.order = order;
    validate(&out)?;
    Ok(out)
}

/// Slots per node index: priorities are built from positions × 4 so that a strategy can place a
/// node just before or after another.
#[must_use]
pub fn node_bound(graph: &Graph) -> usize {
    graph
        .dag
        .node_indices()
        .map(|n| n.index() + 1)
        .max()
        .unwrap_or(0)
}
