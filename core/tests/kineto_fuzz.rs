//! Fuzzing the Kineto reader: random bytes, random JSON, truncated prefixes and bit flips of a
//! synthetic (and, when the data folder is there, a real) trace, plain and gzip. The reader
//! must return a value or an error, never panic; truncated input must be an error. Properties
//! of the timelines and of the overlap metric on random kernel sets.
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::kineto::{
    crc32, exact_comm_comp_overlap, parse_trace_with_limit, report, GpuEvent, KernelClass,
    RankTrace,
};
use proptest::prelude::*;

const LIMIT: usize = 4 << 20;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    out.extend(crc32(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

/// A small trace with the event mix of a real one: CPU ops, runtime calls, flows, metadata,
/// kernels, NCCL kernels, memcpy, a sync record, `distributedInfo`.
fn synthetic() -> String {
    let mut events = Vec::new();
    for i in 0..12 {
        let t = 1000.0 + f64::from(i) * 7.25;
        events.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":9,"tid":9,"ts":{t},"dur":5,"args":{{"External id":{i},"Input Dims":[[2,3],[3]]}}}}"#
        ));
        events.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":{t},"dur":1.5,"args":{{"correlation":{i}}}}}"#
        ));
        events.push(format!(
            r#"{{"ph":"s","id":{i},"pid":9,"tid":9,"ts":{t},"cat":"ac2g","name":"ac2g"}}"#
        ));
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"void gemm_{i}<float>(float const*)","pid":0,"tid":7,"ts":{},"dur":3.125,"args":{{"device":0,"stream":7,"grid":[1,2,3]}}}}"#,
            t + 2.0
        ));
        if i % 3 == 0 {
            events.push(format!(
                r#"{{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)","pid":0,"tid":20,"ts":{},"dur":9,"args":{{"device":0,"stream":20}}}}"#,
                t + 1.0
            ));
        }
    }
    events.push(r#"{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":22,"ts":1001,"dur":1,"args":{"stream":22,"device":0}}"#.into());
    events.push(r#"{"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":7,"ts":1090,"dur":2,"args":{"stream":7,"device":0}}"#.into());
    events.push(
        r#"{"name":"thread_name","ph":"M","pid":0,"tid":7,"args":{"name":"stream 7"}}"#.into(),
    );
    format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA H100"}}],"distributedInfo":{{"backend":"nccl","rank":5,"world_size":8}},"traceEvents":[{}],"traceName":"x"}}"#,
        events.join(",\n")
    )
}

#[test]
fn the_synthetic_trace_reads() {
    let t = parse_trace_with_limit(synthetic().as_bytes(), LIMIT).unwrap();
    assert_eq!(t.rank(), Some(5));
    assert_eq!(t.count(KernelClass::Communication), 4);
    assert_eq!(t.count(KernelClass::Computation), 12);
    assert_eq!(t.count(KernelClass::Other), 1);
    assert!(t.exact_overlap().percent().unwrap() > 0.0);
}

#[test]
fn every_proper_prefix_is_an_error() {
    let text = synthetic();
    let bytes = text.as_bytes();
    let gz = gzip(bytes);
    for cut in 0..bytes.len() {
        assert!(
            parse_trace_with_limit(&bytes[..cut], LIMIT).is_err(),
            "plain cut {cut}"
        );
    }
    for cut in 0..gz.len() {
        assert!(
            parse_trace_with_limit(&gz[..cut], LIMIT).is_err(),
            "gzip cut {cut}"
        );
    }
}

fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| if v.is_finite() {
            format!("{v:e}")
        } else {
            "1e999".into()
        }),
        "[a-zA-Z0-9 _\\\\\"]{0,12}".prop_map(|s| format!("{s:?}")),
        prop_oneof![
            Just("\"X\""),
            Just("\"kernel\""),
            Just("\"cuda_sync\""),
            Just("\"gpu_memcpy\""),
            Just("\"ncclKernel_x\""),
            Just("\"stream 7\""),
            Just("\"12.5\""),
            Just("-0.0005"),
            Just("9223372036854775807"),
            Just("1e-400"),
        ]
        .prop_map(str::to_string),
    ];
    leaf.prop_recursive(4, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("ph"),
                        Just("cat"),
                        Just("name"),
                        Just("ts"),
                        Just("dur"),
                        Just("tid"),
                        Just("pid"),
                        Just("args"),
                        Just("stream"),
                        Just("device"),
                        Just("rank"),
                        Just("x")
                    ],
                    inner
                ),
                0..7
            )
            .prop_map(|kv| {
                let fields: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", fields.join(","))
            }),
        ]
    })
}

