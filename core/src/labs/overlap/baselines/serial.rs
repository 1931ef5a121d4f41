//! Serial: every collective is waited for right after it starts, so no communication overlaps
//! computation (data-parallel gradient buckets included).

use alloc::vec;

use crate::graph::validate::GraphError;
use crate::graph::{Graph, NodeKind};
use crate::labs::overlap::schedule::{node_bound, reordered};

/// `graph` with each wait issued immediately after its collective's start.
///
/// # Errors
/// The validator's error (a bug).
pub fn serial(graph: &Graph) -> Result<Graph, GraphError> {
    let mut priority = vec![u64::MAX; node_bound(graph)];
    for (i, &n) in graph.order.iter().enumerate() {
        priority[n.index()] = 2 * i as u64;
    }
    for &n in &graph.order {
        if let NodeKind::Wait { start } = graph.dag[n].kind {
            priority[n.index()] = priority[start.index()] + 1;
        }
    }
    reordered(graph, &priority)
}
