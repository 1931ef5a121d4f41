#![cfg(not(target_arch = "wasm32"))]
//! The overlap lab's passes keep the math: for random small models and layouts, the numeric
//! interpreter gives the same outputs for the graph as built, after each Helix pass and for the
//! serial and eager baselines; every output validates; bucketing never exceeds its budget.

use bubblelab_core::cost::CostModel;
use bubblelab_core::graph::build::{build, Mlp, ModelSpec, Moe, Parallelism, Workload};
use bubblelab_core::graph::validate::validate;
use bubblelab_core::graph::{Dim, Graph};
use bubblelab_core::hw::GpuKind;
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
        ),
        (
            prop::sample::select(vec![2u64, 4]),
            prop::sample::select(vec![4u64, 8]),
            1u32..=2,
        ),
        (prop::sample::select(vec![2u32, 4]), any::<bool>()),
    )
        .prop_map(
            |(
                (heads, head_dim, gqa, swiglu, moe),
                (tp, sp, ep),
                (mb, seq, layers),
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
                let par = Parallelism {
                    tp,
                    sp: sp && tp > 1,
                    ep: if moe { ep } else { 1 },
                    ..Parallelism::default()
                };
                let work = Workload {
                    layers,
                    micro_batch: mb,
                    seq_len: seq,
                    backward: false,
                    dtype_bytes: 2,
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
        mlp: Mlp::Gelu,
        moe: None,
    };
    let work = Workload {
        layers: 1,
        micro_batch: 2,
        seq_len: 4,
        backward: false,
        dtype_bytes: 2,
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
        mlp: Mlp::SwiGlu,
        moe: None,
    };
    let work = Workload {
        layers: 1,
        micro_batch: 1,
        seq_len: 8,
        backward: false,
        dtype_bytes: 2,
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
