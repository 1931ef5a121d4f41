//! Known answers of the pipeline lab, from the papers' closed forms.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::labs::pipeline::{
    run_schedule, theory_bubble_ratio, OpKind, PipelineParams, ScheduleKind,
};

fn params(p: u32, m: u32) -> PipelineParams {
    PipelineParams {
        stages: p,
        micro_batches: m,
        ..PipelineParams::default()
    }
}

#[test]
fn gpipe_and_1f1b_bubble_is_p_minus_1_over_m_plus_p_minus_1() {
    for (p, m) in [(2, 1), (4, 8), (4, 12), (8, 16), (3, 7)] {
        let params = PipelineParams {
            schedules: vec![ScheduleKind::Gpipe],
            ..params(p, m)
        };
        let expected = f64::from(p - 1) / f64::from(m + p - 1);
        for kind in [ScheduleKind::Gpipe, ScheduleKind::OneFOneB] {
            let run = run_schedule(&params, kind).unwrap();
            let got = run.overall_bubble_ratio();
            assert!(
                (got - expected).abs() < 1e-12,
                "{kind:?} p={p} m={m}: {got} vs {expected}"
            );
            // Makespan (m + p − 1)(F + B + W) exactly, F = B = W = 1 ms.
            assert_eq!(run.iteration_ns, u64::from(m + p - 1) * 3_000_000);
        }
    }
}

#[test]
fn peak_in_flight_1f1b_is_min_p_minus_i_m_and_gpipe_is_m() {
    for (p, m) in [(4, 8), (4, 2), (6, 3), (8, 32)] {
        let params = params(p, m);
        let one = run_schedule(&params, ScheduleKind::OneFOneB).unwrap();
        let gpipe = run_schedule(&params, ScheduleKind::Gpipe).unwrap();
        for i in 0..p {
            assert_eq!(
                one.peak_in_flight[i as usize],
                f64::from((p - i).min(m)),
                "1F1B p={p} m={m} stage {i}"
            );
            assert_eq!(
                gpipe.peak_in_flight[i as usize],
                f64::from(m),
                "GPipe p={p} m={m} stage {i}"
            );
            assert_eq!(
                one.peak_activation_bytes[i as usize],
                u64::from((p - i).min(m)) * params.activation_bytes
            );
        }
    }
}

#[test]
fn interleaving_divides_the_bubble_time_by_v() {
    for (p, m, v) in [(4, 8, 2), (4, 16, 4), (2, 4, 2), (8, 16, 2)] {
        let params = PipelineParams {
            virtual_stages: v,
            ..params(p, m)
        };
        let one = run_schedule(&params, ScheduleKind::OneFOneB).unwrap();
        let inter = run_schedule(&params, ScheduleKind::Interleaved).unwrap();
        let bubble =
            |r: &bubblelab_core::labs::pipeline::ScheduleRun| r.iteration_ns - r.busy_ns[0];
        assert_eq!(
            bubble(&one),
            u64::from(v) * bubble(&inter),
            "p={p} m={m} v={v}"
        );
        let expected = theory_bubble_ratio(&params, ScheduleKind::Interleaved).unwrap();
        assert!((inter.overall_bubble_ratio() - expected.bubble_ratio).abs() < 1e-12);
    }
}

#[test]
fn zb_h1_bubble_is_about_a_third_of_1f1b_when_f_b_w_are_equal() {
    for (p, m) in [(4, 8), (4, 12), (8, 24), (6, 12)] {
        let params = params(p, m);
        let one = run_schedule(&params, ScheduleKind::OneFOneB).unwrap();
        let zb = run_schedule(&params, ScheduleKind::ZbH1).unwrap();
        let b1 = (one.iteration_ns - one.busy_ns[0]) as f64;
        let bz = (zb.iteration_ns - zb.busy_ns[0]) as f64;
        let ratio = bz / b1;
        assert!(
            (ratio - 1.0 / 3.0).abs() < 1e-9,
            "p={p} m={m}: ZB-H1/1F1B bubble = {ratio}"
        );
        let expected = theory_bubble_ratio(&params, ScheduleKind::ZbH1).unwrap();
        assert!((zb.overall_bubble_ratio() - expected.bubble_ratio).abs() < 1e-12);
    }
}

