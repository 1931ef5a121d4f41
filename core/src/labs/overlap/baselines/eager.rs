//! Eager: every collective starts as soon as its inputs allow and is waited for as late as
//! possible (just before the first operator that needs its result, or at the end): the greedy
//! "raise communication, sink waits" reordering that PyTorch Inductor applies, without tiling.
//! Results are allocated when their collective starts and inputs live until it ends, so memory
//! grows with every collective in flight.

use alloc::vec;

use crate::graph::validate::GraphError;
use crate::graph::{Graph, NodeKind};
use crate::labs::overlap::schedule::{node_bound, reordered};

/// `graph` with starts raised and waits sunk.
///
/// # Errors
/// The validator's error (a bug).
pub fn eager(graph: &Graph) -> Result<Graph, GraphError> {
    let mut priority = vec![u64::MAX; node_bound(graph)];
    let n = graph.order.len() as u64;
    for (i, &node) in graph.order.iter().enumerate() {
        priority[node.index()] = match graph.dag[node].kind {
            NodeKind::CollectiveStart { .. } => 0,
            NodeKind::Wait { .. } => n + i as u64,
            NodeKind::Compute(_) => i as u64,
        };
    }
    reordered(graph, &priority)
}
