//! Property tests of the pipeline lab: for random shapes and times, every schedule respects
//! every dependency, runs one op at a time per stage and per link, runs every op exactly once,
//! and returns memory to zero.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use bubblelab_core::labs::pipeline::{
    run_schedule, OpKind, PipelineParams, ScheduleKind, StageTimes,
};
use bubblelab_core::units::Nanos;
use proptest::prelude::*;

fn arb_params() -> impl Strategy<Value = PipelineParams> {
    (
        1u32..=6,
        1u32..=4,
        2u32..=3,
        0u64..=3,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(p, m_groups, v, p2p_units, per_stage, slow)| {
            let m = p * m_groups;
            let times = prop::collection::vec((1u64..=9, 1u64..=9, 0u64..=9), p as usize);
            let slowdown = prop::collection::vec(1.0f64..=3.0, p as usize);
            (Just((p, m, v, p2p_units, per_stage, slow)), times, slowdown)
        })
        .prop_map(
            |((p, m, v, p2p_units, per_stage, slow), times, slowdown)| PipelineParams {
                stages: p,
                micro_batches: m,
                virtual_stages: v,
                forward_ns: 1000,
                backward_input_ns: 1000,
                backward_weight_ns: 1000,
                p2p_ns: p2p_units * 300,
                stage_times: if per_stage {
                    times
                        .into_iter()
                        .map(|(f, b, w)| StageTimes {
                            forward_ns: f * 100,
                            backward_input_ns: b * 100,
                            backward_weight_ns: w * 100,
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                stage_slowdown: if slow { slowdown } else { Vec::new() },
                ..PipelineParams::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn schedules_respect_dependencies_and_resources(params in arb_params()) {
        prop_assert!(params.validate().is_ok());
        let p = params.stages;
        for kind in ScheduleKind::ALL {
            let only = PipelineParams { schedules: vec![kind], ..params.clone() };
            if only.validate().is_err() {
                // DualPipe's shape rules (even p, m ≥ 2p); checked in pipeline_known_answers.
                continue;
            }
            let run = run_schedule(&params, kind).unwrap();
            let m = params.micro_batches;
            let last = kind.path_len(p, params.virtual_stages) - 1;
            // Every op exactly once, keyed by the stage of its micro-batch's path.
            let mut at: BTreeMap<(OpKind, u32, u32), (Nanos, Nanos, u32)> = BTreeMap::new();
            for op in &run.ops {
                let stage = kind.path_stage(p, op.device, &op.op);
                prop_assert_eq!(kind.device_at(p, m, op.op.mb, stage), op.device);
                prop_assert!(at.insert((op.op.kind, stage, op.op.mb), (op.start, op.end, op.device)).is_none());
            }
            // One op at a time per stage and per link.
            let mut by_device: BTreeMap<u32, Vec<(Nanos, Nanos)>> = BTreeMap::new();
            for op in &run.ops {
                by_device.entry(op.device).or_default().push((op.start, op.end));
            }
            let mut by_link: BTreeMap<(u32, u32), Vec<(Nanos, Nanos)>> = BTreeMap::new();
            for t in &run.transfers {
                by_link.entry((t.from, t.to)).or_default().push((t.start, t.end));
            }
            for spans in by_device.values_mut().chain(by_link.values_mut()) {
                spans.sort();
                for w in spans.windows(2) {
                    prop_assert!(w[0].1 <= w[1].0, "{:?}: overlap {:?}", kind, w);
                }
            }
            // Dependencies, with at least one P2P time between devices; each backward is whole
            // or split into B and a later W, never both.
            let hop = |from: u32, to: u32| if from == to { Nanos(0) } else { Nanos(params.p2p_ns) };
            let grad = |s: u32, mb: u32| at.get(&(OpKind::BackwardInput, s, mb)).or_else(|| at.get(&(OpKind::Backward, s, mb))).copied();
            let mut ops = 0;
            for mb in 0..m {
                for s in 0..=last {
                    let f = at[&(OpKind::Forward, s, mb)];
                    let b = grad(s, mb).expect("a backward");
                    prop_assert!(f.1 <= b.0, "{:?}: B before F", kind);
                    if s > 0 {
                        let prev = at[&(OpKind::Forward, s - 1, mb)];
                        prop_assert!(prev.1 + hop(prev.2, f.2) <= f.0, "{:?}: F order", kind);
                    }
                    if s < last {
                        let next = grad(s + 1, mb).expect("a backward");
                        prop_assert!(next.1 + hop(next.2, b.2) <= b.0, "{:?}: B order", kind);
                    }
                    let whole = at.contains_key(&(OpKind::Backward, s, mb));
                    let split = at.contains_key(&(OpKind::BackwardInput, s, mb));
                    prop_assert!(whole != split, "{:?}: backward whole xor split", kind);
                    if split {
                        let w = at[&(OpKind::BackwardWeight, s, mb)];
                        prop_assert!(b.1 <= w.0, "{:?}: W before B", kind);
                        ops += 1;
                    } else {
                        prop_assert!(!at.contains_key(&(OpKind::BackwardWeight, s, mb)));
                    }
                    prop_assert!(kind.splits_backward() || whole, "{:?}: split backward", kind);
                    ops += 2;
                }
            }
            prop_assert_eq!(ops, at.len());
            // Memory returns to zero; the iteration is at least one device's work.
            for points in &run.memory_points {
                prop_assert_eq!(points.last().map(|p| p.1), Some(0));
            }
            prop_assert!(run.busy_ns.iter().all(|b| *b <= run.iteration_ns));
            let bubble = run.overall_bubble_ratio();
            prop_assert!((0.0..1.0).contains(&bubble));
        }
    }

    #[test]
    fn timelines_never_overlap_on_a_lane(params in arb_params()) {
        let report = bubblelab_core::labs::pipeline::run(&params).unwrap();
        for t in &report.timelines {
            for lane in &t.lanes {
                for w in lane.spans.windows(2) {
                    prop_assert!(w[0].start_ns + w[0].dur_ns <= w[1].start_ns, "{} / {}", t.name, lane.name);
                }
            }
        }
    }
}
