//! The graph validator: separate from every pass, it says precisely what is wrong, naming the
//! node. Every pass's output must pass it; property tests use it as their oracle.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef, IntoEdgeReferences};
use petgraph::Direction;

use super::{Graph, NodeKind};
use crate::cost::CollectiveKind;

/// What is wrong with a graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphError {
    /// The node (or tensor/group) concerned, by name.
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl core::fmt::Display for GraphError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

fn err(at: impl Into<String>, message: impl Into<String>) -> GraphError {
    GraphError {
        at: at.into(),
        message: message.into(),
    }
}

/// Checks that the graph is well formed:
///
/// * `order` lists every node exactly once and is a topological order of the edges (so the
///   graph is acyclic);
/// * every wait follows exactly one collective start (with an edge from it), and every start has
///   exactly one wait;
/// * every tensor a node reads exists and is produced earlier on a path of edges (directly by a
///   data edge from its producer);
/// * every collective names an existing group with a consistent size: ranks ≥ 1, ranks per node
///   between 1 and ranks, a message of at least one byte, and an output size that fits the
///   collective (AllGather: input × ranks; ReduceScatter: input / ranks; AllReduce, AllToAll,
///   SendRecv: equal to the input).
///
/// # Errors
/// The first problem found, naming the node.
#[allow(clippy::too_many_lines)] // one check per graph invariant, in order, each naming its node
pub fn validate(graph: &Graph) -> Result<(), GraphError> {
    let name = |n: NodeIndex| {
        graph
            .dag
            .node_weight(n)
            .map_or_else(|| format!("node {}", n.index()), |w| w.name.clone())
    };
    // Order: every node once, edges go forward.
    let bound = graph
        .dag
        .node_indices()
        .map(|n| n.index() + 1)
        .max()
        .unwrap_or(0);
    let mut position = vec![usize::MAX; bound];
    for (i, &n) in graph.order.iter().enumerate() {
        if graph.dag.node_weight(n).is_none() {
            return Err(err(
                format!("order[{i}]"),
                format!("names node {} that is not in the graph", n.index()),
            ));
        }
        if position[n.index()] != usize::MAX {
            return Err(err(name(n), "appears twice in the issue order"));
        }
        position[n.index()] = i;
    }
    if let Some(missing) = graph
        .dag
        .node_indices()
        .find(|n| position[n.index()] == usize::MAX)
    {
        return Err(err(name(missing), "is missing from the issue order"));
    }
    for edge in (&graph.dag).edge_references() {
        if position[edge.source().index()] >= position[edge.target().index()] {
            return Err(err(
                name(edge.target()),
                format!(
                    "is issued before {}, which it depends on (a cycle or a bad order)",
                    name(edge.source())
                ),
            ));
        }
    }
    // Collectives and waits pair up.
    let mut waits_of = vec![0u32; bound];
    for n in graph.dag.node_indices() {
        if let NodeKind::Wait { start } = graph.dag[n].kind {
            match graph.dag.node_weight(start).map(|w| &w.kind) {
                Some(NodeKind::CollectiveStart { .. }) => {}
                _ => {
                    return Err(err(
                        name(n),
                        "waits on a node that is not a collective start",
                    ))
                }
            }
            if !graph.dag.contains_edge(start, n) {
                return Err(err(
                    name(n),
                    format!("has no edge from its collective {}", name(start)),
                ));
            }
            waits_of[start.index()] += 1;
        }
    }
    for n in graph.dag.node_indices() {
        if let NodeKind::CollectiveStart { kind, group, bytes } = graph.dag[n].kind {
            match waits_of[n.index()] {
                1 => {}
                0 => {
                    return Err(err(
                        name(n),
                        "has no wait: its result never reaches the compute stream",
                    ))
                }
                k => {
                    return Err(err(
                        name(n),
                        format!("has {k} waits; exactly one is allowed"),
                    ))
                }
            }
            let Some(spec) = graph.groups.get(group) else {
                return Err(err(
                    name(n),
                    format!(
                        "names group {group}, but the graph has {}",
                        graph.groups.len()
                    ),
                ));
            };
            if spec.ranks == 0 || spec.ranks_per_node == 0 || spec.ranks_per_node > spec.ranks {
                return Err(err(
                    format!("group {}", spec.name),
                    format!(
                        "needs 1 ≤ ranks per node ≤ ranks, got {} of {}",
                        spec.ranks_per_node, spec.ranks
                    ),
                ));
            }
            if bytes == 0 {
                return Err(err(name(n), "moves 0 bytes"));
            }
            check_sizes(graph, n, kind, spec.ranks)?;
        }
    }
    // Tensors: produced before they are read, along an edge.
    for n in graph.dag.node_indices() {
        for &t in &graph.dag[n].inputs {
            let Some(tensor) = graph.tensors.get(t) else {
                return Err(err(
                    name(n),
                    format!("reads tensor {t}, which does not exist"),
                ));
            };
            if let Some(producer) = tensor.producer {
                if producer == n {
                    return Err(err(
                        name(n),
                        format!("reads {}, which it writes itself", tensor.name),
                    ));
                }
                let direct = graph
                    .dag
                    .edges_directed(n, Direction::Incoming)
                    .any(|e| e.source() == producer);
                if !direct {
                    return Err(err(
                        name(n),
                        format!(
                            "reads {} without an edge from its producer {}",
                            tensor.name,
                            name(producer)
                        ),
                    ));
                }
            }
        }
        for &t in &graph.dag[n].outputs {
            if graph.tensors.get(t).and_then(|t| t.producer) != Some(n) {
                return Err(err(
                    name(n),
                    format!("lists tensor {t} as output, but the tensor names another producer"),
                ));
            }
        }
    }
    Ok(())
}

