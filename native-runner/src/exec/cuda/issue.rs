//! The host's issue sequence for a plan, as data: which stream waits for which node's end
//! event, when each tensor is allocated and freed, in what order. The CUDA executor turns each
//! [`Step`] into one driver call; keeping the sequence pure lets it be tested without a GPU.
//!
//! Nodes are issued in the graph's issue order (a topological order, so every dependency's end
//! event is recorded before anyone waits on it). For each node: its stream waits for the end
//! event of every predecessor on another stream; its start event is recorded; the tensors it
//! gives birth to (the ledger rule, [`Lifetimes`]) are allocated on its stream; its work is
//! launched; its end event is recorded. Once the last reader of a tensor has been issued, the
//! release stream waits for the end events of all the tensor's readers and frees it. Graph
//! inputs are allocated before the first node; tensors nobody reads are freed after the run.

use petgraph::stable_graph::NodeIndex;

use bubblelab_core::graph::TensorId;

use crate::exec::{predecessors, ExecError, Lifetimes, Plan};

/// One host-side step of issuing a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Plan stream `stream` waits for the end event of `node` (a node of another stream).
    WaitFor {
        /// The waiting stream.
        stream: usize,
        /// The node whose end is waited for.
        node: NodeIndex,
    },
    /// `node`'s start event is recorded on its stream.
    Start(NodeIndex),
    /// `tensor` is allocated, stream-ordered, on plan stream `stream`.
    Alloc {
        /// The allocating stream.
        stream: usize,
        /// The tensor.
        tensor: TensorId,
    },
    /// `node`'s work is launched on its stream.
    Launch(NodeIndex),
    /// `node`'s end event is recorded on its stream.
    End(NodeIndex),
    /// The release stream waits for the end event of `node`.
    ReleaseAfter(NodeIndex),
    /// `tensor` is freed on the release stream.
    Free(TensorId),
}

