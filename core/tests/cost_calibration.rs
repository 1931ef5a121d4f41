//! The calibrated profile format (`bubblelab_core::hw::Calibration`): parsing, errors that name
//! the field, and how measured curves replace the analytical numbers.

#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::cost::{CollectiveKind, ComputeKind, ComputeWork, CostModel, Group};
use bubblelab_core::hw::{Calibration, GpuKind};
use bubblelab_core::ScenarioError;

const GOOD: &str = r#"{
  "version": 1,
  "device": "NVIDIA H100 80GB HBM3",
  "gemm": [
    {"dtype": "bf16", "flops": 1.0e9, "flops_per_s": 2.0e14},
    {"dtype": "bf16", "flops": 1.0e12, "flops_per_s": 7.0e14},
    {"dtype": "fp32", "flops": 1.0e9, "flops_per_s": 4.0e13}
  ],
  "memory": [{"bytes": 1.0e6, "bytes_per_s": 1.0e12}, {"bytes": 1.0e9, "bytes_per_s": 3.0e12}],
  "collectives": [
    {"kind": "all-reduce", "ranks": 8, "ranks_per_node": 8,
     "points": [{"bytes": 1048576, "bus_bytes_per_s": 5.0e10}, {"bytes": 67108864, "bus_bytes_per_s": 3.0e11}]}
  ]
}"#;

fn field_error(text: &str) -> (String, String) {
    match Calibration::from_json(text) {
        Err(ScenarioError::Field { path, message }) => (path, message),
        other => panic!("expected a field error, got {other:?}"),
    }
}

#[test]
fn a_good_profile_parses() {
    let c = Calibration::from_json(GOOD).expect("valid");
    assert_eq!(c.version, 1);
    assert_eq!(c.gemm.len(), 3);
    assert!(c
        .collective_curve(CollectiveKind::AllReduce, 8, 8)
        .is_some());
    assert!(c
        .collective_curve(CollectiveKind::AllReduce, 8, 4)
        .is_none());
    // Round trip.
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(Calibration::from_json(&json).unwrap(), c);
    // Every list is optional.
    let minimal = Calibration::from_json(r#"{"version": 1, "device": "x"}"#).unwrap();
    assert!(minimal.gemm.is_empty() && minimal.memory.is_empty() && minimal.collectives.is_empty());
}

#[test]
fn errors_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"version": 2, "device": "x"}"#,
            "calibration.version",
            "reads version 1",
        ),
        (
            r#"{"version": 1, "device": "x", "extra": 1}"#,
            "calibration.extra",
            "unknown field `extra`",
        ),
        (r#"{"version": 1}"#, "calibration", "missing field `device`"),
        (
            r#"{"version": 1, "device": "x", "gemm": [{"dtype": "bf16", "flops": -1, "flops_per_s": 1e14}]}"#,
            "calibration.gemm[0].flops",
            "positive finite",
        ),
        (
            r#"{"version": 1, "device": "x", "gemm": [{"dtype": "int8", "flops": 1, "flops_per_s": 1e14}]}"#,
            "calibration.gemm[0].dtype",
            "unknown variant `int8`",
        ),
        (
            r#"{"version": 1, "device": "x", "memory": [{"bytes": 2e6, "bytes_per_s": 1e12}, {"bytes": 1e6, "bytes_per_s": 1e12}]}"#,
            "calibration.memory[1].bytes",
            "must increase",
        ),
        (
            r#"{"version": 1, "device": "x", "memory": [{"bytes": 1e6, "bytes_per_s": 1e11}, {"bytes": 2e6, "bytes_per_s": 1e13}]}"#,
            "calibration.memory[1].bytes_per_s",
            "shorter time",
        ),
        (
            r#"{"version": 1, "device": "x", "comm_compute_slowdown": -0.1}"#,
            "calibration.comm_compute_slowdown",
            "fraction in [0, 10]",
        ),
        (
            r#"{"version": 1, "device": "x", "collectives": [{"kind": "all-reduce", "ranks": 1, "ranks_per_node": 1, "points": [{"bytes": 1, "bus_bytes_per_s": 1}]}]}"#,
            "calibration.collectives[0].ranks",
            "at least 2",
        ),
        (
            r#"{"version": 1, "device": "x", "collectives": [{"kind": "all-reduce", "ranks": 8, "ranks_per_node": 9, "points": [{"bytes": 1, "bus_bytes_per_s": 1}]}]}"#,
            "calibration.collectives[0].ranks_per_node",
            "between 1 and ranks",
        ),
        (
            r#"{"version": 1, "device": "x", "collectives": [{"kind": "all-reduce", "ranks": 8, "ranks_per_node": 8, "points": []}]}"#,
            "calibration.collectives[0].points",
            "at least one point",
        ),
        (
            r#"{"version": 1, "device": "x", "collectives": [{"kind": "all-reduce", "ranks": 8, "ranks_per_node": 8, "points": [{"bytes": 1024, "bus_bytes_per_s": 0}]}]}"#,
            "calibration.collectives[0].points[0].bus_bytes_per_s",
            "positive finite",
        ),
        (
            r#"{"version": 1, "device": "x", "collectives": [{"kind": "broadcast", "ranks": 8, "ranks_per_node": 8, "points": []}]}"#,
            "calibration.collectives[0].kind",
            "unknown variant `broadcast`",
        ),
        (
            r#"{"version": 1, "device": "x", "collectives": [
                {"kind": "all-gather", "ranks": 4, "ranks_per_node": 4, "points": [{"bytes": 1024, "bus_bytes_per_s": 1e9}]},
                {"kind": "all-gather", "ranks": 4, "ranks_per_node": 4, "points": [{"bytes": 1024, "bus_bytes_per_s": 1e9}]}]}"#,
            "calibration.collectives[1]",
            "repeats the group of collectives[0]",
        ),
    ];
    for (text, path, message) in cases {
        let (got_path, got_message) = field_error(text);
        assert_eq!(&got_path, path, "{text}");
        assert!(
            got_message.contains(message),
            "{text}: `{got_message}` lacks `{message}`"
        );
    }
    assert!(matches!(
        Calibration::from_json("{\"version\": 1,"),
        Err(ScenarioError::Syntax { .. })
    ));
    assert!(matches!(
        Calibration::from_json("not json"),
        Err(ScenarioError::Syntax { .. })
    ));
    assert!(matches!(
        Calibration::from_json(r#"{"version": 1, "device": "x"} trailing"#),
        Err(ScenarioError::Syntax { .. })
    ));
}

