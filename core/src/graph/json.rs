//! bubblelab's graph JSON: the IR written out so that graphs captured elsewhere can be
//! scheduled by the overlap lab. Versioned (`"format": "bubblelab-graph", "version": 1`), read
//! through `serde_path_to_error` so that a type error names its path, then checked index by
//! index (tensors, producers, waits, edges, order) with named errors, then by the validator.
//! The schema is documented in `docs/MODEL.md`, "Graph JSON".

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;
use serde::{Deserialize, Serialize};

use super::validate::validate;
use super::{Edge, Graph, GroupSpec, Node, NodeKind, Tensor};

/// The `format` value of a graph file.
pub const FORMAT: &str = "bubblelab-graph";
/// The schema version this build reads and writes.
pub const VERSION: u64 = 1;
/// Most nodes (and tensors) an imported graph may have.
pub const MAX_NODES: usize = 500_000;

/// A graph file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphDoc {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u64,
    /// Communication groups; nodes name them by index.
    pub groups: Vec<GroupSpec>,
    /// Tensors; nodes name them by index, a tensor names its producer node by index.
    pub tensors: Vec<Tensor>,
    /// Nodes, by index.
    pub nodes: Vec<Node>,
    /// Dependencies `[from, to, "Data" | "Control"]` by node index.
    pub edges: Vec<(u32, u32, Edge)>,
    /// Issue order: every node index once.
    pub order: Vec<u32>,
}

/// A bad graph file: the path of the offending value and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphJsonError {
    /// Path inside the document, e.g. `nodes[3].inputs[0]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl core::fmt::Display for GraphJsonError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

fn bad(path: impl Into<String>, message: impl Into<String>) -> GraphJsonError {
    GraphJsonError {
        path: path.into(),
        message: message.into(),
    }
}

/// The graph as a document (node indices renumbered densely in index order).
#[must_use]
pub fn to_doc(g: &Graph) -> GraphDoc {
    let bound = g
        .dag
        .node_indices()
        .map(|n| n.index() + 1)
        .max()
        .unwrap_or(0);
    let mut dense = vec![u32::MAX; bound];
    for (i, n) in g.dag.node_indices().enumerate() {
        dense[n.index()] = i as u32;
    }
    let re = |n: NodeIndex| NodeIndex::new(dense[n.index()] as usize);
    let nodes = g
        .dag
        .node_indices()
        .map(|n| {
            let mut node = g.dag[n].clone();
            if let NodeKind::Wait { start } = node.kind {
                node.kind = NodeKind::Wait { start: re(start) };
            }
            node
        })
        .collect();
    let tensors = g
        .tensors
        .iter()
        .map(|t| {
            let mut t = t.clone();
            t.producer = t.producer.map(re);
            t
        })
        .collect();
    let mut edges: Vec<(u32, u32, Edge)> = g
        .dag
        .edge_indices()
        .filter_map(|e| {
            let (a, b) = g.dag.edge_endpoints(e)?;
            Some((dense[a.index()], dense[b.index()], g.dag[e]))
        })
        .collect();
    edges.sort_by_key(|&(a, b, _)| (a, b));
    GraphDoc {
        format: FORMAT.into(),
        version: VERSION,
        groups: g.groups.clone(),
        tensors,
        nodes,
        edges,
        order: g.order.iter().map(|n| dense[n.index()]).collect(),
    }
}

/// The graph as indented JSON.
#[must_use]
pub fn to_json(g: &Graph) -> String {
    serde_json::to_string_pretty(&to_doc(g)).unwrap_or_default()
}

/// Reads a graph from JSON text.
///
/// # Errors
/// A [`GraphJsonError`] naming the path (`(json)` for a syntax error).
pub fn from_json(text: &str) -> Result<Graph, GraphJsonError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        bad(
            "(json)",
            format!("line {}, column {}: not valid JSON", e.line(), e.column()),
        )
    })?;
    from_value(&value)
}

