//! The Kineto reader on small hand-written traces: known overlap answers, HTA's classification
//! (PR #162: synchronisation is neither compute nor communication), timelines with overlapping
//! kernels on one stream, gzip framing, and the exact error messages.

#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::kineto::{
    crc32, gunzip, parse_trace, parse_trace_with_limit, report, ErrorKind, KernelClass, RankTrace,
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
    assert_eq!(t.count(KernelClass::Sync), 1);
    assert_eq!(t.count(KernelClass::Memory), 1);
    let o = t.overlap();
    assert_eq!(o.comm_ns, 20_000);
    assert_eq!(o.compute_ns, 20_000);
    assert_eq!(o.overlap_ns, 10_000);
    assert_eq!(o.exposed_comm_ns(), 10_000);
    assert_eq!(o.percent(), Some(50.0));
}

#[test]
fn counting_sync_as_compute_would_inflate_the_overlap() {
    // What HTA computed before its PR #162: the same trace with the sync record renamed into a
    // compute kernel covers all communication.
    let before_fix = known().replace(
        "\"cuda_sync\",\"name\":\"Stream Sync\"",
        "\"kernel\",\"name\":\"Stream\"",
    );
    let t = parse_trace(before_fix.as_bytes()).unwrap();
    assert_eq!(t.overlap().percent(), Some(100.0));
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
    assert_eq!(t.overlap().percent(), None);
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
    assert!(r.findings.iter().any(|f| f.contains("PR #162")));
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
