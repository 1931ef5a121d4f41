#![cfg(not(target_arch = "wasm32"))]
//! The overlap lab's passes keep the math: for random small models and layouts (TP with or
//! without sequence parallelism, Ulysses context parallelism, MoE expert parallelism, data
//! parallelism), forward or forward + backward, the numeric interpreter gives the same outputs
//! for the graph as built, after each Helix pass and for the serial, eager and AsyncTP-style
//! baselines; every output validates; bucketing never exceeds its budget. And the oracle can
//! fail: broken passes (a swapped tile, a dropped accumulation, a dropped dependency) are
//! caught.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::cost::CostModel;
use bubblelab_core::cost::{CollectiveKind, ComputeKind, ComputeWork};
use bubblelab_core::graph::build::{build, Mlp, ModelSpec, Moe, Parallelism, Workload};
use bubblelab_core::graph::validate::validate;
use bubblelab_core::graph::{Dim, Edge, Graph, NodeKind, Op};
use bubblelab_core::hw::GpuKind;
use bubblelab_core::labs::overlap::baselines::async_tp::{async_tp, Fused};
use bubblelab_core::labs::overlap::baselines::{eager::eager, serial::serial};
use bubblelab_core::labs::overlap::interp::{interpret, max_difference};
use bubblelab_core::labs::overlap::passes::{bucket::bucket, reorder::reorder, tile::tile};
use proptest::prelude::*;

const TOLERANCE: f32 = 1e-4;

#[derive(Debug, Clone)]
struct Case {
    model: ModelSpec,
    par: Parallelism,
    work: Workload,
    k: u32,
    dim: Dim,
}

