#![cfg(not(target_arch = "wasm32"))]
//! Helix's claims, pinned as directions on the presets (numbers in docs/CLAIMS.md).
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::{presets, Report};

fn run(id: &str) -> Report {
    let preset = presets::find(id).unwrap_or_else(|| panic!("preset {id}"));
    bubblelab_core::run(&preset.scenario().unwrap()).unwrap()
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("metric {key}"))
}

#[test]
fn exposed_communication_cut_by_more_than_60_percent_on_gpt3_curie_tp2_sp4() {
    let r = run("overlap-gpt3-curie-tp2-sp4");
    assert!(
        m(&r, "helix.exposed_cut_vs_serial") > 0.60,
        "{}",
        m(&r, "helix.exposed_cut_vs_serial")
    );
}

#[test]
fn inter_node_gains_more_than_intra_node() {
    // One layer and the whole training step (all 32 layers, embedding, head, optimizer, DP
    // buckets). The seed's ranges (4–9 % in a node, 12–30 % across nodes) are not pinned: the
    // whole step is above both (docs/CLAIMS.md says why); the direction is.
    for (intra, inter) in [
        (
            "overlap-gpt3-curie-tp2-sp4",
            "overlap-gpt3-curie-inter-node",
        ),
        (
            "overlap-gpt3-curie-whole-step",
            "overlap-gpt3-curie-whole-step-inter-node",
        ),
    ] {
        let a = m(&run(intra), "helix.speedup_vs_serial");
        let b = m(&run(inter), "helix.speedup_vs_serial");
        assert!(a > 0.04, "{intra} {a}");
        assert!(b > a, "{inter} {b} vs {intra} {a}");
    }
}

#[test]
fn eager_differs_from_serial_only_where_independent_work_exists() {
    // With data-parallel buckets (whole step, DP = 2) eager overlaps them with the backward;
    // with TP alone every collective's result is needed by the next operator.
    let r = run("overlap-gpt3-curie-whole-step");
    assert!(m(&r, "eager.makespan_ms") < m(&r, "serial.makespan_ms"));
    let r = run("overlap-llama3-70b-vs-asynctp");
    assert_eq!(m(&r, "eager.makespan_ms"), m(&r, "serial.makespan_ms"));
}

#[test]
fn full_strength_async_tp_is_faster_than_helix_on_tp_only_layers() {
    // The seed's "Helix ≥ AsyncTP" (17 % vs 12 %, 16 % vs 13 %) is not reproduced against
    // AsyncTP as PyTorch's pass does it (forward and backward, every consumer GEMM): on TP-only
    // layers its p = 8 ring steps hide more TP communication than Helix's K = 2 tiles.
    for id in [
        "overlap-gpt3-175b-vs-asynctp",
        "overlap-llama3-70b-vs-asynctp",
    ] {
        let r = run(id);
        let (h, a) = (m(&r, "helix.makespan_ms"), m(&r, "async_tp.makespan_ms"));
        assert!(a < h, "{id}: Helix {h} ms, AsyncTP {a} ms");
        assert!(m(&r, "helix.speedup_vs_serial") > 0.0, "{id}");
    }
    // Over a whole step with context and data parallelism as well, Helix is ahead again:
    // AsyncTP touches only the TP collectives.
    for id in [
        "overlap-gpt3-curie-whole-step",
        "overlap-gpt3-curie-whole-step-inter-node",
    ] {
        let r = run(id);
        let (h, a) = (m(&r, "helix.makespan_ms"), m(&r, "async_tp.makespan_ms"));
        assert!(h < a, "{id}: Helix {h} ms, AsyncTP {a} ms");
    }
}

