//! Segmented round-robin reordering.
//!
//! Inside each tile stream a *segment* is a maximal run of non-blocking operators (compute and
//! collective starts) that ends where the stream reaches a wait; the wait opens the stream's
//! next segment. Between two untiled operators (barriers: views joining the streams, operators
//! that could not be split, data-parallel collectives) the segments are emitted round robin:
//! segment j of stream 0, of stream 1, …, of stream K−1, then segment j+1 of each. A stream's
//! collective therefore starts at the end of its segment and is waited for only after every
//! other stream has issued its own segment: it runs under their computation. Each wait still
//! precedes its consumers (they are in its own segment), and each stream is at most one segment
//! ahead of the others, so memory grows by one segment's intermediates per stream, not like an
//! eager operator-by-operator schedule.
//!
//! A collective over untiled data (a data-parallel gradient bucket) is not a barrier: it is
//! issued as soon as its dependencies allow.
//!
//! The wanted order is then made a valid issue order by the list scheduler
//! ([`super::super::schedule`]), which only departs from it where a dependency forces it (an
//! accumulation chain across streams).

use alloc::vec;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;

use crate::graph::validate::GraphError;
use crate::graph::{Graph, NodeKind};
use crate::labs::overlap::schedule::{node_bound, reordered};

/// What the pass did.
#[derive(Clone, Debug)]
pub struct Reordered {
    /// The reordered graph.
    pub graph: Graph,
    /// Segments emitted (over all streams and regions).
    pub segments: usize,
}

/// Reorders the tile streams of `graph` segment by segment, round robin.
///
/// # Errors
/// The validator's error (a bug).
pub fn reorder(graph: &Graph) -> Result<Reordered, GraphError> {
    let streams = graph
        .dag
        .node_indices()
        .filter_map(|n| graph.dag[n].tile.as_ref().map(|t| t.streams))
        .max()
        .unwrap_or(0) as usize;
    let mut priority = vec![u64::MAX; node_bound(graph)];
    let mut next = 0u64;
    let mut segments = 0usize;
    // Per stream: the segments of the current region.
    let mut region: Vec<Vec<Vec<NodeIndex>>> = vec![Vec::new(); streams];
    let flush = |region: &mut Vec<Vec<Vec<NodeIndex>>>,
                 priority: &mut Vec<u64>,
                 next: &mut u64,
                 segments: &mut usize| {
        let longest = region.iter().map(Vec::len).max().unwrap_or(0);
        for j in 0..longest {
            for stream in region.iter() {
                if let Some(segment) = stream.get(j) {
                    *segments += 1;
                    for &n in segment {
                        priority[n.index()] = *next;
                        *next += 1;
                    }
                }
            }
        }
        for stream in region.iter_mut() {
            stream.clear();
        }
    };
    for &n in &graph.order {
        match graph.dag[n].tile.as_ref() {
            Some(tag) if (tag.stream as usize) < streams => {
                let segs = &mut region[tag.stream as usize];
                let is_wait = matches!(graph.dag[n].kind, NodeKind::Wait { .. });
                if segs.is_empty() || is_wait {
                    segs.push(Vec::new());
                }
                if let Some(last) = segs.last_mut() {
                    last.push(n);
                }
            }
            // A collective of untiled data (a data-parallel gradient bucket) is issued as soon
            // as its dependencies allow, without cutting the streams' region.
            _ if matches!(graph.dag[n].kind, NodeKind::CollectiveStart { .. })
                && graph.dag[n].inputs.iter().all(|&t| {
                    graph.tensors[t]
                        .producer
                        .is_none_or(|p| graph.dag[p].tile.is_none())
                }) =>
            {
                priority[n.index()] = 0;
            }
            _ => {
                flush(&mut region, &mut priority, &mut next, &mut segments);
                priority[n.index()] = next;
                next += 1;
            }
        }
    }
    flush(&mut region, &mut priority, &mut next, &mut segments);
    let graph = reordered(graph, &priority)?;
    Ok(Reordered { graph, segments })
}
