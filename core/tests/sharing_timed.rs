//! Known answers of the sharing lab's timed experiment: the kernel's contention model on one
//! GPU, exclusive GPUs queueing instead of sharing, Gandiva-style unpacking moving the slowest
//! pod after the check delay and pausing it for the move, and invariants over random runs
//! (every pod that fits some node runs to its end, never faster than solo, allocation within
//! capacity; exclusive GPUs never slow a pod).
#![allow(clippy::unwrap_used)]

use bubblelab_core::labs::sharing::cluster::{Cluster, Pod};
use bubblelab_core::labs::sharing::params::{pod, NodeGroup, GPU_MILLI};
use bubblelab_core::labs::sharing::timed::{self, Arrival, Variant};
use bubblelab_core::labs::sharing::{run, Experiment, SharingParams, SharingPolicy, TimedSpec};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

const S: u64 = 1_000_000_000;

fn one_node(gpus: u32) -> SharingParams {
    SharingParams {
        nodes: vec![NodeGroup {
            count: 1,
            model: "G2".into(),
            gpus,
            cpu_milli: 96_000,
            memory_mib: 393_216,
        }],
        pods: vec![pod(1, 1000, 1000, 1, 500)],
        policies: vec![SharingPolicy::BestFit],
        experiment: Experiment::Timed,
        ..SharingParams::default()
    }
}

fn half(at_s: u64, duration_s: u64) -> Arrival {
    Arrival {
        pod: Pod {
            cpu_milli: 1000,
            memory_mib: 1000,
            num_gpu: 1,
            gpu_milli: 500,
            models: u64::MAX,
        },
        at_ns: at_s * S,
        duration_ns: duration_s * S,
    }
}

#[test]
fn a_lone_pod_runs_at_solo_speed_and_co_runners_slow_each_other() {
    let params = one_node(1);
    let r = timed::run(
        &params,
        &[half(0, 1000)],
        Variant::Packing(SharingPolicy::BestFit),
    );
    assert_eq!(r.pods[0], (0, 0, 1000 * S));
    // Two halves on one GPU: each at 1/(1 + 0.5). The shorter ends at 1.5 × 600 = 900 s,
    // when the longer has done 600 s of its 1,000 and then runs alone: 900 + 400 = 1,300 s.
    let r = timed::run(
        &params,
        &[half(0, 600), half(0, 1000)],
        Variant::Packing(SharingPolicy::BestFit),
    );
    assert_eq!(r.pods[0].2, 900 * S);
    assert_eq!(r.pods[1].2, 1300 * S);
    // Exclusive GPUs: the second waits for the first.
    let r = timed::run(&params, &[half(0, 600), half(0, 1000)], Variant::Exclusive);
    assert_eq!(r.pods[0], (0, 0, 600 * S));
    assert_eq!(r.pods[1], (0, 600 * S, 1600 * S));
}

#[test]
fn unpacking_moves_the_slowest_pod_after_the_check_and_pauses_it() {
    // Two GPUs; BestFit packs both halves on GPU 0 (least free that fits), each at 2/3 < 0.8.
    let params = SharingParams {
        timed: TimedSpec {
            unpack_below: 0.8,
            check_after_s: 60.0,
            migration_s: 3.5,
            ..TimedSpec::default()
        },
        ..one_node(2)
    };
    let arrivals = [half(0, 1000), half(0, 1000)];
    let packed = timed::run(&params, &arrivals, Variant::Packing(SharingPolicy::BestFit));
    assert_eq!(packed.pods[0].2, 1500 * S);
    assert_eq!(packed.moves, 0);
    let r = timed::run(
        &params,
        &arrivals,
        Variant::Unpacking(SharingPolicy::BestFit),
    );
    assert_eq!(r.moves, 1);
    // At 60 s both have done 40 s of work. Pod 0 (the first of the two slowest) moves, pauses
    // 3.5 s, then runs alone: 63.5 + 960 s. Pod 1 is alone from 60 s: 60 + 960 s.
    assert_eq!(r.pods[0].2, 1_023_500_000_000);
    assert_eq!(r.pods[1].2, 1020 * S, "{:?}", r.pods);
    // With a bound of 0.5 nothing is slow enough to move.
    let lax = SharingParams {
        timed: TimedSpec {
            unpack_below: 0.5,
            ..params.timed.clone()
        },
        ..params.clone()
    };
    let r = timed::run(&lax, &arrivals, Variant::Unpacking(SharingPolicy::BestFit));
    assert_eq!(r.moves, 0);
    assert_eq!(r.pods[0].2, 1500 * S);
}