#[test]
fn equal_times_written_as_rates_are_not_shorter() {
    // Two points of one calibrate run, the second raised to the first one's 2003 ns (calibrate
    // keeps time monotone) and written as size / time: read back, size / rate of the second
    // can come out one ulp below the first's. Rounding is not a shorter time.
    let text = r#"{"version": 1, "device": "x", "gemm": [
        {"dtype": "fp32", "flops": 27648.0, "flops_per_s": 13803295057.413877},
        {"dtype": "fp32", "flops": 65536.0, "flops_per_s": 32718921617.57364}]}"#;
    Calibration::from_json(text).expect("equal times are monotone");
}

#[test]
fn a_measured_contention_replaces_the_links_slowdown() {
    let c =
        Calibration::from_json(r#"{"version": 1, "device": "x", "comm_compute_slowdown": 0.07}"#)
            .unwrap();
    let m = CostModel::new(GpuKind::H100).with_calibration(c);
    for g in [Group::new(8, 8), Group::new(16, 8), Group::new(4, 1)] {
        assert!((m.compute_slowdown(g) - 0.07).abs() < 1e-12);
    }
    // Without it, NVLink's analytical 15 % stays.
    let plain = CostModel::new(GpuKind::H100)
        .with_calibration(Calibration::from_json(r#"{"version": 1, "device": "x"}"#).unwrap());
    assert!((plain.compute_slowdown(Group::new(8, 8)) - 0.15).abs() < 1e-12);
}

#[test]
fn measured_curves_replace_the_analytical_ones() {
    let c = Calibration::from_json(GOOD).unwrap();
    let plain = CostModel::new(GpuKind::H100);
    let m = CostModel::new(GpuKind::H100).with_calibration(c);
    let launch = m.gpu.launch_overhead_ns;
    // At a measured point the time is exactly the measurement (plus the launch).
    let g = Group::new(8, 8);
    let factor = CollectiveKind::AllReduce.bus_factor(8);
    let t = m.collective_ns(CollectiveKind::AllReduce, 67_108_864.0, g);
    assert!(
        (t - (launch + factor * 67_108_864.0 / 3.0e11 * 1e9)).abs() < 1e-6,
        "{t}"
    );
    // Below the first point: never less than the first point's time.
    let first = m.collective_ns(CollectiveKind::AllReduce, 1_048_576.0, g);
    assert_eq!(m.collective_ns(CollectiveKind::AllReduce, 1024.0, g), first);
    // Other groups and kinds stay analytical.
    assert_eq!(
        m.collective_ns(CollectiveKind::AllGather, 1e6, g),
        plain.collective_ns(CollectiveKind::AllGather, 1e6, g)
    );
    assert_eq!(
        m.collective_ns(CollectiveKind::AllReduce, 1e6, Group::new(16, 8)),
        plain.collective_ns(CollectiveKind::AllReduce, 1e6, Group::new(16, 8))
    );
    // GEMM: exact at points, monotone between and beyond.
    let gemm = |flops: f64| ComputeWork {
        kind: ComputeKind::Gemm,
        flops,
        bytes: 0.0,
    };
    let t = m.compute_ns(&gemm(1e12));
    assert!((t - (launch + 1e12 / 7e14 * 1e9)).abs() < 1e-6);
    let mut last = 0.0;
    for e in 0..60 {
        let flops = 1e6 * 1.5f64.powi(e);
        let t = m.compute_ns(&gemm(flops));
        assert!(t > last, "{flops}");
        last = t;
    }
    // Attention has no calibrated curve: analytical.
    let attn = ComputeWork {
        kind: ComputeKind::Attention,
        flops: 1e12,
        bytes: 0.0,
    };
    assert_eq!(m.compute_ns(&attn), plain.compute_ns(&attn));
    // Memory: exact at a point.
    let mem = ComputeWork {
        kind: ComputeKind::MemoryBound,
        flops: 0.0,
        bytes: 1e9,
    };
    assert!((m.compute_ns(&mem) - (launch + 1e9 / 3e12 * 1e9)).abs() < 1e-6);
    // Collective curve monotone over sizes.
    let mut last = 0.0;
    for e in 0..40 {
        let bytes = 1024.0 * 1.6f64.powi(e);
        let t = m.collective_ns(CollectiveKind::AllReduce, bytes, g);
        assert!(t >= last, "{bytes}");
        last = t;
    }
}