fn case() -> impl Strategy<Value = Case> {
    (
        (
            prop::sample::select(vec![2u64, 4]),
            prop::sample::select(vec![2u64, 4]),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        (
            prop::sample::select(vec![1u32, 2]),
            any::<bool>(),
            prop::sample::select(vec![1u32, 2]),
            any::<bool>(),
            prop::sample::select(vec![1u32, 2]),
        ),
        (
            prop::sample::select(vec![2u64, 4]),
            prop::sample::select(vec![4u64, 8]),
            1u32..=2,
            any::<bool>(),
        ),
        (prop::sample::select(vec![2u32, 4]), any::<bool>()),
    )
        .prop_map(
            |(
                (heads, head_dim, gqa, swiglu, moe),
                (tp, sp, ep, ulysses, dp),
                (mb, seq, layers, backward),
                (k, seq_dim),
            )| {
                let kv_heads = if gqa { heads / 2 } else { heads };
                let model = ModelSpec {
                    hidden: heads * head_dim,
                    heads,
                    kv_heads,
                    head_dim,
                    ffn: 8,
                    layers: u64::from(layers),
                    vocab: 0,
                    mlp: if swiglu || moe {
                        Mlp::SwiGlu
                    } else {
                        Mlp::Gelu
                    },
                    moe: moe.then_some(Moe {
                        experts: 4,
                        top_k: 2,
                        expert_ffn: 4,
                    }),
                };
                // Ulysses over 2 ranks where every rank keeps whole query and KV heads.
                let t = u64::from(tp);
                let cp = if ulysses && (heads / t) % 2 == 0 && (kv_heads / t).max(1) % 2 == 0 {
                    2
                } else {
                    1
                };
                let par = Parallelism {
                    tp,
                    sp: sp && tp > 1,
                    cp,
                    ep: if moe { ep } else { 1 },
                    dp,
                    ..Parallelism::default()
                };
                let work = Workload {
                    layers,
                    micro_batch: mb,
                    seq_len: seq,
                    backward,
                    dtype_bytes: 2,
                    whole_step: false,
                };
                let dim = if seq_dim { Dim::Sequence } else { Dim::Batch };
                let k = if dim == Dim::Batch {
                    k.min(mb as u32)
                } else {
                    2
                };
                Case {
                    model,
                    par,
                    work,
                    k,
                    dim,
                }
            },
        )
}

fn same(original: &Graph, other: &Graph, what: &str) -> Result<(), TestCaseError> {
    validate(other).map_err(|e| TestCaseError::fail(format!("{what}: invalid: {e}")))?;
    let a = interpret(original).map_err(|e| TestCaseError::fail(format!("original: {e}")))?;
    let b = interpret(other).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
    prop_assert!(!a.is_empty());
    let d = max_difference(&a, &b).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
    prop_assert!(d <= TOLERANCE, "{what}: outputs differ by {d}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn passes_and_baselines_keep_the_math(c in case()) {
        let g = build(&c.model, &c.par, &c.work).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let cost = CostModel::new(GpuKind::H100);
        let tiled = tile(&g, c.k, c.dim).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if c.dim == Dim::Batch {
            prop_assert!(tiled.refused.is_empty(), "{:?}", tiled.refused);
        }
        same(&g, &tiled.graph, "tile")?;
        let reordered = reorder(&tiled.graph).map_err(|e| TestCaseError::fail(e.to_string()))?;
        same(&g, &reordered.graph, "reorder")?;
        let bucketed = bucket(&reordered.graph, &cost, None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        same(&g, &bucketed.graph, "bucket")?;
        // Every candidate merged at once still computes the same.
        let all = bubblelab_core::labs::overlap::passes::bucket::candidates(&reordered.graph);
        let refs: Vec<_> = all.iter().collect();
        if let Some(merged) = bubblelab_core::labs::overlap::passes::bucket::merge(&reordered.graph, &refs)
            .map_err(|e| TestCaseError::fail(e.to_string()))? {
            same(&g, &merged, "merge all")?;
        }
        same(&g, &serial(&g).map_err(|e| TestCaseError::fail(e.to_string()))?, "serial")?;
        same(&g, &eager(&g).map_err(|e| TestCaseError::fail(e.to_string()))?, "eager")?;
        let (chunked, fused) = async_tp(&g).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // Sequence parallelism gives the AllGather→GEMM and GEMM→ReduceScatter patterns: in a
        // dense layer two of each in the forward and two of each in the backward.
        prop_assert_eq!(fused.collectives() > 0, c.par.sp, "{:?}", fused);
        if c.par.sp && c.model.moe.is_none() {
            let per_pass = 2 * c.work.layers as usize * (1 + usize::from(c.work.backward));
            prop_assert_eq!(fused.all_gathers, per_pass, "{:?}", fused);
            prop_assert_eq!(fused.gathered_gemms, per_pass, "{:?}", fused);
            prop_assert_eq!(fused.reduce_scatters, per_pass, "{:?}", fused);
        }
        same(&g, &chunked, "async_tp")?;
    }

    #[test]
    fn whole_steps_stay_valid_under_every_strategy(c in case()) {
        // The interpreter does not run whole steps (the embedding, loss and optimizer carry no
        // op semantics), so this checks structure: every strategy's graph validates, and in
        // training AsyncTP also fuses the head's AllGather (forward) and its ReduceScatter
        // (backward).
        let model = ModelSpec { vocab: 200, ..c.model };
        let work = Workload { whole_step: true, ..c.work };
        let g = build(&model, &c.par, &work).map_err(|e| TestCaseError::fail(e.to_string()))?;
        validate(&g).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let cost = CostModel::new(GpuKind::H100);
        let tiled = tile(&g, c.k, c.dim).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let reordered = reorder(&tiled.graph).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let bucketed = bucket(&reordered.graph, &cost, None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (what, other) in [
            ("tile", &tiled.graph),
            ("reorder", &reordered.graph),
            ("bucket", &bucketed.graph),
        ] {
            validate(other).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
        }
        validate(&serial(&g).map_err(|e| TestCaseError::fail(e.to_string()))?).map_err(|e| TestCaseError::fail(e.to_string()))?;
        validate(&eager(&g).map_err(|e| TestCaseError::fail(e.to_string()))?).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (chunked, fused) = async_tp(&g).map_err(|e| TestCaseError::fail(e.to_string()))?;
        validate(&chunked).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if c.par.sp && c.model.moe.is_none() {
            let per_pass = 2 * c.work.layers as usize * (1 + usize::from(c.work.backward));
            // A prefill's head reads the last positions (a slice), not the gathered tensor.
            let head = usize::from(c.work.backward);
            prop_assert_eq!(fused.all_gathers, per_pass + head, "{:?}", fused);
            prop_assert_eq!(fused.reduce_scatters, per_pass + head, "{:?}", fused);
        }
    }

    #[test]
    fn bucketing_never_exceeds_the_budget(c in case(), fraction in 0.5f64..1.5) {
        let mut work = c.work;
        work.backward = true;
        let g = build(&c.model, &c.par, &work).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let cost = CostModel::new(GpuKind::H100);
        let tiled = tile(&g, c.k.min(work.micro_batch as u32), Dim::Batch).map_err(|e| TestCaseError::fail(e.to_string()))?;
        validate(&tiled.graph).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let r = reorder(&tiled.graph).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let base = bubblelab_core::graph::sim::simulate(&r.graph, &cost).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let budget = (base.peak_bytes as f64 * fraction) as u64;
        let b = bucket(&r.graph, &cost, Some(budget)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        validate(&b.graph).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let sim = bubblelab_core::graph::sim::simulate(&b.graph, &cost).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(sim.peak_bytes, b.result.peak_bytes);
        if b.chosen.is_empty() {
            prop_assert_eq!(sim.peak_bytes, base.peak_bytes);
        } else {
            prop_assert!(sim.peak_bytes <= budget, "peak {} over budget {}", sim.peak_bytes, budget);
            prop_assert!(sim.makespan_ns < base.makespan_ns);
        }
    }
}

#[test]
fn the_interpreter_sees_a_changed_graph() {
    // The oracle can fail: dropping the residual of a layer changes the outputs.
    let model = ModelSpec {
        hidden: 8,
        heads: 2,
        kv_heads: 2,
        head_dim: 4,
        ffn: 8,
        layers: 1,
        vocab: 0,
        mlp: Mlp::Gelu,
        moe: None,
    };
    let work = Workload {
        layers: 1,
        micro_batch: 2,
        seq_len: 4,
        backward: false,
        dtype_bytes: 2,
        whole_step: false,
    };
    let g = build(&model, &Parallelism::default(), &work).unwrap();
    let mut h = g.clone();
    let add = h
        .order
        .iter()
        .copied()
        .find(|&n| h.dag[n].name == "L0.residual2")
        .unwrap();
    h.dag[add].op = Some(bubblelab_core::graph::Op::Gelu);
    let d = max_difference(&interpret(&g).unwrap(), &interpret(&h).unwrap()).unwrap();
    assert!(d > 1e-3, "{d}");
}

#[test]
fn sequence_tiling_refuses_attention_by_name() {
    let model = ModelSpec {
        hidden: 8,
        heads: 2,
        kv_heads: 2,
        head_dim: 4,
        ffn: 8,
        layers: 1,
        vocab: 0,
        mlp: Mlp::SwiGlu,
        moe: None,
    };
    let work = Workload {
        layers: 1,
        micro_batch: 1,
        seq_len: 8,
        backward: false,
        dtype_bytes: 2,
        whole_step: false,
    };
    let g = build(&model, &Parallelism::default(), &work).unwrap();
    let t = tile(&g, 2, Dim::Sequence).unwrap();
    assert_eq!(t.refused.len(), 1, "{:?}", t.refused);
    assert_eq!(t.refused[0].node, "L0.attention");
    assert!(t.refused[0]
        .reason
        .contains("attention reduces over the sequence"));
    assert!(t.tiled_ops > 0);
}

/// A small training graph: one GELU layer, TP = 2 with sequence parallelism, DP = 2.
fn small_training_graph() -> Graph {
    let model = ModelSpec {
        hidden: 8,
        heads: 2,
        kv_heads: 2,
        head_dim: 4,
        ffn: 8,
        layers: 1,
        vocab: 0,
        mlp: Mlp::Gelu,
        moe: None,
    };
    let par = Parallelism {
        tp: 2,
        sp: true,
        dp: 2,
        ..Parallelism::default()
    };
    let work = Workload {
        layers: 1,
        micro_batch: 2,
        seq_len: 4,
        backward: true,
        dtype_bytes: 2,
        whole_step: false,
    };
    build(&model, &par, &work).unwrap()
}

fn node(g: &Graph, name: &str) -> petgraph::stable_graph::NodeIndex {
    g.dag
        .node_indices()
        .find(|&n| g.dag[n].name == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

fn differs(a: &Graph, b: &Graph) -> f32 {
    max_difference(&interpret(a).unwrap(), &interpret(b).unwrap()).unwrap()
}

#[test]
fn a_swapped_tile_is_caught() {
    // A broken tiling: the two tiles of fc1 read each other's half of the batch. The graph is
    // still valid (the edges are there), but the outputs are not the same.
    let g = small_training_graph();
    let tiled = tile(&g, 2, Dim::Batch).unwrap().graph;
    assert!(differs(&g, &tiled) <= TOLERANCE);
    let mut broken = tiled.clone();
    let (a, b) = (node(&broken, "L0.fc1#t0"), node(&broken, "L0.fc1#t1"));
    let (xa, xb) = (broken.dag[a].inputs[0], broken.dag[b].inputs[0]);
    broken.dag[a].inputs[0] = xb;
    broken.dag[b].inputs[0] = xa;
    for (n, t) in [(a, xb), (b, xa)] {
        let producer = broken.tensors[t].producer.unwrap();
        broken.dag.add_edge(producer, n, Edge::Data);
    }
    validate(&broken).unwrap();
    let d = differs(&g, &broken);
    assert!(d > 1e-2, "a swapped tile went unnoticed ({d})");
}

#[test]
fn a_dropped_accumulation_is_caught() {
    // A broken tiling of a weight gradient: the second tile forgets the first tile's partial
    // sum, so the gradient holds only half of the batch.
    let g = small_training_graph();
    let mut broken = tile(&g, 2, Dim::Batch).unwrap().graph;
    let last = node(&broken, "L0.fc2.wgrad#t1");
    assert_eq!(broken.dag[last].op, Some(Op::WeightGrad));
    assert_eq!(broken.dag[last].inputs.len(), 3);
    broken.dag[last].inputs.pop();
    validate(&broken).unwrap();
    let name = "L0.fc2.wgrad".to_string();
    let (a, b) = (interpret(&g).unwrap(), interpret(&broken).unwrap());
    let one = |o: &bubblelab_core::labs::overlap::interp::Outputs| {
        [(name.clone(), o[&name].clone())].into_iter().collect()
    };
    let d = max_difference(&one(&a), &one(&b)).unwrap();
    assert!(d > 1e-2, "a dropped partial sum went unnoticed ({d})");
}

#[test]
fn a_swapped_bucket_is_caught() {
    // A broken bucketing: the merged operator's output views hand the streams each other's
    // half.
    let g = small_training_graph();
    let r = reorder(&tile(&g, 2, Dim::Batch).unwrap().graph)
        .unwrap()
        .graph;
    let cands = bubblelab_core::labs::overlap::passes::bucket::candidates(&r);
    let fc1 = cands
        .iter()
        .find(|c| c.role == "fc1")
        .expect("fc1 is a candidate");
    let mut broken = bubblelab_core::labs::overlap::passes::bucket::merge(&r, &[fc1])
        .unwrap()
        .unwrap();
    assert!(differs(&g, &broken) <= TOLERANCE);
    for n in broken.order.clone() {
        let view = &mut broken.dag[n];
        if let (true, Some(Op::Slice { index, .. })) =
            (view.name.starts_with("L0.fc1.out0.slice"), &mut view.op)
        {
            *index = 1 - *index;
        }
    }
    validate(&broken).unwrap();
    let d = differs(&g, &broken);
    assert!(d > 1e-2, "swapped merged halves went unnoticed ({d})");
}

#[test]
fn a_dropped_dependency_is_caught() {
    // A broken reordering that dropped the dependency of a collective on its input: the start
    // is issued before the GEMM whose output it reduces. The interpreter, which does not
    // validate, refuses to read a tensor before it is written (and so does the validator).
    let g = small_training_graph();
    let mut broken = reorder(&tile(&g, 2, Dim::Batch).unwrap().graph)
        .unwrap()
        .graph;
    let start = node(&broken, "L0.sp_reducescatter1#t0");
    assert!(matches!(
        broken.dag[start].kind,
        NodeKind::CollectiveStart { .. }
    ));
    let producer = broken.tensors[broken.dag[start].inputs[0]]
        .producer
        .unwrap();
    let edge = broken.dag.find_edge(producer, start).unwrap();
    broken.dag.remove_edge(edge);
    broken.order.retain(|&n| n != start);
    let at = broken.order.iter().position(|&n| n == producer).unwrap();
    broken.order.insert(at, start);
    let e = interpret(&broken).unwrap_err();
    assert!(e.message.contains("before it was written"), "{e}");
    assert!(validate(&broken).is_err());
}

#[test]
fn async_tp_ring_steps_compute_the_collectives() {
    // The decomposed AllGather→GEMM and GEMM→ReduceScatter of a TP = 4 layer give what the
    // collectives gave, on every rank (a wrong ring direction or chunk would not).
    let model = ModelSpec {
        hidden: 16,
        heads: 4,
        kv_heads: 4,
        head_dim: 4,
        ffn: 16,
        layers: 1,
        vocab: 0,
        mlp: Mlp::SwiGlu,
        moe: None,
    };
    let par = Parallelism {
        tp: 4,
        sp: true,
        ..Parallelism::default()
    };
    let work = Workload {
        layers: 1,
        micro_batch: 1,
        seq_len: 8,
        backward: false,
        dtype_bytes: 2,
        whole_step: false,
    };
    let g = build(&model, &par, &work).unwrap();
    let (chunked, fused) = async_tp(&g).unwrap();
    assert_eq!(fused.collectives(), 4);
    assert!(differs(&g, &chunked) <= TOLERANCE);
    // Reversing the ring (receive from the next member) breaks it.
    let mut broken = chunked.clone();
    for n in broken.order.clone() {
        if let Some(Op::RingChunk { step, .. }) = &mut broken.dag[n].op {
            *step += 2;
        }
    }
    assert!(differs(&g, &broken) > 1e-2);
}

/// The node producing input `i` of the node named `reader`.
fn input_producer(g: &Graph, reader: &str, i: usize) -> petgraph::stable_graph::NodeIndex {
    let n = node(g, reader);
    g.tensors[g.dag[n].inputs[i]].producer.unwrap()
}

#[test]
fn async_tp_fuses_the_backward_collectives() {
    // The backward's conjugate collectives are fused too: the AllGather of the output gradient
    // with the row-parallel layers' input-gradient GEMMs, and the column-parallel layers'
    // input-gradient GEMMs with their ReduceScatter. The weight gradients are not fused (they
    // sum over the gathered tokens) and read the gathered input the fused op returns.
    let g = small_training_graph();
    let (chunked, fused) = async_tp(&g).unwrap();
    assert_eq!(
        fused,
        Fused {
            all_gathers: 4,
            gathered_gemms: 4,
            reduce_scatters: 4
        }
    );
    assert!(differs(&g, &chunked) <= TOLERANCE);
    for name in [
        "L0.sp_reducescatter2.bwd.ring1",
        "L0.fc2.dgrad.step1",
        "L0.sp_allgather2.bwd.ring1",
        "L0.fc1.dgrad.step1",
        "L0.fc1.wgrad",
    ] {
        node(&chunked, name);
    }
    for wgrad in ["L0.fc1.wgrad", "L0.qkv.wgrad"] {
        let a = input_producer(&chunked, wgrad, 0);
        assert!(
            matches!(chunked.dag[a].op, Some(Op::RingConcat { .. })),
            "{wgrad}"
        );
    }
    let dy = input_producer(&chunked, "L0.fc2.wgrad", 1);
    assert!(matches!(chunked.dag[dy].op, Some(Op::RingConcat { .. })));

    // Broken rewrites are caught. (1) The gathered input the weight gradient reads has its
    // shards in the wrong places.
    let mut broken = chunked.clone();
    let a = input_producer(&broken, "L0.fc1.wgrad", 0);
    broken.dag[a].inputs.reverse();
    validate(&broken).unwrap();
    assert!(
        differs(&g, &broken) > 1e-2,
        "misplaced shards went unnoticed"
    );
    // (2) The backward input-gradient ring steps compute the wrong chunks.
    let mut broken = chunked.clone();
    for n in broken.order.clone() {
        if let (true, Some(Op::RingChunk { step, .. })) = (
            broken.dag[n].name.contains(".dgrad.step"),
            &mut broken.dag[n].op,
        ) {
            *step += 1;
        }
    }
    assert!(
        differs(&g, &broken) > 1e-2,
        "wrong backward chunks went unnoticed"
    );
    // (3) The backward AllGather's last ring step reads the local shard again.
    let mut broken = chunked.clone();
    let step = node(&broken, "L0.fc2.dgrad.step1");
    let first = input_producer(&broken, "L0.fc2.dgrad.step0", 0);
    let local = broken.dag[node(&broken, "L0.fc2.dgrad.step0")].inputs[0];
    broken.dag[step].inputs[0] = local;
    broken.dag.add_edge(first, step, Edge::Data);
    validate(&broken).unwrap();
    assert!(
        differs(&g, &broken) > 1e-2,
        "a repeated shard went unnoticed"
    );
}

/// One AllGather on a TP group of 2 read by three linears (the separate Q, K and V projections
/// of a torchtitan-style layer), a GELU and a weight gradient: the pattern
/// `fused_all_gather_matmul` fuses with several right operands.
fn gather_with_three_linears() -> Graph {
    let (s, b, h) = (4u64, 2u64, 4u64);
    let mut g = Graph::new();
    let tp = g.add_group("tp", 2, 2);
    let bytes = |rows: u64, cols: u64| rows * b * cols * 2;
    let x = g.add_input("input", bytes(s / 2, h), false);
    g.tensors[x].shape = Some([s / 2, b, h]);
    let mem = |by: u64| ComputeWork {
        kind: ComputeKind::MemoryBound,
        flops: 0.0,
        bytes: by as f64,
    };
    let n = g.compute("norm", mem(bytes(s / 2, h)), &[x], bytes(s / 2, h));
    g.tensors[n].shape = Some([s / 2, b, h]);
    let p = g.tensors[n].producer.unwrap();
    g.dag[p].op = Some(Op::LayerNorm);
    let (_, _, a) = g.collective(
        "allgather",
        CollectiveKind::AllGather,
        tp,
        bytes(s, h),
        n,
        bytes(s, h),
    );
    g.tensors[a].shape = Some([s, b, h]);
    let mut outs = Vec::new();
    for (name, cols) in [("q", 4u64), ("k", 2), ("v", 2)] {
        let w = g.add_input(&format!("{name}.weight"), h * cols * 2, true);
        let work = ComputeWork {
            kind: ComputeKind::Gemm,
            flops: (2 * s * b * h * cols) as f64,
            bytes: bytes(s, h + cols) as f64,
        };
        let o = g.compute(name, work, &[a, w], bytes(s, cols));
        g.tensors[o].shape = Some([s, b, cols]);
        let p = g.tensors[o].producer.unwrap();
        g.dag[p].op = Some(Op::Linear);
        outs.push(o);
    }
    let act = g.compute("gelu", mem(bytes(s, h)), &[a], bytes(s, h));
    g.tensors[act].shape = Some([s, b, h]);
    let p = g.tensors[act].producer.unwrap();
    g.dag[p].op = Some(Op::Gelu);
    let work = ComputeWork {
        kind: ComputeKind::Gemm,
        flops: (2 * s * b * h * 2) as f64,
        bytes: 0.0,
    };
    let wgrad = g.compute("wgrad", work, &[a, outs[2]], h * 2 * 2);
    let p = g.tensors[wgrad].producer.unwrap();
    g.dag[p].op = Some(Op::WeightGrad);
    validate(&g).unwrap();
    g
}

#[test]
fn async_tp_fuses_every_consumer_linear_of_an_all_gather() {
    let g = gather_with_three_linears();
    let (chunked, fused) = async_tp(&g).unwrap();
    assert_eq!(
        fused,
        Fused {
            all_gathers: 1,
            gathered_gemms: 3,
            reduce_scatters: 0
        }
    );
    assert!(differs(&g, &chunked) <= TOLERANCE);
    // One ring for all three: each hop's shard feeds the three linears' steps.
    let hops: Vec<_> = chunked
        .order
        .iter()
        .filter(|&&n| matches!(chunked.dag[n].kind, NodeKind::CollectiveStart { .. }))
        .collect();
    assert_eq!(hops.len(), 1);
    for name in ["q.step1", "k.step1", "v.step1"] {
        let shard = chunked.dag[node(&chunked, name)].inputs[0];
        assert_eq!(chunked.tensors[shard].name, "allgather.shard1");
    }
    // The GELU and the weight gradient read the gathered tensor the fused op returns.
    for reader in ["gelu", "wgrad"] {
        let a = input_producer(&chunked, reader, 0);
        assert!(matches!(chunked.dag[a].op, Some(Op::RingConcat { .. })));
    }
    // Broken rewrites are caught: (1) two linears' steps swap weights.
    let mut broken = chunked.clone();
    let (k, v) = (node(&broken, "k.step1"), node(&broken, "v.step1"));
    let (wk, wv) = (broken.dag[k].inputs[1], broken.dag[v].inputs[1]);
    broken.dag[k].inputs[1] = wv;
    broken.dag[v].inputs[1] = wk;
    validate(&broken).unwrap();
    assert!(
        differs(&g, &broken) > 1e-2,
        "swapped weights went unnoticed"
    );
    // (2) A linear's steps are concatenated in the wrong order.
    let mut broken = chunked.clone();
    let concat = node(&broken, "q.concat");
    broken.dag[concat].inputs.reverse();
    assert!(
        differs(&g, &broken) > 1e-2,
        "a misplaced step went unnoticed"
    );
}

#[test]
fn backward_ops_survive_the_graph_json() {
    // An imported training graph (tiled, AsyncTP-chunked) keeps its op semantics: the
    // interpreter gives the same outputs after the round trip.
    let g = small_training_graph();
    for graph in [
        tile(&g, 2, Dim::Batch).unwrap().graph,
        async_tp(&g).unwrap().0,
    ] {
        let text = bubblelab_core::graph::json::to_json(&graph);
        let back = bubblelab_core::graph::json::from_json(&text).unwrap();
        assert!(graph
            .dag
            .node_indices()
            .zip(back.dag.node_indices())
            .all(|(a, b)| graph.dag[a].op == back.dag[b].op));
        assert!(differs(&graph, &back) == 0.0);
    }
}

#[test]
fn a_whole_step_has_embedding_head_loss_optimizer_and_buckets() {
    // The whole training step around the layers: the embedding first, the head and the
    // vocabulary-parallel cross-entropy (two TP AllReduces) after the last layer, the
    // optimizer after every DP wait; every strategy's graph validates, and AsyncTP also fuses
    // the head's AllGather (forward) and its conjugate in the backward.
    let model = ModelSpec {
        vocab: 100,
        ..bubblelab_core::graph::build::ModelKind::Gpt3Curie.spec()
    };
    let par = Parallelism {
        tp: 2,
        sp: true,
        dp: 2,
        ..Parallelism::default()
    };
    let work = Workload {
        layers: 2,
        micro_batch: 2,
        seq_len: 64,
        backward: true,
        dtype_bytes: 2,
        whole_step: true,
    };
    let g = build(&model, &par, &work).unwrap();
    validate(&g).unwrap();
    let pos = |name: &str| g.order.iter().position(|&n| n == node(&g, name)).unwrap();
    assert!(pos("embedding") < pos("L0.norm1"));
    assert!(pos("L1.residual2") < pos("head") && pos("head") < pos("ce_max_allreduce"));
    assert!(pos("ce_sums_allreduce") < pos("ce.bwd") && pos("ce.bwd") < pos("head.dgrad"));
    assert!(pos("L0.norm1.bwd") < pos("embedding.bwd"));
    let opt = node(&g, "optimizer");
    let waits: Vec<_> = g
        .order
        .iter()
        .filter(|&&n| {
            g.dag[n].name.contains(".dp_") && matches!(g.dag[n].kind, NodeKind::Wait { .. })
        })
        .collect();
    assert!(!waits.is_empty());
    for &&w in &waits {
        assert!(g.dag.contains_edge(w, opt), "{}", g.dag[w].name);
    }
    // Every weight's gradient is in some bucket: 2 layers' GEMMs, the head and the embedding.
    let weights: u64 = g
        .tensors
        .iter()
        .filter(|t| t.name.ends_with(".weight"))
        .map(|t| t.bytes)
        .sum();
    let buckets: u64 = g
        .tensors
        .iter()
        .filter(|t| t.name.ends_with(".grad_bucket"))
        .map(|t| t.bytes)
        .sum();
    assert_eq!(weights, buckets);
    for other in [
        serial(&g).unwrap(),
        eager(&g).unwrap(),
        reorder(&tile(&g, 2, Dim::Batch).unwrap().graph)
            .unwrap()
            .graph,
    ] {
        validate(&other).unwrap();
    }
    let (chunked, fused) = async_tp(&g).unwrap();
    validate(&chunked).unwrap();
    // Per layer 2 + 2 of each; the head adds its AllGather (forward, fused with the head GEMM)
    // and its backward ReduceScatter (fused with the head's input gradient). The embedding's
    // ReduceScatter and its backward AllGather meet no GEMM and stay serial.
    assert_eq!(fused.all_gathers, 2 * 4 + 1, "{fused:?}");
    assert_eq!(fused.reduce_scatters, 2 * 4 + 1, "{fused:?}");
    node(&chunked, "head_allgather.ring1");
}