#[test]
fn sequence_tiling_lowers_peak_activations_in_long_context_prefill() {
    // One layer, and the whole model's prefill (the claim is about the whole model).
    for id in [
        "overlap-llama3-8b-long-context",
        "overlap-llama3-8b-long-context-whole-model",
    ] {
        let r = run(id);
        let (h, s) = (m(&r, "helix.peak_gib"), m(&r, "serial.peak_gib"));
        assert!(h < s * 0.9, "{id}: Helix {h} GiB vs serial {s} GiB");
        assert!(r
            .findings
            .iter()
            .any(|f| f.contains("attention reduces over the sequence")));
    }
}

#[test]
fn generous_budget_bucketing_recovers_k4_efficiency_within_budget() {
    let r = run("overlap-gpt3-curie-k4-budget");
    let passes = r.tables.iter().find(|t| t.key == "passes").unwrap();
    let time = |row: usize| match &passes.rows[row][1] {
        bubblelab_core::report::Cell::Num(v) => *v,
        other => panic!("{other:?}"),
    };
    let (reordered, bucketed) = (time(2), time(3));
    assert!(
        bucketed < reordered,
        "bucket {bucketed} ms vs reorder {reordered} ms"
    );
    assert!(m(&r, "helix.peak_gib") <= m(&r, "bucket.budget_gib"));
}

#[test]
fn mixed_dimensions_hide_one_dimension_under_another_on_qwen3_moe() {
    let r = run("overlap-qwen3-moe-mixed");
    assert!(m(&r, "helix.exposed_cut_vs_serial") > 0.3);
    assert!(r
        .findings
        .iter()
        .any(|f| f.contains("Communication per dimension")
            && f.contains("ep ")
            && f.contains("tp ")));
}

#[test]
fn every_overlap_preset_report_is_deterministic() {
    for p in presets::for_lab("overlap") {
        let s = p.scenario().unwrap();
        assert_eq!(
            bubblelab_core::run(&s).unwrap().to_json(),
            bubblelab_core::run(&s).unwrap().to_json()
        );
        let strategies = bubblelab_core::run(&s).unwrap();
        assert_eq!(strategies.timelines.len(), 4, "{}", p.id);
        assert!(strategies.series.iter().all(|x| x.chart == "memory"));
    }
}

#[test]
fn bad_fields_are_named() {
    let bad = r#"{"version":1,"lab":"overlap","params":{"passes":[{"pass":"tile","k":3}]}}"#;
    let e = bubblelab_core::Scenario::from_json(bad)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "overlap.passes[0].k: must divide the 4 sequences of the micro-batch, got 3"
    );
    let bad = r#"{"version":1,"lab":"overlap","params":{"passes":[{"pass":"bucket","memory_budget_gib":-1}]}}"#;
    let e = bubblelab_core::Scenario::from_json(bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("overlap.passes[0].memory_budget_gib: must be a positive"),
        "{e}"
    );
    let bad = r#"{"version":1,"lab":"overlap","params":{"passes":[{"pass":"shuffle"}]}}"#;
    let e = bubblelab_core::Scenario::from_json(bad)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("overlap.passes"), "{e}");
    let bad = r#"{"version":1,"lab":"overlap","params":{"graph":{"format":"bubblelab-graph","version":1,"groups":[],"tensors":[],"nodes":[],"edges":[],"order":[7]}}}"#;
    let e = bubblelab_core::Scenario::from_json(bad)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "overlap.graph.order[0]: node 7 does not exist (0 nodes)");
}

#[test]
fn an_exported_graph_imports_and_runs_the_same() {
    use bubblelab_core::labs::overlap::{self, OverlapParams};
    let params = OverlapParams::default();
    let g = overlap::graph_of(&params).unwrap();
    let text = bubblelab_core::graph::json::to_json(&g);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let imported = OverlapParams {
        graph: Some(value),
        ..OverlapParams::default()
    };
    let a = overlap::run(&params).unwrap();
    let b = overlap::run(&imported).unwrap();
    assert_eq!(a.metric("helix.makespan_ms"), b.metric("helix.makespan_ms"));
    assert_eq!(
        a.metric("serial.makespan_ms"),
        b.metric("serial.makespan_ms")
    );
}
