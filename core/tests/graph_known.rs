//! Known answers of the graph simulator, and properties of every built graph with the
//! validator as the oracle.
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::cost::{CollectiveKind, ComputeKind, ComputeWork, CostModel, Group};
use bubblelab_core::graph::build::{
    build, ContextParallel, DataParallel, ModelKind, Parallelism, Workload,
};
use bubblelab_core::graph::sim::simulate;
use bubblelab_core::graph::validate::validate;
use bubblelab_core::graph::Graph;
use bubblelab_core::hw::GpuKind;
use bubblelab_core::units::nanos_from_f64;
use proptest::prelude::*;

fn gemm(gflop: f64) -> ComputeWork {
    ComputeWork {
        kind: ComputeKind::Gemm,
        flops: gflop * 1e9,
        bytes: 1e6,
    }
}

fn model() -> CostModel {
    CostModel::new(GpuKind::H100)
}

#[test]
fn a_chain_takes_the_sum_of_its_ops() {
    let cost = model();
    let mut g = Graph::new();
    let mut x = g.add_input("x", 1000, false);
    let mut expected = 0;
    for (i, gf) in [10.0, 200.0, 3000.0].into_iter().enumerate() {
        x = g.compute(&format!("op{i}"), gemm(gf), &[x], 1000);
        expected += nanos_from_f64(cost.compute_ns(&gemm(gf))).0;
    }
    let sim = simulate(&g, &cost).unwrap();
    assert_eq!(sim.makespan_ns, expected);
    assert_eq!(sim.compute_busy_ns, expected);
    assert_eq!(sim.exposed_comm_ns, 0);
}

#[test]
fn a_collective_with_nothing_to_hide_under_is_fully_exposed() {
    let cost = model();
    let mut g = Graph::new();
    let tp = g.add_group("tp", 8, 8);
    let x = g.add_input("x", 64 << 20, false);
    let y = g.compute("mm", gemm(100.0), &[x], 64 << 20);
    let (_, _, z) = g.collective("ar", CollectiveKind::AllReduce, tp, 64 << 20, y, 64 << 20);
    g.compute("add", gemm(1.0), &[z], 64 << 20);
    let sim = simulate(&g, &cost).unwrap();
    let comm = nanos_from_f64(cost.collective_ns(
        CollectiveKind::AllReduce,
        (64u64 << 20) as f64,
        Group {
            ranks: 8,
            ranks_per_node: 8,
        },
    ))
    .0;
    assert_eq!(sim.comm_ns, comm);
    assert_eq!(sim.exposed_comm_ns, comm);
    assert_eq!(sim.overlap_ratio(), 0.0);
}

#[test]
fn a_collective_under_a_longer_independent_op_is_hidden_but_slows_it() {
    let cost = model();
    let group = Group {
        ranks: 8,
        ranks_per_node: 8,
    };
    let mut g = Graph::new();
    let tp = g.add_group("tp", 8, 8);
    let x = g.add_input("x", 16 << 20, false);
    let other = g.add_input("other", 1 << 20, false);
    let (start, _) = g.add_node(
        "ar",
        bubblelab_core::graph::NodeKind::CollectiveStart {
            kind: CollectiveKind::AllReduce,
            group: tp,
            bytes: 16 << 20,
        },
        &[x],
        &[],
    );
    let long = gemm(50_000.0);
    let y = g.compute("independent", long, &[other], 1 << 20);
    let (wait, r) = g.add_node(
        "ar.wait",
        bubblelab_core::graph::NodeKind::Wait { start },
        &[],
        &[("ar", 16 << 20)],
    );
    g.control(start, wait);
    g.compute("consumer", gemm(1.0), &[y, r[0]], 1 << 20);
    validate(&g).unwrap();
    let sim = simulate(&g, &cost).unwrap();
    let comm = cost.collective_ns(CollectiveKind::AllReduce, (16u64 << 20) as f64, group);
    let work = cost.compute_ns(&long);
    assert!(
        work > comm,
        "the independent op must be longer: {work} vs {comm}"
    );
    assert_eq!(sim.exposed_comm_ns, 0);
    // Overlap is not free: during the collective the GEMM runs 1/(1+s) as fast, so it does
    // comm/(1+s) of its work in the collective's comm ns and the rest at full speed.
    let s = cost.compute_slowdown(group);
    assert!(s > 0.0);
    let stretched = comm * s / (1.0 + s);
    let independent = sim.timings[1].end.0 - sim.timings[1].start.0;
    assert!(
        (independent as f64 - (work + stretched)).abs() <= 2.0,
        "{independent} vs {}",
        work + stretched
    );
}