/// Reads and checks a graph document.
///
/// # Errors
/// A [`GraphJsonError`] naming the path of the first problem.
#[allow(clippy::too_many_lines)] // one pass over the document, one arm per field, so each error names its path
pub fn from_value(value: &serde_json::Value) -> Result<Graph, GraphJsonError> {
    match value.get("format") {
        Some(serde_json::Value::String(f)) if f == FORMAT => {}
        other => {
            return Err(bad(
                "format",
                format!(
                    "expected \"{FORMAT}\", got {}",
                    other.map_or_else(|| "nothing".to_string(), ToString::to_string)
                ),
            ))
        }
    }
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(VERSION) => {}
        _ => {
            return Err(bad(
                "version",
                format!(
                    "this build reads graph version {VERSION}, got {}",
                    value
                        .get("version")
                        .map_or_else(|| "nothing".to_string(), ToString::to_string)
                ),
            ))
        }
    }
    let doc: GraphDoc = serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        bad(
            if path == "." {
                String::from("(top level)")
            } else {
                path
            },
            e.into_inner().to_string(),
        )
    })?;
    let (nn, nt, ng) = (doc.nodes.len(), doc.tensors.len(), doc.groups.len());
    if nn > MAX_NODES || nt > MAX_NODES {
        return Err(bad(
            "nodes",
            format!("at most {MAX_NODES} nodes and tensors, got {nn} and {nt}"),
        ));
    }
    for (i, t) in doc.tensors.iter().enumerate() {
        if let Some(p) = t.producer {
            if p.index() >= nn {
                return Err(bad(
                    format!("tensors[{i}].producer"),
                    format!("node {} does not exist ({nn} nodes)", p.index()),
                ));
            }
        }
    }
    for (i, node) in doc.nodes.iter().enumerate() {
        for (j, &t) in node.inputs.iter().enumerate() {
            if t >= nt {
                return Err(bad(
                    format!("nodes[{i}].inputs[{j}]"),
                    format!("tensor {t} does not exist ({nt} tensors)"),
                ));
            }
        }
        for (j, &t) in node.outputs.iter().enumerate() {
            if t >= nt {
                return Err(bad(
                    format!("nodes[{i}].outputs[{j}]"),
                    format!("tensor {t} does not exist ({nt} tensors)"),
                ));
            }
        }
        match &node.kind {
            NodeKind::Wait { start } if start.index() >= nn => {
                return Err(bad(
                    format!("nodes[{i}].kind.Wait.start"),
                    format!("node {} does not exist ({nn} nodes)", start.index()),
                ));
            }
            NodeKind::CollectiveStart { group, .. } if *group >= ng => {
                return Err(bad(
                    format!("nodes[{i}].kind.CollectiveStart.group"),
                    format!("group {group} does not exist ({ng} groups)"),
                ));
            }
            NodeKind::Compute(w)
                if !(w.flops.is_finite()
                    && w.bytes.is_finite()
                    && w.flops >= 0.0
                    && w.bytes >= 0.0) =>
            {
                return Err(bad(
                    format!("nodes[{i}].kind.Compute"),
                    "flops and bytes must be finite and ≥ 0",
                ));
            }
            _ => {}
        }
    }
    for (i, &(a, b, _)) in doc.edges.iter().enumerate() {
        if a as usize >= nn || b as usize >= nn {
            return Err(bad(
                format!("edges[{i}]"),
                format!("names node {} but the graph has {nn}", a.max(b)),
            ));
        }
        if a == b {
            return Err(bad(format!("edges[{i}]"), "a node cannot depend on itself"));
        }
    }
    for (i, &n) in doc.order.iter().enumerate() {
        if n as usize >= nn {
            return Err(bad(
                format!("order[{i}]"),
                format!("node {n} does not exist ({nn} nodes)"),
            ));
        }
    }
    let mut g = Graph::new();
    g.groups = doc.groups;
    g.tensors = doc.tensors;
    for node in doc.nodes {
        g.dag.add_node(node);
    }
    for (a, b, e) in doc.edges {
        let (a, b) = (NodeIndex::new(a as usize), NodeIndex::new(b as usize));
        if !g.dag.contains_edge(a, b) {
            g.dag.add_edge(a, b, e);
        }
    }
    g.order = doc
        .order
        .into_iter()
        .map(|n| NodeIndex::new(n as usize))
        .collect();
    validate(&g).map_err(|e| bad("(graph)", e.to_string()))?;
    Ok(g)
}