#[test]
fn zb_h1_keeps_1f1b_in_flight_micro_batches() {
    let params = params(4, 12);
    let one = run_schedule(&params, ScheduleKind::OneFOneB).unwrap();
    let zb = run_schedule(&params, ScheduleKind::ZbH1).unwrap();
    assert_eq!(one.peak_in_flight, zb.peak_in_flight);
}

#[test]
fn slow_stage_and_p2p_stretch_the_iteration() {
    let base = params(4, 8);
    let slow = PipelineParams {
        stage_slowdown: vec![1.0, 2.0, 1.0, 1.0],
        p2p_ns: 50_000,
        ..base.clone()
    };
    for kind in ScheduleKind::ALL {
        let a = run_schedule(&base, kind).unwrap();
        let b = run_schedule(&slow, kind).unwrap();
        assert!(b.iteration_ns > a.iteration_ns, "{kind:?}");
        assert!(!b.transfers.is_empty());
    }
    assert!(theory_bubble_ratio(&slow, ScheduleKind::Gpipe).is_none());
}

fn times(p: u32, m: u32, f: u64, b: u64, w: u64) -> PipelineParams {
    PipelineParams {
        forward_ns: f,
        backward_input_ns: b,
        backward_weight_ns: w,
        ..params(p, m)
    }
}

/// (p, m, F, B, W) shapes with F = B ≥ W, where DualPipe's closed form applies.
const DUAL_SHAPES: [(u32, u32, u64, u64, u64); 8] = [
    (2, 4, 1000, 1000, 1000),
    (4, 8, 1000, 1000, 1000),
    (4, 16, 2000, 2000, 1000),
    (6, 12, 1000, 1000, 0),
    (8, 20, 1000, 1000, 1000),
    (8, 24, 3000, 3000, 1000),
    (8, 32, 3000, 3000, 2000),
    (16, 40, 1000, 1000, 500),
];

#[test]
fn dualpipe_bubble_is_the_readme_closed_form_when_f_equals_b() {
    // deepseek-ai/DualPipe README: (PP/2 − 1)(F&B + B − 3W) per device, B the full backward.
    for (p, m, f, b, w) in DUAL_SHAPES {
        let params = times(p, m, f, b, w);
        for kind in [ScheduleKind::DualPipe, ScheduleKind::DualPipeV] {
            let run = run_schedule(&params, kind).unwrap();
            let (stages, share) = if kind == ScheduleKind::DualPipe {
                (p, 2)
            } else {
                (2 * p, 1)
            };
            // Chunk times in half-ns units (DualPipeV's chunks are half a device's stage).
            let (cf, cb, cw) = (f * share, (b + w) * share, w * share);
            let half_ns = (u64::from(stages) / 2 - 1) * (cf + cb + cb - 3 * cw);
            for d in 0..p as usize {
                assert_eq!(
                    2 * (run.iteration_ns - run.busy_ns[d]),
                    half_ns,
                    "{kind:?} p={p} m={m} F={f} B={b} W={w} device {d}"
                );
            }
            let expected = theory_bubble_ratio(&params, kind).unwrap();
            assert!(!expected.over_spans);
            assert!((run.overall_bubble_ratio() - expected.bubble_ratio).abs() < 1e-12);
        }
    }
}

#[test]
fn dualpipe_departs_from_the_closed_form_when_f_and_b_differ() {
    // The README draws F, B and W of one size; with F > B the source's own order idles
    // (PP/2 − 1)(F − B) longer than the form, so the lab offers no closed form there.
    let params = times(8, 24, 2000, 1000, 1000);
    let run = run_schedule(&params, ScheduleKind::DualPipe).unwrap();
    // F&B = F + B = 2 + 2, B = 1 + 1, W = 1 (ms): (8/2 − 1)(4 + 2 − 3) = 9 ms.
    let form = 3 * ((2000 + 2000) + 2000 - 3 * 1000);
    assert_eq!(run.iteration_ns - run.busy_ns[0], form + 3 * 1000);
    assert!(theory_bubble_ratio(&params, ScheduleKind::DualPipe).is_none());
    // W longer than F and B: the source's order idles 12 ms where the form says (8/2 − 1)(7 + 5 − 9) = 9 ms.
    let params = times(8, 32, 2000, 2000, 3000);
    let run = run_schedule(&params, ScheduleKind::DualPipe).unwrap();
    assert_eq!(run.iteration_ns - run.busy_ns[0], 12_000);
    assert!(theory_bubble_ratio(&params, ScheduleKind::DualPipe).is_none());
}