/// Runs the reader and checks the invariants of what it returns.
fn read(bytes: &[u8]) -> Result<RankTrace, String> {
    match parse_trace_with_limit(bytes, LIMIT) {
        Ok(t) => {
            for e in &t.events {
                assert!((e.name as usize) < t.names.len());
                assert!(e.start_ns.checked_add(e.dur_ns as i64).is_some());
            }
            let o = t.exact_overlap();
            assert!(o.overlap_ns <= o.comm_ns.min(o.compute_ns));
            for include_last_profiler_step in [false, true] {
                let h = t.hta_overlap(bubblelab_core::kineto::HtaOptions {
                    include_last_profiler_step,
                });
                assert!(h.overlap_us.is_finite() && h.comm_us.is_finite());
                if !h.rounded && t.hta.rows.iter().all(|r| r.dur_us >= 0.0) {
                    // Without rounding every interval is non-negative: the overlap fits.
                    assert!(
                        h.overlap_us >= 0.0 && h.overlap_us <= h.comm_us.min(h.compute_us) + 1e-6
                    );
                }
            }
            let _ = report(&[("fuzz".into(), t.clone())]);
            Ok(t)
        }
        Err(e) => {
            let text = e.to_string();
            assert!(!text.is_empty());
            Err(text)
        }
    }
}