/// The issue sequence of `plan` under `lifetimes`.
///
/// # Errors
/// A node without a valid stream, or one issued before a dependency on another stream.
pub fn issue_steps(plan: &Plan, lifetimes: &Lifetimes) -> Result<Vec<Step>, ExecError> {
    let graph = &plan.graph;
    let preds = predecessors(graph);
    let stream_of = |n: NodeIndex| -> Result<usize, ExecError> {
        plan.stream_of
            .get(n.index())
            .copied()
            .filter(|&s| s < plan.streams.len())
            .ok_or_else(|| {
                ExecError(format!(
                    "plan {}: node {} has no stream among the {} streams",
                    plan.name,
                    graph.dag[n].name,
                    plan.streams.len()
                ))
            })
    };
    let mut issued = vec![false; preds.len()];
    let mut readers_left: Vec<usize> = lifetimes.readers.iter().map(Vec::len).collect();
    let mut steps = Vec::new();
    for &n in &graph.order {
        if !graph.dag.contains_node(n) {
            return Err(ExecError(format!(
                "plan {}: the issue order names node {}, which does not exist",
                plan.name,
                n.index()
            )));
        }
        let s = stream_of(n)?;
        for &p in &preds[n.index()] {
            if !issued[p.index()] {
                return Err(ExecError(format!(
                    "plan {}: {} is issued before its dependency {}",
                    plan.name, graph.dag[n].name, graph.dag[p].name
                )));
            }
            if stream_of(p)? != s {
                steps.push(Step::WaitFor { stream: s, node: p });
            }
        }
        steps.push(Step::Start(n));
        steps.extend(
            lifetimes.born_at[n.index()]
                .iter()
                .map(|&tensor| Step::Alloc { stream: s, tensor }),
        );
        steps.push(Step::Launch(n));
        steps.push(Step::End(n));
        issued[n.index()] = true;
        for &t in &graph.dag[n].inputs {
            if graph.tensors[t].persistent || readers_left[t] == 0 {
                continue;
            }
            readers_left[t] -= 1;
            if readers_left[t] == 0 {
                let mut readers = lifetimes.readers[t].clone();
                readers.sort_unstable();
                readers.dedup();
                steps.extend(readers.into_iter().map(Step::ReleaseAfter));
                steps.push(Step::Free(t));
            }
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bubblelab_core::graph::Graph;
    use bubblelab_core::labs::overlap::OverlapParams;
    use bubblelab_core::scenario::KeepsRuns;

    /// Checks the executor's ordering rules on a plan's issue sequence.
    fn check(plan: &Plan) {
        let graph = &plan.graph;
        let lifetimes = Lifetimes::new(graph).expect("valid graph");
        let steps = issue_steps(plan, &lifetimes).expect("issue");
        let at = |step: Step| steps.iter().position(|&s| s == step);
        let preds = predecessors(graph);
        for &n in &graph.order {
            let (start, launch, end) = (
                at(Step::Start(n)).expect("start"),
                at(Step::Launch(n)).expect("launch"),
                at(Step::End(n)).expect("end"),
            );
            assert!(start < launch && launch < end, "{}", graph.dag[n].name);
            let s = plan.stream_of[n.index()];
            for &p in &preds[n.index()] {
                let wait = at(Step::WaitFor { stream: s, node: p });
                if plan.stream_of[p.index()] == s {
                    assert_eq!(wait, None, "same stream: ordered by the stream itself");
                } else {
                    let wait = wait.expect("cross-stream dependency waited for");
                    assert!(at(Step::End(p)).expect("dep end") < wait && wait < start);
                }
            }
            for &t in &lifetimes.born_at[n.index()] {
                let alloc = at(Step::Alloc {
                    stream: s,
                    tensor: t,
                })
                .expect("alloc");
                assert!(
                    start < alloc && alloc < launch,
                    "born at its producer's start"
                );
            }
        }
        for (t, readers) in lifetimes.readers.iter().enumerate() {
            let frees = steps.iter().filter(|&&s| s == Step::Free(t)).count();
            if graph.tensors[t].persistent || readers.is_empty() {
                assert_eq!(frees, 0, "{}", graph.tensors[t].name);
                continue;
            }
            assert_eq!(frees, 1, "{}", graph.tensors[t].name);
            let free = at(Step::Free(t)).expect("free");
            for &r in readers {
                // The release stream waits for this reader after it was issued, before the free.
                let waited = steps[..free]
                    .iter()
                    .rposition(|&s| s == Step::ReleaseAfter(r))
                    .expect("release waits for every reader");
                assert!(at(Step::End(r)).expect("reader end") < waited);
            }
        }
    }

    #[test]
    fn overlap_strategies_issue_in_a_valid_order() {
        let run = OverlapParams::default()
            .simulate(&(), &mut |_, _| {})
            .expect("overlap")
            .runs;
        for (strategy, graph, _) in run.strategies {
            let plan = Plan::simulator_streams(strategy.label(), graph);
            assert!(plan.streams.len() >= 2, "{}", strategy.label());
            check(&plan);
        }
    }

    #[test]
    fn pipeline_stages_wait_for_each_other() {
        let plan = crate::validate::pipeline_plan(4, 8, 64);
        check(&plan);
        let lifetimes = Lifetimes::new(&plan.graph).expect("valid");
        let steps = issue_steps(&plan, &lifetimes).expect("issue");
        // Each forward of stage s > 0 waits for stage s − 1: 3 · 8 forward hand-offs, and as
        // many backward ones.
        let waits = steps
            .iter()
            .filter(|s| matches!(s, Step::WaitFor { .. }))
            .count();
        assert_eq!(waits, 2 * 3 * 8);
    }

    #[test]
    fn a_node_issued_before_its_dependency_is_refused() {
        let mut g = Graph::new();
        let x = g.add_input("x", 16, false);
        let work = bubblelab_core::cost::ComputeWork {
            kind: bubblelab_core::cost::ComputeKind::MemoryBound,
            flops: 0.0,
            bytes: 32.0,
        };
        let y = g.compute("a", work, &[x], 16);
        g.compute("b", work, &[y], 16);
        g.order.reverse();
        let plan = Plan::simulator_streams("backwards", g);
        let lifetimes = Lifetimes::new(&plan.graph).expect("valid");
        let e = issue_steps(&plan, &lifetimes).expect_err("bad order");
        assert!(e.0.contains("b is issued before its dependency a"), "{e}");
        let mut bad = plan.clone();
        bad.stream_of[0] = 7;
        bad.graph.order.reverse();
        let e = issue_steps(&bad, &lifetimes).expect_err("bad stream");
        assert!(
            e.0.contains("node a has no stream among the 1 streams"),
            "{e}"
        );
    }
}