/// Output size must fit the collective.
fn check_sizes(
    graph: &Graph,
    start: NodeIndex,
    kind: CollectiveKind,
    ranks: u32,
) -> Result<(), GraphError> {
    let node = &graph.dag[start];
    let [input] = node.inputs[..] else {
        return Err(err(
            node.name.clone(),
            format!("must read exactly one tensor, reads {}", node.inputs.len()),
        ));
    };
    let Some(wait) = graph
        .dag
        .neighbors_directed(start, Direction::Outgoing)
        .find(|&w| matches!(graph.dag[w].kind, NodeKind::Wait { start: s } if s == start))
    else {
        return Ok(());
    };
    let outputs: Vec<u64> = graph.dag[wait]
        .outputs
        .iter()
        .filter_map(|&t| graph.tensors.get(t).map(|t| t.bytes))
        .collect();
    let [out] = outputs[..] else { return Ok(()) };
    let inp = graph.tensors.get(input).map_or(0, |t| t.bytes);
    let p = u64::from(ranks);
    let expected = match kind {
        CollectiveKind::AllGather => inp * p,
        CollectiveKind::ReduceScatter => inp / p,
        CollectiveKind::AllReduce | CollectiveKind::AllToAll | CollectiveKind::SendRecv => inp,
    };
    if out != expected {
        return Err(err(
            node.name.clone(),
            format!("{kind:?} on {ranks} ranks turns {inp} bytes into {out}, expected {expected}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::{ComputeKind, ComputeWork};

    fn work() -> ComputeWork {
        ComputeWork {
            kind: ComputeKind::Gemm,
            flops: 1e9,
            bytes: 1e6,
        }
    }

    fn small() -> Graph {
        let mut g = Graph::new();
        let tp = g.add_group("tp", 2, 2);
        let x = g.add_input("x", 100, false);
        let y = g.compute("mm", work(), &[x], 100);
        let (_, _, z) = g.collective("ar", CollectiveKind::AllReduce, tp, 100, y, 100);
        g.compute("add", work(), &[z], 100);
        g
    }

    #[test]
    fn a_well_formed_graph_passes() {
        validate(&small()).unwrap();
    }

    #[test]
    fn each_rule_names_the_node() {
        let mut g = small();
        g.order.swap(0, 1);
        assert!(validate(&g).unwrap_err().message.contains("issued before"));

        let mut g = small();
        let last = g.order.pop().unwrap();
        assert_eq!(
            validate(&g).unwrap_err(),
            GraphError {
                at: g.dag[last].name.clone(),
                message: "is missing from the issue order".into()
            }
        );

        let mut g = small();
        let wait = g.order[2];
        let start = g.order[1];
        let edge = g.dag.find_edge(start, wait).unwrap();
        g.dag.remove_edge(edge);
        assert!(validate(&g)
            .unwrap_err()
            .message
            .contains("no edge from its collective"));

        let mut g = small();
        let (s2, _) = g.add_node(
            "ar2",
            NodeKind::CollectiveStart {
                kind: CollectiveKind::AllReduce,
                group: 0,
                bytes: 8,
            },
            &[0],
            &[],
        );
        let e = validate(&g).unwrap_err();
        assert_eq!(e.at, g.dag[s2].name);
        assert!(e.message.contains("no wait"));

        let mut g = small();
        let x = g.tensors.len();
        g.add_input("w", 4, true);
        let (_, _, _) = g.collective("ag", CollectiveKind::AllGather, 0, 8, x, 4);
        assert!(validate(&g).unwrap_err().message.contains("expected 8"));

        let mut g = small();
        g.groups[0].ranks_per_node = 3;
        assert!(validate(&g).unwrap_err().message.contains("ranks per node"));
    }
}