#[test]
fn dualpipe_holds_pp_plus_one_activations_per_device() {
    // README: activations per device PP + 1 (in one PP stage's units).
    for (p, m, f, b, w) in DUAL_SHAPES {
        let params = times(p, m, f, b, w);
        let dual = run_schedule(&params, ScheduleKind::DualPipe).unwrap();
        let v = run_schedule(&params, ScheduleKind::DualPipeV).unwrap();
        for d in 0..p as usize {
            assert_eq!(
                dual.peak_in_flight[d],
                f64::from(p + 1),
                "DualPipe p={p} d={d}"
            );
            // DualPipeV: 2p stages of half a device's layers, so 2p + 1 half-stages.
            assert_eq!(
                v.peak_in_flight[d] * 2.0,
                f64::from(2 * p + 1),
                "DualPipeV p={p} d={d}"
            );
        }
    }
}

/// One device's program as in the source's figure: `F1:4` forward of chunk 1, micro-batch 4;
/// `B` whole backward, `b` input gradient, `W` weight gradient; `&` joins an overlapped pair.
fn program(kind: ScheduleKind, params: &PipelineParams, device: u32) -> String {
    let orders = kind.device_orders(params).unwrap();
    orders[device as usize]
        .iter()
        .map(|op| {
            let letter = match op.kind {
                OpKind::Forward => "F",
                OpKind::Backward => "B",
                OpKind::BackwardInput => "b",
                OpKind::BackwardWeight => "W",
            };
            let join = if op.joint { "&" } else { "" };
            format!("{letter}{}:{}{join}", op.chunk, op.mb)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn dualpipe_v_runs_the_order_of_the_source_figure() {
    // deepseek-ai/DualPipe images/dualpipev.png: 4 ranks (8 stages), 10 micro-batches; read
    // cell by cell (white numbers are chunk 1, black chunk 0; narrow green is B for input).
    let device0 =
        "F0:0 F0:1 F0:2 F0:3 F0:4 F0:5 F0:6 F1:0 b1:0 W1:0 F1:1 b1:1 W1:1 F1:2 b1:2 W1:2 \
        F1:3 F0:7& B1:3 F1:4& B0:0 F0:8& B1:4 F1:5& B0:1 F0:9& B1:5 F1:6& B0:2 B1:6 F1:7& B0:3 \
        B1:7 F1:8& B0:4 B1:8 F1:9& B0:5 B1:9 b0:6 W0:6 b0:7 W0:7 b0:8 W0:8 b0:9 W0:9";
    let device3 = "F0:0 F1:0 F0:1 F1:1 F0:2 F1:2 F0:3 F1:3 F0:4 B1:0 F1:4& B0:0 F0:5& B1:1 \
        F1:5& B0:1 F0:6& B1:2 F1:6& B0:2 F0:7& B1:3 F1:7& B0:3 F0:8& B1:4 F1:8& B0:4 F0:9& B1:5 \
        F1:9& B0:5 B1:6 B0:6 B1:7 B0:7 b1:8 b0:8 b1:9 b0:9 W1:8 W0:8 W1:9 W0:9";
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let shape = params(4, 10);
    assert_eq!(program(ScheduleKind::DualPipeV, &shape, 0), squash(device0));
    assert_eq!(program(ScheduleKind::DualPipeV, &shape, 3), squash(device3));
}

#[test]
fn zb_v_has_no_bubble_over_device_spans_when_f_b_w_are_equal() {
    // Qi et al. arXiv 2401.10241 §6 and the repository README: ZB-V has zero bubble at
    // t_F = t_B = t_W, within 1F1B's activation memory (p micro-batches of a whole stage).
    for p in 2..=8 {
        for m in 2 * p - 1..=3 * p {
            let params = params(p, m);
            let run = run_schedule(&params, ScheduleKind::ZbV).unwrap();
            for d in 0..p as usize {
                assert_eq!(run.span_ns[d], run.busy_ns[d], "p={p} m={m} device {d}");
                assert!(
                    run.peak_in_flight[d] <= f64::from(p),
                    "p={p} m={m} device {d}"
                );
            }
            let form = theory_bubble_ratio(&params, ScheduleKind::ZbV).unwrap();
            assert!(form.over_spans);
            assert_eq!(run.span_bubble_ratio(), form.bubble_ratio);
        }
        // One micro-batch fewer and the planner leaves a bubble; no closed form is offered.
        if p >= 3 {
            let short = params(p, 2 * p - 2);
            let run = run_schedule(&short, ScheduleKind::ZbV).unwrap();
            assert!(run.span_bubble_ratio() > 0.0, "p={p}");
            assert!(theory_bubble_ratio(&short, ScheduleKind::ZbV).is_none());
        }
    }
}

#[test]
fn zb_h2_span_bubble_is_p_minus_1_times_f_plus_b_minus_2w() {
    // Qi et al. 2024 Table 2: ZB-H2 bubble (p−1)(T_F + T_B − 2T_W), peak (2p − 1)M_B.
    for (p, m, f, b, w) in [
        (4, 12, 1000, 1000, 1000),
        (8, 24, 1000, 1000, 1000),
        (4, 12, 2000, 1000, 1000),
        (4, 12, 1000, 2000, 1000),
        (4, 12, 3000, 2000, 2000),
        (6, 18, 3000, 4000, 1000),
    ] {
        let params = times(p, m, f, b, w);
        let run = run_schedule(&params, ScheduleKind::ZbH2).unwrap();
        let bubble = u64::from(p - 1) * (f + b - 2 * w);
        assert_eq!(
            run.span_ns[0] - run.busy_ns[0],
            bubble,
            "p={p} m={m} F={f} B={b} W={w}"
        );
        assert_eq!(run.span_ns.iter().max(), Some(&run.span_ns[0]));
        assert_eq!(run.peak_in_flight[0], f64::from(2 * p - 1));
        let form = theory_bubble_ratio(&params, ScheduleKind::ZbH2).unwrap();
        assert!(form.over_spans);
        assert!((run.span_bubble_ratio() - form.bubble_ratio).abs() < 1e-12);
    }
}

#[test]
fn dualpipe_shapes_are_checked_with_the_source_rule() {
    let dual = |p, m| PipelineParams {
        schedules: vec![ScheduleKind::DualPipe],
        ..params(p, m)
    };
    let field = |e: bubblelab_core::scenario::ScenarioError| e.to_string();
    assert!(field(dual(3, 6).validate().unwrap_err()).contains("pipeline.stages"));
    assert!(field(dual(4, 9).validate().unwrap_err()).contains("pipeline.micro_batches"));
    assert!(field(dual(4, 6).validate().unwrap_err()).contains("at least 2·stages (8)"));
    assert!(dual(4, 8).validate().is_ok());
}

/// (p, m, F, B, W, P2P in ns per device stage, W's share of activations).
type Shape = (u32, u32, u64, u64, u64, u64, f64);

/// ZB-V orders printed by the source's own planner: sail-sg zero-bubble-pipeline-parallelism
/// @39f2c18, `zbv.py` `PipelineGraph(n, m, f, b, w, c, 1000000, −(1000000 − k), −k)` with the
/// chunk times below halved (a chunk is half a device's stage), `try_v_schedule` over the four
/// fill modes keeping the first strictly smallest bubble (as `create_schedule`), run with
/// Python 3 on 2026-12-06; planner chunks mapped back to model chunks as `create_schedule`
/// does.
const ZBV_SOURCE_ORDERS: [(Shape, [&str; 4]); 2] = [
    (
        (4, 8, 2000, 2000, 2000, 0, 0.5),
        [
            "F0:0 F0:1 F0:2 F0:3 F0:4 F0:5 F0:6 F1:0 b1:0 W1:0 F1:1 b1:1 W1:1 F1:2 b1:2 W1:2 F1:3 b1:3 W1:3 F0:7 b0:0 W0:0 F1:4 b1:4 W1:4 b0:1 W0:1 F1:5 b1:5 W1:5 b0:2 W0:2 F1:6 b1:6 W1:6 b0:3 W0:3 F1:7 b1:7 b0:4 W1:7 b0:5 W0:4 b0:6 W0:5 b0:7 W0:6 W0:7",
            "F0:0 F0:1 F0:2 F0:3 F0:4 F1:0 F0:5 F1:1 b1:0 W1:0 F1:2 b1:1 W1:1 F1:3 b1:2 W1:2 F0:6 b0:0 W0:0 F1:4 b1:3 W1:3 F0:7 b0:1 W0:1 F1:5 b1:4 W1:4 b0:2 W0:2 F1:6 b1:5 W1:5 b0:3 W0:3 F1:7 b1:6 b0:4 b1:7 b0:5 W1:6 b0:6 W0:4 b0:7 W1:7 W0:5 W0:6 W0:7",
            "F0:0 F0:1 F0:2 F1:0 F0:3 F1:1 F0:4 F1:2 b1:0 W1:0 F1:3 b1:1 W1:1 F0:5 b0:0 W0:0 F1:4 b1:2 W1:2 F0:6 b0:1 W0:1 F1:5 b1:3 W1:3 F0:7 b0:2 W0:2 F1:6 b1:4 W1:4 b0:3 W0:3 F1:7 b1:5 b0:4 b1:6 b0:5 b1:7 b0:6 W1:5 b0:7 W0:4 W1:6 W0:5 W1:7 W0:6 W0:7",
            "F0:0 F1:0 F0:1 F1:1 F0:2 F1:2 F0:3 F1:3 b1:0 W1:0 F0:4 b0:0 W0:0 F1:4 b1:1 W1:1 F0:5 b0:1 W0:1 F1:5 b1:2 W1:2 F0:6 b0:2 W0:2 F1:6 b1:3 W1:3 F0:7 b0:3 W0:3 F1:7 b1:4 b0:4 b1:5 b0:5 b1:6 b0:6 b1:7 b0:7 W1:4 W0:4 W1:5 W0:5 W1:6 W0:6 W1:7 W0:7",
        ],
    ),
    (
        (4, 10, 4000, 6000, 2000, 0, 0.5),
        [
            "F0:0 F0:1 F0:2 F0:3 F0:4 F0:5 F0:6 F1:0 b1:0 W1:0 F1:1 b1:1 W1:1 F1:2 b1:2 W1:2 F1:3 b1:3 W1:3 F0:7 b0:0 W0:0 F1:4 b1:4 W1:4 F0:8 b0:1 W0:1 F1:5 b1:5 W1:5 F0:9 b0:2 W0:2 F1:6 b1:6 W1:6 b0:3 F1:7 b1:7 W0:3 W1:7 b0:4 F1:8 b1:8 W0:4 W1:8 b0:5 F1:9 b1:9 W0:5 b0:6 W1:9 W0:6 b0:7 W0:7 b0:8 W0:8 b0:9 W0:9",
            "F0:0 F0:1 F0:2 F0:3 F0:4 F1:0 F0:5 F1:1 b1:0 W1:0 F1:2 b1:1 W1:1 F1:3 b1:2 W1:2 F0:6 b0:0 W0:0 F1:4 b1:3 W1:3 F0:7 b0:1 W0:1 F1:5 b1:4 W1:4 F0:8 b0:2 W0:2 F1:6 b1:5 W1:5 F0:9 b0:3 W0:3 F1:7 b1:6 W1:6 b0:4 F1:8 b1:7 W0:4 W1:7 b0:5 F1:9 b1:8 W0:5 b0:6 b1:9 b0:7 W1:8 W0:6 W1:9 b0:8 W0:7 W0:8 b0:9 W0:9",
            "F0:0 F0:1 F0:2 F1:0 F0:3 F1:1 F0:4 F1:2 b1:0 W1:0 F1:3 b1:1 W1:1 F0:5 b0:0 W0:0 F1:4 b1:2 W1:2 F0:6 b0:1 W0:1 F1:5 b1:3 W1:3 F0:7 b0:2 W0:2 F1:6 b1:4 W1:4 F0:8 b0:3 W0:3 F1:7 b1:5 W1:5 F0:9 b0:4 W0:4 F1:8 b1:6 W1:6 b0:5 F1:9 b1:7 W0:5 b0:6 b1:8 b0:7 b1:9 b0:8 W1:7 W0:6 W1:8 b0:9 W0:7 W1:9 W0:8 W0:9",
            "F0:0 F1:0 F0:1 F1:1 F0:2 F1:2 F0:3 F1:3 b1:0 W1:0 F0:4 b0:0 W0:0 F1:4 b1:1 W1:1 F0:5 b0:1 W0:1 F1:5 b1:2 W1:2 F0:6 b0:2 W0:2 F1:6 b1:3 W1:3 F0:7 b0:3 W0:3 F1:7 b1:4 W1:4 F0:8 b0:4 W0:4 F1:8 b1:5 W1:5 F0:9 b0:5 W0:5 F1:9 b1:6 b0:6 b1:7 b0:7 b1:8 b0:8 b1:9 b0:9 W1:6 W0:6 W1:7 W0:7 W1:8 W0:8 W1:9 W0:9",
        ],
    ),
];

const ZBV_SOURCE_ORDERS_P3: [(Shape, [&str; 3]); 1] = [
    (
        (3, 7, 3000, 2000, 4000, 300, 0.3),
        [
            "F0:0 F0:1 F0:2 F0:3 F0:4 F1:0 b1:0 W1:0 F1:1 b1:1 W1:1 F1:2 b1:2 W1:2 F0:5 b0:0 W0:0 F1:3 b1:3 W1:3 F0:6 b0:1 W0:1 F1:4 b1:4 W1:4 b0:2 W0:2 F1:5 b1:5 W1:5 b0:3 W0:3 F1:6 b1:6 b0:4 W1:6 W0:4 b0:5 W0:5 b0:6 W0:6",
            "F0:0 F0:1 F0:2 F1:0 F0:3 F1:1 b1:0 W1:0 F1:2 b1:1 W1:1 F0:4 b0:0 W0:0 F1:3 b1:2 W1:2 F0:5 b0:1 W0:1 F1:4 b1:3 W1:3 F0:6 b0:2 W0:2 F1:5 b1:4 W1:4 b0:3 W0:3 F1:6 b1:5 b0:4 W1:5 b1:6 b0:5 W0:4 b0:6 W1:6 W0:5 W0:6",
            "F0:0 F1:0 F0:1 F1:1 F0:2 F1:2 b1:0 W1:0 F0:3 b0:0 W0:0 F1:3 b1:1 W1:1 F0:4 b0:1 W0:1 F1:4 b1:2 W1:2 F0:5 b0:2 W0:2 F1:5 b1:3 W1:3 F0:6 b0:3 W0:3 F1:6 b1:4 b0:4 b1:5 b0:5 W1:4 b1:6 b0:6 W0:4 W1:5 W0:5 W1:6 W0:6",
        ],
    ),
];

fn check_zbv_orders<const P: usize>(cases: &[(Shape, [&str; P])]) {
    for &((p, m, f, b, w, p2p, keep), ref orders) in cases {
        let params = PipelineParams {
            p2p_ns: p2p,
            w_memory_fraction: keep,
            ..times(p, m, f, b, w)
        };
        for (d, expected) in orders.iter().enumerate() {
            let got = program(ScheduleKind::ZbV, &params, d as u32);
            assert_eq!(&got, expected, "p={p} m={m} device {d}");
        }
    }
}

#[test]
fn zb_v_places_ops_as_the_source_planner_does() {
    check_zbv_orders(&ZBV_SOURCE_ORDERS);
    check_zbv_orders(&ZBV_SOURCE_ORDERS_P3);
}