#[test]
fn every_pod_runs_to_its_end_within_capacity() {
    for case in 0..40u64 {
        let mut rng = Pcg64Mcg::seed_from_u64(case);
        let params = SharingParams {
            nodes: vec![NodeGroup {
                count: rng.random_range(1..5u32),
                model: "G2".into(),
                gpus: [1, 2, 4, 8][rng.random_range(0..4usize)],
                cpu_milli: 64_000,
                memory_mib: 262_144,
            }],
            pods: vec![
                pod(
                    rng.random_range(1..10u32),
                    2000,
                    4000,
                    1,
                    [810, 470, 320, 230][rng.random_range(0..4usize)],
                ),
                pod(rng.random_range(1..10u32), 4000, 8000, 1, 1000),
                pod(rng.random_range(0..3u32).max(1), 1000, 1000, 0, 0),
                pod(1, 8000, 16_000, 2, 1000),
            ],
            policies: vec![
                SharingPolicy::Fgd,
                SharingPolicy::BestFit,
                SharingPolicy::Random,
            ],
            experiment: Experiment::Timed,
            timed: TimedSpec {
                pods: 150,
                load: rng.random_range(0.5..1.5f64),
                mean_duration_s: 600.0,
                ..TimedSpec::default()
            },
            first_seed: case,
            ..SharingParams::default()
        };
        params.validate().unwrap();
        let cluster = Cluster::new(&params.nodes);
        let capacity = cluster.gpus() * u64::from(GPU_MILLI);
        let arrivals = timed::arrivals(&params, &cluster);
        for v in bubblelab_core::labs::sharing::timed_variants(&params) {
            let r = timed::run(&params, &arrivals, v);
            for (i, &(at, start, end)) in r.pods.iter().enumerate() {
                if start == u64::MAX {
                    continue;
                }
                assert!(
                    start >= at && end >= start + arrivals[i].duration_ns,
                    "{v:?} case {case} pod {i}"
                );
                if v == Variant::Exclusive {
                    assert_eq!(
                        end - start,
                        arrivals[i].duration_ns,
                        "exclusive GPUs never slow a pod"
                    );
                }
            }
            assert!(
                r.allocated.iter().all(|&(_, m)| m <= capacity),
                "{v:?} case {case}"
            );
            assert_eq!(
                r.allocated.last().unwrap().1,
                0,
                "{v:?} case {case}: everything released"
            );
        }
    }
}

#[test]
fn the_timed_report_has_a_row_per_variant_and_is_deterministic() {
    let params = SharingParams {
        experiment: Experiment::Timed,
        policies: vec![SharingPolicy::Fgd],
        timed: TimedSpec {
            pods: 300,
            ..TimedSpec::default()
        },
        ..SharingParams::default()
    };
    let a = run(&params, &mut |_, _| {});
    assert_eq!(a, run(&params, &mut |_, _| {}));
    let table = a.tables.iter().find(|t| t.key == "timed").unwrap();
    assert_eq!(table.rows.len(), 3);
    assert!(
        a.metric("fgd-unpacking.mean_slowdown").unwrap() <= a.metric("fgd.mean_slowdown").unwrap()
    );
    assert!((a.metric("exclusive.mean_slowdown").unwrap() - 1.0).abs() < 1e-9);
}