#[test]
fn memory_of_a_chain_peaks_at_the_largest_adjacent_pair() {
    let cost = model();
    let sizes = [100u64, 700, 300, 900, 50];
    let mut g = Graph::new();
    let mut x = g.add_input("x", sizes[0], false);
    for (i, &bytes) in sizes[1..].iter().enumerate() {
        x = g.compute(&format!("op{i}"), gemm(1.0), &[x], bytes);
    }
    let sim = simulate(&g, &cost).unwrap();
    let expected = sizes.windows(2).map(|w| w[0] + w[1]).max().unwrap();
    assert_eq!(sim.peak_bytes, expected);
    assert_eq!(sim.final_bytes, 0);
}

#[test]
fn gpt3_175b_stage_builds_validates_and_runs() {
    let par = Parallelism {
        tp: 8,
        sp: true,
        dp: 8,
        dp_kind: DataParallel::ReduceScatter,
        ..Parallelism::default()
    };
    let work = Workload {
        layers: 12,
        micro_batch: 1,
        seq_len: 2048,
        ..Workload::default()
    };
    let g = build(&ModelKind::Gpt3_175b.spec(), &par, &work).unwrap();
    validate(&g).unwrap();
    let sim = simulate(&g, &model()).unwrap();
    assert!(sim.exposed_comm_ns > 0 && sim.exposed_comm_ns <= sim.comm_ns);
    assert_eq!(sim.final_bytes, 0);
    assert!(g.node_count() > 500, "{}", g.node_count());
}

#[test]
fn layouts_that_do_not_divide_the_model_are_refused_by_name() {
    let w = Workload::default();
    let e = build(
        &ModelKind::Gpt3Curie.spec(),
        &Parallelism {
            tp: 3,
            ..Parallelism::default()
        },
        &w,
    )
    .unwrap_err();
    assert_eq!(e.field, "tp");
    let e = build(
        &ModelKind::Llama3_8b.spec(),
        &Parallelism {
            ep: 2,
            ..Parallelism::default()
        },
        &w,
    )
    .unwrap_err();
    assert_eq!(e.field, "ep");
}

fn arb_case() -> impl Strategy<Value = (ModelKind, Parallelism, Workload)> {
    (
        0usize..5,
        prop::sample::select(vec![1u32, 2, 4, 8]),
        any::<bool>(),
        prop::sample::select(vec![1u32, 2, 4]),
        any::<bool>(),
        prop::sample::select(vec![1u32, 2, 8]),
        prop::sample::select(vec![1u32, 2, 16]),
        any::<bool>(),
        1u32..=3,
        any::<bool>(),
    )
        .prop_map(|(m, tp, sp, cp, ring, ep, dp, rs, layers, backward)| {
            let model = ModelKind::ALL[m];
            let ep = if model == ModelKind::Qwen3Moe { ep } else { 1 };
            (
                model,
                Parallelism {
                    tp,
                    sp,
                    cp,
                    cp_kind: if ring {
                        ContextParallel::Ring
                    } else {
                        ContextParallel::Ulysses
                    },
                    ep,
                    dp,
                    dp_kind: if rs {
                        DataParallel::ReduceScatter
                    } else {
                        DataParallel::AllReduce
                    },
                    dp_bucket_bytes: 8 << 20,
                    gpus_per_node: 8,
                },
                Workload {
                    layers,
                    micro_batch: 1,
                    seq_len: 1024,
                    backward,
                    dtype_bytes: 2,
                    whole_step: false,
                },
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_built_graph_is_valid_and_its_memory_returns_to_zero((model, par, work) in arb_case()) {
        let Ok(g) = build(&model.spec(), &par, &work) else { return Ok(()) };
        prop_assert!(validate(&g).is_ok(), "{:?}", validate(&g));
        for gpu in GpuKind::ALL {
            let sim = simulate(&g, &CostModel::new(gpu)).unwrap();
            prop_assert_eq!(sim.final_bytes, 0);
            prop_assert!(sim.exposed_comm_ns <= sim.comm_ns);
            prop_assert!(sim.compute_busy_ns <= sim.makespan_ns);
            // Collectives of different groups may run at once, so only compute bounds the step.
            prop_assert!(sim.makespan_ns >= sim.compute_busy_ns);
        }
    }
}

#[test]
fn model_ids_match_their_json_names() {
    for m in ModelKind::ALL {
        assert_eq!(serde_json::to_value(m).unwrap(), m.id());
        assert_eq!(ModelKind::from_id(m.id()), Some(m));
    }
}
