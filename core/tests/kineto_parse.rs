//! The Kineto reader on small hand-written traces: known overlap answers, HTA 0.5.0's rules one
//! at a time (each trace below was also run through HTA 0.5.0 itself, see `hta_*` tests),
//! timelines with overlapping kernels on one stream, gzip framing, and the exact error messages.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::kineto::{
    crc32, gunzip, parse_trace, parse_trace_with_limit, report, report_with, ErrorKind, HtaOptions,
    KernelClass, RankTrace,
};
use bubblelab_core::trace::to_chrome_trace;

/// One complete event as Kineto writes it (µs).
fn ev(cat: &str, name: &str, stream: i64, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":0,"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":{stream},"correlation":1}}}}"#
    )
}

fn trace(events: &[String], rank: i64) -> String {
    format!(
        r#"{{"schemaVersion":1,"distributedInfo":{{"backend":"nccl","rank":{rank},"world_size":2}},"traceEvents":[{}],"traceName":"t"}}"#,
        events.join(",")
    )
}

/// A gzip member around `data` (RFC 1952), compressed with miniz_oxide.
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    out.extend(crc32(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

/// comm [0,10) and [20,30) µs on stream 20; compute [5,25) on stream 7; a stream sync
/// [0,30) on stream 8 and a memcpy [0,30) on stream 9 that count as neither; CPU noise.
fn known() -> String {
    trace(
        &[
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":40,"args":{"External id":3}}"#.to_string(),
            ev("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 20, 1000.0, 10.0),
            ev("kernel", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", 20, 1020.0, 10.0),
            ev("kernel", "void gemm<float>(float const*)", 7, 1005.0, 20.0),
            ev("cuda_sync", "Stream Sync", 8, 1000.0, 30.0),
            ev("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 9, 1000.0, 30.0),
            r#"{"ph":"s","cat":"ac2g","name":"launch","pid":1,"tid":1,"ts":3,"id":1}"#.to_string(),
            r#"{"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"GPU 0"}}"#.to_string(),
        ],
        1,
    )
}

#[test]
fn known_overlap_excludes_sync_and_memory() {
    let t = parse_trace(known().as_bytes()).unwrap();
    assert_eq!(t.trace_events, 8);
    assert_eq!(t.events.len(), 5);
    assert_eq!(t.rank(), Some(1));
    assert_eq!(t.distributed.as_ref().unwrap().world_size, Some(2));
    assert_eq!(
        t.distributed.as_ref().unwrap().backend.as_deref(),
        Some("nccl")
    );
    assert_eq!(t.count(KernelClass::Communication), 2);
    assert_eq!(t.count(KernelClass::Computation), 1);
    assert_eq!(t.count(KernelClass::Other), 1);
    assert_eq!(t.count(KernelClass::Memory), 1);
    let o = t.exact_overlap();
    assert_eq!(o.comm_ns, 20_000);
    assert_eq!(o.compute_ns, 20_000);
    assert_eq!(o.overlap_ns, 10_000);
    assert_eq!(o.exposed_comm_ns(), 10_000);
    assert_eq!(o.percent(), Some(50.0));
}

#[test]
fn counting_sync_as_compute_would_inflate_the_overlap() {
    // What HTA computed before its PR #162 ("Correct Comm/comp Overlap Calculation"): the same
    // trace with the sync record renamed into a compute kernel covers all communication.
    let before_fix = known().replace(
        "\"cuda_sync\",\"name\":\"Stream Sync\"",
        "\"kernel\",\"name\":\"Stream\"",
    );
    let t = parse_trace(before_fix.as_bytes()).unwrap();
    assert_eq!(t.exact_overlap().percent(), Some(100.0));
}

#[test]
fn timeline_is_relative_to_the_first_gpu_event_with_one_lane_per_stream() {
    let t = parse_trace(known().as_bytes()).unwrap();
    let (tl, moved) = t.timeline("rank 1");
    assert_eq!(moved, 0);
    let names: Vec<&str> = tl.lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["stream 7", "stream 8", "stream 9", "stream 20"]);
    let comm = &tl.lanes[3].spans;
    assert_eq!(
        (comm[0].start_ns, comm[0].dur_ns, comm[0].cat.as_str()),
        (0, 10_000, "comm")
    );
    assert_eq!((comm[1].start_ns, comm[1].cat.as_str()), (20_000, "comm"));
    assert_eq!(tl.lanes[0].spans[0].cat, "compute");
    assert_eq!(tl.lanes[1].spans[0].cat, "other");
    assert_eq!(tl.lanes[0].spans[0].name, "void gemm<float>(float const*)");
}

#[test]
fn overlapping_kernels_on_one_stream_go_to_extra_lanes() {
    let t = parse_trace(
        trace(
            &[
                ev("kernel", "a", 7, 0.0, 10.0),
                ev("kernel", "b", 7, 5.0, 10.0), // overlaps a
                ev("kernel", "c", 7, 8.0, 1.0),  // overlaps a and b
                ev("kernel", "d", 7, 12.0, 1.0), // fits after a
                ev("kernel", "e", 7, 15.0, 0.0), // zero length, right at b's end
            ],
            0,
        )
        .as_bytes(),
    )
    .unwrap();
    let (tl, moved) = t.timeline("r");
    assert_eq!(moved, 2);
    let lanes: Vec<(&str, Vec<&str>)> = tl
        .lanes
        .iter()
        .map(|l| {
            (
                l.name.as_str(),
                l.spans.iter().map(|s| s.name.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        lanes,
        [
            ("stream 7", vec!["a", "d", "e"]),
            ("stream 7 #2", vec!["b"]),
            ("stream 7 #3", vec!["c"]),
        ]
    );
    for lane in &tl.lanes {
        for w in lane.spans.windows(2) {
            assert!(w[0].start_ns + w[0].dur_ns <= w[1].start_ns, "{lane:?}");
        }
    }
    let r = report(&[("x.json".into(), t)]);
    assert!(
        r.findings
            .iter()
            .any(|f| f.contains("2 GPU event(s) overlap")),
        "{:?}",
        r.findings
    );
}

#[test]
fn several_devices_get_device_lanes_and_legacy_fields_are_read() {
    // Older Kineto: capitalised categories, `tid` "stream 7", no args.stream; `ts` as a
    // string; no distributedInfo; the bare-array form of the Trace Event Format.
    let text = r#"[
        {"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":"stream 7","ts":"10.5","dur":2},
        {"ph":"X","cat":"Kernel","name":"k","pid":1,"tid":"stream 7","ts":11,"dur":2},
        {"ph":"X","cat":"Memcpy","name":"Memcpy HtoD","pid":1,"tid":"Stream 9","ts":11,"dur":1e0}
    ]"#;
    let t = parse_trace(text.as_bytes()).unwrap();
    assert_eq!(t.rank(), None);
    assert_eq!(t.names, ["k", "Memcpy HtoD"]);
    assert_eq!(t.events[0].start_ns, 10_500);
    assert_eq!(t.events[2].class, KernelClass::Memory);
    let (tl, _) = t.timeline("x");
    let names: Vec<&str> = tl.lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        ["GPU 0 stream 7", "GPU 1 stream 7", "GPU 1 stream 9"]
    );
    assert_eq!(t.exact_overlap().percent(), None);
}

#[test]
fn escaped_names_and_fractional_microseconds_are_exact() {
    let text = r#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"a\"b\u00e9","ts":4458676983543.183,"dur":0.0005,"args":{"stream":3}}]}"#;
    let t = parse_trace(text.as_bytes()).unwrap();
    assert_eq!(t.names, ["a\"bé"]);
    assert_eq!(t.events[0].start_ns, 4_458_676_983_543_183);
    assert_eq!(t.events[0].dur_ns, 0); // 0.5 ns rounds half to even
    assert_eq!(t.events[0].stream, 3);
    assert_eq!(t.events[0].device, None);
}

#[test]
fn report_has_a_row_per_rank_sorted_and_exports_to_chrome_trace() {
    let a = parse_trace(known().as_bytes()).unwrap();
    let b = parse_trace(trace(&[ev("kernel", "g", 7, 0.0, 1.0)], 0).as_bytes()).unwrap();
    let r = report(&[("one.json".into(), a), ("zero.json".into(), b)]);
    assert_eq!(r.lab, "kineto");
    let table = &r.tables[0];
    assert_eq!(table.rows.len(), 2);
    assert_eq!(table.rows[0][0].display(), "rank 0");
    assert_eq!(table.rows[1][0].display(), "rank 1");
    assert_eq!(table.rows[0][10].display(), "—"); // no communication on rank 0
    assert_eq!(r.metric("rank1.overlap_pct"), Some(50.0));
    assert_eq!(r.metric("all.comm_ms"), Some(0.02));
    assert_eq!(r.metric("all.exposed_comm_ms"), Some(0.01));
    assert_eq!(r.metric("all.overlap_pct"), Some(50.0));
    assert_eq!(r.metric("rank0.overlap_pct"), None);
    assert!(r
        .findings
        .iter()
        .any(|f| f.contains("rank 0 (zero.json): no communication")));
    assert!(r
        .findings
        .iter()
        .any(|f| f.contains("HTA") && f.contains("0.5.0")));
    assert_eq!(table.rows[1][11].display(), "50"); // the exact variant agrees here
    let text = r.to_text();
    assert!(
        text.contains("overlap (%)") && text.contains("50"),
        "{text}"
    );
    let chrome: serde_json::Value = serde_json::from_str(&to_chrome_trace(&r)).unwrap();
    let events = chrome["traceEvents"].as_array().unwrap();
    assert_eq!(events.iter().filter(|e| e["ph"] == "X").count(), 6);
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["args"]["name"] == "rank 1"));
    assert!(events
        .iter()
        .any(|e| e["ph"] == "X" && e["cat"] == "comm" && e["ts"] == 20.0));
}

#[test]
fn repeated_or_missing_ranks_get_input_ids() {
    let t = || parse_trace(known().as_bytes()).unwrap();
    let r = report(&[
        ("a".into(), t()),
        ("b".into(), t()),
        ("c".into(), RankTrace::default()),
    ]);
    assert_eq!(r.metric("trace0.overlap_pct"), Some(50.0));
    assert_eq!(r.metric("trace1.overlap_pct"), Some(50.0));
    assert_eq!(r.tables[0].rows[2][0].display(), "input 2");
}

#[test]
fn gzip_plain_and_multi_member_agree() {
    let text = known();
    let plain = parse_trace(text.as_bytes()).unwrap();
    let gz = gzip(text.as_bytes());
    assert_eq!(parse_trace(&gz).unwrap(), plain);
    // Two members concatenated (RFC 1952 §2.2) inflate to the concatenation.
    let (head, tail) = text.split_at(text.len() / 2);
    let mut two = gzip(head.as_bytes());
    two.extend(gzip(tail.as_bytes()));
    two.extend([0, 0, 0]); // zero padding after the last member is accepted
    assert_eq!(parse_trace(&two).unwrap(), plain);
    // Optional header fields: FEXTRA, FNAME, FCOMMENT, FHCRC.
    let mut fancy = vec![0x1f, 0x8b, 8, 0x1e, 0, 0, 0, 0, 0, 3, 2, 0, b'x', b'y'];
    fancy.extend(b"trace.json\0a comment\0");
    let hcrc = (crc32(&fancy) & 0xffff) as u16;
    fancy.extend(hcrc.to_le_bytes());
    fancy.extend(&gz[10..]);
    assert_eq!(parse_trace(&fancy).unwrap(), plain);
}

fn err(bytes: &[u8]) -> (ErrorKind, String) {
    let e = parse_trace_with_limit(bytes, 1 << 20).unwrap_err();
    (e.kind, e.to_string())
}

#[test]
fn gzip_errors_name_the_byte() {
    let text = known();
    let gz = gzip(text.as_bytes());
    let n = gz.len();
    let mut bad_crc = gz.clone();
    bad_crc[n - 8] ^= 1;
    let (kind, msg) = err(&bad_crc);
    assert_eq!(kind, ErrorKind::Gzip);
    assert!(
        msg.starts_with(&format!("gzip data, byte {}: CRC-32 mismatch", n - 8)),
        "{msg}"
    );
    let mut bad_size = gz.clone();
    bad_size[n - 1] ^= 1;
    assert!(err(&bad_size).1.contains("ISIZE mismatch"));
    assert_eq!(
        err(&gz[..n - 3]).1,
        format!(
            "gzip data, byte {}: truncated: the 8-byte CRC-32/ISIZE trailer is missing",
            n - 3
        )
    );
    let (kind, msg) = err(&gz[..n / 2]);
    assert_eq!(kind, ErrorKind::Gzip);
    assert!(
        msg.contains("truncated: the DEFLATE data ends before its final block"),
        "{msg}"
    );
    assert_eq!(
        err(&gz[..5]).1,
        "gzip data, byte 5: truncated: the 10-byte gzip header is incomplete"
    );
    let mut method = gz.clone();
    method[2] = 7;
    assert_eq!(
        err(&method).1,
        "gzip data, byte 2: compression method 7 is not DEFLATE (8)"
    );
    let mut trailing = gz.clone();
    trailing.extend(b"junk");
    assert_eq!(
        err(&trailing).1,
        format!("gzip data, byte {n}: unexpected bytes after the end of the gzip member")
    );
}

#[test]
fn inflated_size_is_capped() {
    let big = vec![b' '; 3 << 20];
    let gz = gzip(&big);
    assert!(gz.len() < 20_000);
    let e = parse_trace_with_limit(&gz, 1 << 20).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit);
    assert_eq!(
        e.to_string(),
        "the gzip data inflates to more than the 1048576-byte limit"
    );
    assert_eq!(gunzip(&gz, 4 << 20).unwrap().len(), 3 << 20);
}

#[test]
fn json_errors_name_the_byte_and_the_event() {
    // Truncated inside the second event.
    let text = known();
    let cut = text.find("ncclDevKernel").unwrap();
    let (kind, msg) = err(&text.as_bytes()[..cut]);
    assert_eq!(kind, ErrorKind::Json);
    assert_eq!(
        msg,
        format!(
            "byte {cut} (traceEvents[2]): EOF while parsing a string (the JSON ends early: truncated file?)"
        )
    );
    // Not an object where an event should be: the offset of a wrong container is its first
    // byte, of a wrong scalar the byte just past it.
    let (_, msg) = err(br#"{"traceEvents":[{"ph":"i"}, [5]]}"#);
    assert_eq!(
        msg,
        "byte 28 (traceEvents[1]): invalid type: sequence, expected a trace event object"
    );
    let (_, msg) = err(br#"{"traceEvents":[{"ph":"i"}, 5]}"#);
    assert_eq!(
        msg,
        "byte 29 (traceEvents[1]): invalid type: integer `5`, expected a trace event object"
    );
    // Syntax error after a newline: the offset still counts bytes.
    let (_, msg) = err(b"{\"traceEvents\":[\n  {\"ph\": X}]}");
    assert_eq!(msg, "byte 26 (traceEvents[0]): expected value");
    let (_, msg) = err(br#"{"traceEvents":[{"ph":"i",}]}"#);
    assert_eq!(msg, "byte 26 (traceEvents[0]): trailing comma");
    let (_, msg) = err(br#"{"traceEvents":{}}"#);
    assert_eq!(
        msg,
        "byte 15: invalid type: map, expected `traceEvents` as an array of event objects"
    );
    assert_eq!(
        err(br#"{"schemaVersion":1}"#).1,
        "no `traceEvents` array: this is not a Chrome/Kineto trace"
    );
    assert_eq!(
        err(br#"{"traceEvents":[],"traceEvents":[]}"#).1,
        "byte 31: `traceEvents` appears twice"
    );
    assert_eq!(
        err(b"").1,
        "byte 0: EOF while parsing a value (the JSON ends early: truncated file?)"
    );
    assert_eq!(err(b"[] x").1, "byte 3: trailing characters");
    // In gzip input the offset is in the inflated text.
    let (_, msg) = err(&gzip(&text.as_bytes()[..cut]));
    assert!(
        msg.starts_with(&format!("inflated JSON, byte {cut} (traceEvents[2]): ")),
        "{msg}"
    );
}

#[test]
fn gpu_event_errors_say_what_was_expected() {
    let one = |e: &str| {
        let text = format!(r#"{{"traceEvents":[{{"ph":"M"}},{e}]}}"#);
        let err = parse_trace(text.as_bytes()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Event);
        assert_eq!(err.event, Some(1));
        (err.offset, err.to_string())
    };
    let (offset, msg) =
        one(r#"{"ph":"X","cat":"kernel","name":"k","ts":"soon","dur":1,"args":{"stream":7}}"#);
    assert_eq!(offset, Some(68));
    assert_eq!(
        msg,
        r#"byte 68 (traceEvents[1]): GPU event "k": expected `ts` as a number of µs within ±9.2e15, found "soon""#
    );
    let (_, msg) = one(r#"{"ph":"X","cat":"kernel","name":"k","ts":1,"args":{"stream":7}}"#);
    assert_eq!(
        msg,
        r#"byte 43 (traceEvents[1]): GPU event "k": expected `dur` as a number of µs within 9.2e15, found nothing"#
    );
    let (_, msg) =
        one(r#"{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":-2,"args":{"stream":7}}"#);
    assert!(
        msg.ends_with(r#"GPU event "k": `dur` is negative (-2)"#),
        "{msg}"
    );
    let (_, msg) = one(r#"{"ph":"X","cat":"kernel","name":7,"ts":1,"dur":2}"#);
    assert!(
        msg.ends_with(r#"GPU event (cat "kernel"): expected `name` as a string"#),
        "{msg}"
    );
    let (_, msg) = one(r#"{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"tid":"main"}"#);
    assert!(
        msg.ends_with(
            r#"GPU event "k": expected the CUDA stream as an integer `args.stream` or `tid`"#
        ),
        "{msg}"
    );
    let (_, msg) =
        one(r#"{"ph":"X","cat":"kernel","name":"k","ts":9223372036854775,"dur":2,"tid":1}"#);
    assert!(
        msg.ends_with("is past the representable time range"),
        "{msg}"
    );
}

#[test]
fn odd_but_harmless_input_is_accepted() {
    // CPU events with odd field types, unknown fields, a repeated field (last wins), args that
    // are not objects, a BOM, non-X GPU events (skipped and counted).
    let text = "\u{feff}{\"traceEvents\":[\
        {\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":{\"a\":[1,2]},\"ts\":\"x\",\"dur\":null},\
        {\"ph\":\"X\",\"cat\":5,\"name\":\"k\"},\
        {\"cat\":\"kernel\",\"ph\":\"i\",\"name\":\"k\"},\
        {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"ts\":2,\"dur\":1,\"args\":[1],\"tid\":4,\"extra\":{}}\
    ],\"deviceProperties\":[{\"name\":\"A100\"}],\"distributedInfo\":\"n/a\"}";
    let t = parse_trace(text.as_bytes()).unwrap();
    assert_eq!(t.trace_events, 4);
    assert_eq!(t.skipped_gpu_events, 1);
    assert_eq!(t.events.len(), 1);
    assert_eq!((t.events[0].start_ns, t.events[0].stream), (2000, 4));
    assert_eq!(t.distributed, None);
}

// ---------------------------------------------------------------------------------------------
// HTA 0.5.0's rules, one tiny trace each. Every trace here was written out as JSON and run
// through HTA itself: `TraceAnalysis(trace_dir=d).get_comm_comp_overlap(visualize=False)` with
// PyPI HolisticTraceAnalysis==0.5.0 (pandas 3.1.1, numpy 2.4.6), the folder `d` holding the
// trace alone as `rank-0.json`, and `include_last_profiler_step=True` for the `last` values.
// The asserted numbers are HTA's 100 · ratio before its round(·, 2) (docs/MODEL.md, "Kineto").
// Numbers are written as text so that `0` (a JSON integer) and `0.0` (a float, which makes HTA
// round) differ as they do for Python.

const NCCL: &str = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";
const GEMM: &str = "void at::native::vectorized_elementwise_kernel<4>(int)";

/// A GPU event as Kineto writes it; `corr` goes to `args.correlation` when given.
fn k(name: &str, ts: &str, dur: &str, stream: i64, cat: &str, corr: Option<i64>) -> String {
    let corr = corr.map_or(String::new(), |c| format!(r#","correlation":{c}"#));
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":0,"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":{stream}{corr}}}}}"#
    )
}

/// A kernel (`cat` `kernel`) without a correlation id.
fn kern(name: &str, ts: &str, dur: &str, stream: i64) -> String {
    k(name, ts, dur, stream, "kernel", None)
}

/// A CPU event (no stream).
fn cpu(name: &str, ts: &str, dur: &str, cat: &str, corr: Option<i64>) -> String {
    let args = corr.map_or(String::new(), |c| format!(r#""correlation":{c}"#));
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":100,"tid":1,"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
    )
}

/// HTA's overlap (default options, then `include_last_profiler_step=True`) of one trace.
fn hta(events: &[String]) -> (Option<f64>, Option<f64>) {
    let t = parse_trace(trace(events, 0).as_bytes()).unwrap();
    (
        t.hta_overlap(HtaOptions::default()).percent(),
        t.hta_overlap(HtaOptions {
            include_last_profiler_step: true,
        })
        .percent(),
    )
}

fn assert_close(got: Option<f64>, want: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: no value"));
    assert!((got - want).abs() <= 1e-9, "{what}: {got} vs HTA {want}");
}

#[test]
fn hta_counts_same_stream_overlaps_as_they_are() {
    // Compute [0,100) and [200,300) on stream 7; NCCL [50,150), [250,350) and [260,280) on the
    // same stream, each starting before the previous kernel ends. HTA merges each class over
    // all streams without clipping: comm 200 µs, overlap 50 + 50: 50 %. (Clipping each kernel
    // to its stream's order would give 0 %.)
    let (d, l) = hta(&[
        kern(GEMM, "0", "100", 7),
        kern(NCCL, "50", "100", 7),
        kern(GEMM, "200", "100", 7),
        kern(NCCL, "250", "100", 7),
        kern(NCCL, "260", "20", 7),
    ]);
    assert_close(d, 50.0, "default");
    assert_close(l, 50.0, "last");
}

#[test]
fn hta_counts_nccl_dev_kernels_as_communication() {
    let (d, _) = hta(&[
        kern(
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
            "0",
            "100",
            20,
        ),
        kern(GEMM, "25", "25", 7),
    ]);
    assert_close(d, 25.0, "ncclDevKernel");
}

#[test]
fn hta_compute_name_probes() {
    // Comm [0,4096). Probe i lasts 2^i µs; the overlap spells which probes HTA counts as
    // compute: 1 + 4 + 64 + 128 = 197 (nccl_ without "Kernel", Stream Wait Event, an rccl
    // kernel, an annotation with args.stream). Not compute: Memcpy inside a name, Event Sync,
    // Memset, dma, Memcpy under cat kernel, cudaDeviceSynchronize, and a kernel without
    // args.stream (1024, its tid is ignored).
    let probes = [
        ("nccl_custom_allreduce", "kernel"),
        ("void at::native::copy_Memcpy_kernel", "kernel"),
        ("Stream Wait Event", "cuda_sync"),
        ("Event Sync", "cuda_sync"),
        ("Memset (Device)", "gpu_memset"),
        ("dma_something", "kernel"),
        ("void rccl::reduce_kernel", "kernel"),
        ("nccl:all_reduce", "gpu_user_annotation"),
        ("Memcpy DtoD (Device -> Device)", "kernel"),
        ("cudaDeviceSynchronize", "kernel"),
    ];
    let mut ev = vec![kern(NCCL, "0", "4096", 20)];
    let mut t = 0u32;
    for (i, (name, cat)) in probes.iter().enumerate() {
        let d = 1u32 << i;
        ev.push(k(name, &t.to_string(), &d.to_string(), 7, cat, None));
        t += d;
    }
    ev.push(format!(
        r#"{{"ph":"X","cat":"kernel","name":"{GEMM}","pid":0,"tid":7,"ts":1024,"dur":1024,"args":{{"device":0}}}}"#
    ));
    let (d, _) = hta(&ev);
    assert_close(d, 4.809_570_312_5, "probes"); // 197 / 4096
}

#[test]
fn hta_communication_name_probes() {
    // Compute covers [10000,20000); probes of 2^i µs inside it. Comm: ncclDevKernel_,
    // ncclKernel_, ncclDevKernel_Generic_4(...), an ncclKernel_ annotation with a stream
    // (1 + 2 + 32 + 64 = 99). Not comm: NCCLKernel (case), `void ncclKernel` (anchored),
    // ncclAllReduceNoK (no "Kernel": compute), rcclKernel. Comm total 1000 + 99: 99/1099.
    let probes = [
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel"),
        ("ncclKernel_AllReduce_RING_LL_Sum_float", "kernel"),
        ("NCCLKernel_upper_case", "kernel"),
        ("void ncclKernel_prefixed", "kernel"),
        ("ncclAllReduceNoK", "kernel"),
        (
            "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)",
            "kernel",
        ),
        ("ncclKernel_SendRecv_as_annotation", "gpu_user_annotation"),
        ("rcclKernel_AllReduce", "kernel"),
    ];
    let mut ev = vec![kern(NCCL, "0", "1000", 20), kern(GEMM, "10000", "10000", 7)];
    let mut t = 10_000u32;
    for (i, (name, cat)) in probes.iter().enumerate() {
        let d = 1u32 << i;
        ev.push(k(name, &t.to_string(), &d.to_string(), 21, cat, None));
        t += d;
    }
    let (d, _) = hta(&ev);
    assert_close(d, 9.008_189_262_966_333, "probes");
}

#[test]
fn hta_unions_compute_over_streams() {
    // Compute [10,40) on stream 7, [30,60) and [80,90) on stream 8 under comm [0,100): the
    // union is 60 µs (the per-stream sum would be 70).
    let (d, _) = hta(&[
        kern(NCCL, "0", "100", 20),
        kern(GEMM, "10", "30", 7),
        kern(GEMM, "30", "30", 8),
        kern(GEMM, "80", "10", 8),
    ]);
    assert_close(d, 60.0, "two streams");
}

#[test]
fn hta_rounding_can_make_an_interval_negative() {
    // Float ts: HTA takes ts = ceil(ts), end = floor(ts + dur). Comm [6.2,6.7) becomes [7,6),
    // −1 µs: comm 5 − 1 = 4 µs, overlap 5 µs: 125 %. The exact variant gives 100 %.
    let ev = [
        kern(GEMM, "0.0", "10.0", 7),
        kern(NCCL, "0.0", "5.0", 20),
        kern(NCCL, "6.2", "0.5", 20),
    ];
    let (d, _) = hta(&ev);
    assert_close(d, 125.0, "negative interval");
    let t = parse_trace(trace(&ev, 0).as_bytes()).unwrap();
    assert!(t.hta_overlap(HtaOptions::default()).rounded);
    assert_eq!(t.exact_overlap().percent(), Some(100.0));
    // The same rounding shrinks every interval: comm [0.5,10.5) → [1,10), compute
    // [2.4,5.6) → [3,5) and [7.7,9.3) → [8,9): 3/9 against the exact 4.8/10.
    let (d, _) = hta(&[
        kern(NCCL, "0.5", "10.0", 20),
        kern(GEMM, "2.4", "3.2", 7),
        kern(GEMM, "7.7", "1.6", 7),
    ]);
    assert_close(d, 33.333_333_333_333_33, "shrink");
}

#[test]
fn hta_rounds_only_when_some_ts_is_not_an_integer() {
    // Integer ts, fractional dur: pandas keeps `ts` int64, nothing is rounded:
    // (2.5 + 0.75) / 10.5.
    let ev = vec![
        kern(NCCL, "0", "10.5", 20),
        kern(GEMM, "5", "2.5", 7),
        kern(GEMM, "9", "0.75", 7),
    ];
    let (d, _) = hta(&ev);
    assert_close(d, 30.952_380_952_380_953, "int ts");
    // One metadata event without ts makes the column float64, and every event is rounded:
    // comm [0,10), compute [5,7) and [9,9): 20 %.
    let mut with_m =
        vec![r#"{"ph":"M","name":"process_name","pid":0,"args":{"name":"GPU 0"}}"#.to_string()];
    with_m.extend(ev);
    let (d, _) = hta(&with_m);
    assert_close(d, 20.0, "one ts missing");
}

fn step_trace() -> Vec<String> {
    vec![
        cpu("ProfilerStep#1", "0", "1000", "user_annotation", None),
        cpu("ProfilerStep#2", "1000", "1000", "user_annotation", None),
        cpu("cudaLaunchKernel", "10", "5", "cuda_runtime", Some(1)),
        cpu("cudaLaunchKernel", "20", "5", "cuda_runtime", Some(2)),
        cpu("cudaLaunchKernel", "1010", "5", "cuda_runtime", Some(3)),
        k(NCCL, "100", "100", 20, "kernel", Some(1)), // launched in step 1
        k(GEMM, "150", "100", 7, "kernel", Some(2)),  // launched in step 1
        k(NCCL, "1100", "100", 20, "kernel", Some(3)), // launched in the last step
        k(NCCL, "1500", "100", 20, "kernel", Some(999)), // no launching CPU event
        kern(NCCL, "1700", "100", 20), // correlation −1: a "CPU" row, kept iff ts < 1000
    ]
}

#[test]
fn hta_drops_the_last_profiler_step_through_correlation_ids() {
    // Two ProfilerStep names: by default only kernels launched before the last step's start
    // remain (50/100); include_last_profiler_step=True keeps those launched up to its end and
    // the −1-correlation kernel (50/300). The orphan (999) is always dropped. The exact
    // variant keeps everything: 50/400.
    let (d, l) = hta(&step_trace());
    assert_close(d, 50.0, "default");
    assert_close(l, 16.666_666_666_666_664, "last");
    let t = parse_trace(trace(&step_trace(), 0).as_bytes()).unwrap();
    assert_eq!(t.exact_overlap().percent(), Some(12.5));
    let r = report(&[("f.json".into(), t.clone())]);
    assert_eq!(r.metric("rank0.overlap_pct"), Some(50.0));
    assert_eq!(r.metric("rank0.exact_overlap_pct"), Some(12.5));
    assert!(r
        .findings
        .iter()
        .any(|f| f.contains("2 ProfilerStep names") && f.contains("=False")));
    let r = report_with(
        &[("f.json".into(), t)],
        HtaOptions {
            include_last_profiler_step: true,
        },
    );
    assert!((r.metric("rank0.overlap_pct").unwrap() - 16.666_666_666_666_664).abs() < 1e-9);
}

#[test]
fn hta_does_not_filter_with_a_single_profiler_step() {
    let (d, l) = hta(&[
        cpu("ProfilerStep#1", "0", "2000", "user_annotation", None),
        cpu("cudaLaunchKernel", "10", "5", "cuda_runtime", Some(1)),
        cpu("cudaLaunchKernel", "20", "5", "cuda_runtime", Some(2)),
        k(NCCL, "100", "100", 20, "kernel", Some(1)),
        k(GEMM, "150", "100", 7, "kernel", Some(2)),
        k(NCCL, "1500", "100", 20, "kernel", Some(999)),
    ]);
    assert_close(d, 25.0, "default");
    assert_close(l, 25.0, "last");
}

#[test]
fn hta_rocm_trace_follows_the_same_rules() {
    // hip runtime calls, RCCL's ncclDevKernel_Generic name (communication), Tensile and
    // elementwise kernels (computation), fractional ts (rounded), two ProfilerSteps (the last
    // is dropped by default). HTA: 109/199 by default, 109/249 with the last step.
    let ev = [
        cpu("ProfilerStep#7", "1000.0", "500.0", "user_annotation", None),
        cpu("ProfilerStep#8", "1500.0", "500.0", "user_annotation", None),
        cpu("hipLaunchKernel", "1010.25", "3.5", "cuda_runtime", Some(11)),
        cpu("hipExtModuleLaunchKernel", "1020.5", "3.5", "cuda_runtime", Some(12)),
        cpu("hipLaunchKernel", "1030.75", "3.5", "cuda_runtime", Some(13)),
        cpu("hipMemcpyWithStream", "1040.0", "3.5", "cuda_runtime", Some(14)),
        cpu("hipLaunchKernel", "1510.0", "3.5", "cuda_runtime", Some(15)),
        k(
            "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)",
            "1100.4",
            "200.2",
            3,
            "kernel",
            Some(11),
        ),
        k(
            "Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1",
            "1150.6",
            "100.8",
            0,
            "kernel",
            Some(12),
        ),
        k(GEMM, "1260.3", "10.4", 0, "kernel", Some(13)),
        k(
            "Memcpy DtoD (Device -> Device)",
            "1280.0",
            "5.0",
            0,
            "gpu_memcpy",
            Some(14),
        ),
        k(NCCL, "1600.0", "50.0", 3, "kernel", Some(15)),
        r#"{"ph":"X","cat":"gpu_user_annotation","name":"nccl:all_reduce","pid":0,"tid":3,"ts":1100.0,"dur":201.0,"args":{"External id":5}}"#.to_string(),
    ];
    let (d, l) = hta(&ev);
    assert_close(d, 54.773_869_346_733_676, "default");
    assert_close(l, 43.775_100_401_606_42, "last");
}

#[test]
fn hta_without_communication_has_no_value() {
    let (d, l) = hta(&[kern(GEMM, "0", "10", 7)]);
    assert_eq!((d, l), (None, None)); // HTA: NaN (0/0)
}

#[test]
fn hta_reads_streams_with_python_int_and_names_up_to_a_newline() {
    // Comm [0,100) with stream "20" (a string: int("20") = 20). Compute: stream 7.0 [10,30),
    // `nccl\nKernel` [60,70) and `gemm\nSync` [80,90) (`.` stops at a newline, so neither
    // regex matches), stream 7.9 [95,98) (int() truncates). Stream "stream 8" [40,50) is −1:
    // not a GPU row. HTA 0.5.0: 43/100.
    let s = |name: &str, ts: u32, dur: u32, stream: &str| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":1,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":{stream}}}}}"#
        )
    };
    let (d, _) = hta(&[
        s(NCCL, 0, 100, r#""20""#),
        s("gemm", 10, 20, "7.0"),
        s("gemm", 40, 10, r#""stream 8""#),
        s(r"nccl\nKernel", 60, 10, "9"),
        s(r"gemm\nSync", 80, 10, "9"),
        s("x", 95, 3, "7.9"),
    ]);
    assert_close(d, 43.0, "python int");
}