/// Cases per target: `BUBBLELAB_FUZZ_CASES` (the recorded volume runs), else `default`.
fn fuzz_cases(default: u32) -> u32 {
    std::env::var("BUBBLELAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_cases(512), ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = read(&bytes);
        let mut gz = vec![0x1f, 0x8b];
        gz.extend(&bytes);
        let _ = read(&gz);
    }

    #[test]
    fn random_json_never_panics(
        events in prop::collection::vec(json_value(), 0..8),
        dist in json_value(),
        top in json_value(),
    ) {
        let doc = format!(r#"{{"distributedInfo":{dist},"traceEvents":[{}],"x":{top}}}"#, events.join(","));
        let _ = read(doc.as_bytes());
        let _ = read(&gzip(doc.as_bytes()));
        let bare = format!("[{}]", events.join(","));
        let _ = read(bare.as_bytes());
    }

    #[test]
    fn bit_flips_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..6)) {
        let text = synthetic();
        let mut plain = text.into_bytes();
        let mut gz = gzip(&plain);
        for (at, bit) in &flips {
            let i = at.index(plain.len());
            plain[i] ^= 1 << bit;
            let j = at.index(gz.len());
            gz[j] ^= 1 << bit;
        }
        let _ = read(&plain);
        let _ = read(&gz);
    }

    #[test]
    fn truncated_gzip_is_an_error(cut in any::<prop::sample::Index>()) {
        let gz = gzip(synthetic().as_bytes());
        let cut = cut.index(gz.len());
        prop_assert!(read(&gz[..cut]).is_err());
    }

    #[test]
    fn hta_equals_the_exact_variant_on_integer_traces_with_one_step(
        kernels in prop::collection::vec((0usize..5, 0i64..3, 0u32..2_000, 0u32..400), 0..40),
    ) {
        // Integer µs (no rounding), no ProfilerStep (no filter), every kernel with args.stream:
        // HTA's rules and the exact variant must then agree to the nanosecond.
        let names = ["ncclKernel_AllReduce_RING", "ncclDevKernel_SendRecv", "gemm", "Memcpy DtoD", "Event Sync"];
        let events: Vec<String> = kernels
            .iter()
            .map(|&(n, stream, ts, dur)| format!(
                r#"{{"ph":"X","cat":"kernel","name":"{}","pid":0,"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"stream":{stream},"correlation":1}}}}"#,
                names[n]
            ))
            .collect();
        let text = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
        let t = parse_trace_with_limit(text.as_bytes(), LIMIT).unwrap();
        let h = t.hta_overlap(bubblelab_core::kineto::HtaOptions::default());
        let x = t.exact_overlap();
        prop_assert!(!h.rounded && !h.step_filtered);
        prop_assert_eq!(h.comm_us * 1000.0, x.comm_ns as f64);
        prop_assert_eq!(h.compute_us * 1000.0, x.compute_ns as f64);
        prop_assert_eq!(h.overlap_us * 1000.0, x.overlap_ns as f64);
    }

    #[test]
    fn overlap_and_lanes_hold_their_invariants(
        kernels in prop::collection::vec((0u8..4, 0i64..4, 0i64..10_000, 0u64..3_000), 0..60),
    ) {
        let events: Vec<GpuEvent> = kernels
            .iter()
            .enumerate()
            .map(|(i, &(class, stream, start_ns, dur_ns))| GpuEvent {
                name: 0,
                class: [KernelClass::Communication, KernelClass::Computation, KernelClass::Memory, KernelClass::Other][class as usize],
                device: Some(0),
                stream,
                start_ns,
                dur_ns,
                event_index: i as u64,
            })
            .collect();
        let o = exact_comm_comp_overlap(&events);
        // Brute force over every ns.
        let covered = |class: KernelClass, t: i64| events.iter().any(|e| e.class == class && e.start_ns <= t && t < e.end_ns());
        let (mut comm, mut comp, mut both) = (0u64, 0u64, 0u64);
        for t in 0..13_000 {
            let (c, p) = (covered(KernelClass::Communication, t), covered(KernelClass::Computation, t));
            comm += u64::from(c);
            comp += u64::from(p);
            both += u64::from(c && p);
        }
        prop_assert_eq!((o.comm_ns, o.compute_ns, o.overlap_ns), (comm, comp, both));
        if let Some(p) = o.percent() {
            prop_assert!((0.0..=100.0).contains(&p));
        }
        let trace = RankTrace { names: vec!["k".into()], events: events.clone(), ..RankTrace::default() };
        let (tl, _) = trace.timeline("t");
        let spans: usize = tl.lanes.iter().map(|l| l.spans.len()).sum();
        prop_assert_eq!(spans, events.len());
        for lane in &tl.lanes {
            for w in lane.spans.windows(2) {
                prop_assert!(w[0].start_ns + w[0].dur_ns <= w[1].start_ns, "{:?}", lane.name);
            }
        }
    }
}

/// Prefixes and bit flips of a real trace, when the data folder is there (no CI requirement:
/// the real-data tests in `kineto_real.rs` already enforce the folder under CI).
#[test]
fn real_trace_prefixes_and_flips_never_panic() {
    let dir = std::env::var_os("BUBBLELAB_DATA").map_or_else(
        || std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")),
        std::path::PathBuf::from,
    );
    let path = dir
        .join("param_dlrm_8rank_kineto_et/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json");
    let Ok(plain) = std::fs::read(&path) else {
        eprintln!("skipped: no data folder");
        return;
    };
    let gz = gzip(&plain);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: usize| {
        // splitmix64: a fixed, portable sequence of cut points.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as usize % n
    };
    for _ in 0..24 {
        let cut = next(plain.len());
        let trimmed = plain[..cut].trim_ascii_end().len() == cut;
        let r = read(&plain[..cut]);
        if trimmed {
            assert!(r.is_err(), "prefix {cut}");
        }
        assert!(read(&gz[..next(gz.len())]).is_err());
        let mut flipped = plain.clone();
        let i = next(flipped.len());
        flipped[i] ^= 1 << next(8);
        let _ = read(&flipped);
        let mut flipped = gz.clone();
        let i = next(flipped.len());
        flipped[i] ^= 1 << next(8);
        let _ = read(&flipped);
    }
}
