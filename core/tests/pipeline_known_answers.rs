//! Known answers of the pipeline lab, from the papers' closed forms.
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::labs::pipeline::{
    run_schedule, theory_bubble_ratio, PipelineParams, ScheduleKind,
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
        assert!((inter.overall_bubble_ratio() - expected).abs() < 1e-12);
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
        assert!((zb.overall_bubble_ratio() - expected).abs() < 1e-12);
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
