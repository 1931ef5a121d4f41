//! Real data: per-rank PyTorch Kineto traces with NCCL kernels.
//!
//! - `$BUBBLELAB_DATA/hta_kineto_traces`: three single-rank traces (gzip) shipped as test data
//!   of Meta's Holistic Trace Analysis;
//! - `$BUBBLELAB_DATA/param_dlrm_8rank_kineto_et/dlrm_kineto`: ranks 0–3 of one 8-GPU DLRM
//!   training step from Meta's PARAM benchmarks (plain JSON).
//!
//! The overlap of every rank is pinned to what HTA itself computes. HTA version: PyPI
//! `HolisticTraceAnalysis==0.5.0` (with pandas 3.1.1 / numpy 2.4.6; pandas 2.2.3 gives the same
//! values). Command, per file, with the file copied alone into an empty folder `d` as
//! `rank-0.json.gz`:
//!
//! ```text
//! from hta.trace_analysis import TraceAnalysis
//! TraceAnalysis(trace_dir=d).get_comm_comp_overlap(visualize=False)
//! TraceAnalysis(trace_dir=d, include_last_profiler_step=True).get_comm_comp_overlap(visualize=False)
//! ```
//!
//! The pinned numbers are HTA's `100 · comp_comm_overlap_ratio` before its `round(·, 2)` (read
//! by wrapping `round` in `hta.analyzers.communication_analysis`); ours must agree within 1e-9.
//! Without the data folder these tests fail under CI=true and are skipped otherwise.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

mod common;

use bubblelab_core::kineto::{gunzip, parse_trace, report, HtaOptions, KernelClass, RankTrace};

fn load(dir: &std::path::Path, rel: &str) -> RankTrace {
    let path = dir.join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_trace(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One pinned trace.
struct Pin {
    file: &'static str,
    rank: i64,
    world: i64,
    /// GPU-category events kept for the timeline and the exact variant.
    gpu_events: usize,
    /// Of those, communication kernels.
    comm_kernels: usize,
    /// HTA 0.5.0, default (`include_last_profiler_step=False`), %.
    hta: f64,
    /// HTA 0.5.0 with `include_last_profiler_step=True`, %.
    hta_last: f64,
    /// The exact variant (integer ns, all steps): |C| ns, |P| ns, |C ∩ P| ns.
    exact_ns: (u64, u64, u64),
    /// HTA rounded the timestamps / ran its step filter.
    rounded: bool,
    filtered: bool,
}

const HTA: [Pin; 3] = [
    Pin {
        file: "hta_kineto_traces/nccl_parser_config/nccl_data.json.gz",
        rank: 0,
        world: 2,
        gpu_events: 3774,
        comm_kernels: 21,
        hta: 14.305_132_218_469_396,
        hta_last: 15.135_088_992_274_53,
        exact_ns: (46_876_493, 115_655_847, 7_317_025),
        rounded: true,
        filtered: true,
    },
    Pin {
        file: "hta_kineto_traces/trace_diff/control/control.json.gz",
        rank: 3,
        world: 8,
        gpu_events: 9450,
        comm_kernels: 60,
        hta: 47.025_130_178_854_425,
        hta_last: 46.237_196_930_320_73,
        exact_ns: (163_535_000, 281_336_000, 75_614_000),
        rounded: false,
        filtered: true,
    },
    Pin {
        file: "hta_kineto_traces/trace_filter/sampled_rank-0.json.gz",
        rank: 0,
        world: 128,
        gpu_events: 1204,
        comm_kernels: 10,
        hta: 11.809_939_230_111_556,
        hta_last: 14.946_024_598_749_618,
        exact_ns: (396_199_000, 210_320_000, 59_216_000),
        rounded: false,
        filtered: true,
    },
];

/// The DLRM ranks have one ProfilerStep name and integer timestamps: HTA neither filters nor
/// rounds, and the exact variant agrees with it.
const fn dlrm(
    file: &'static str,
    rank: i64,
    gpu_events: usize,
    hta: f64,
    exact_ns: (u64, u64, u64),
) -> Pin {
    Pin {
        file,
        rank,
        world: 8,
        gpu_events,
        comm_kernels: 8,
        hta,
        hta_last: hta,
        exact_ns,
        rounded: false,
        filtered: false,
    }
}

const DLRM: [Pin; 4] = [
    dlrm(
        "param_dlrm_8rank_kineto_et/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
        0,
        261,
        4.501_552_259_399_792_5,
        (5_798_000, 1_034_000, 261_000),
    ),
    dlrm(
        "param_dlrm_8rank_kineto_et/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json",
        1,
        326,
        2.470_007_057_163_021,
        (11_336_000, 1_246_000, 280_000),
    ),
    dlrm(
        "param_dlrm_8rank_kineto_et/dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json",
        2,
        262,
        7.875_143_184_421_534_5,
        (3_492_000, 1_068_000, 275_000),
    ),
    dlrm(
        "param_dlrm_8rank_kineto_et/dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json",
        3,
        337,
        3.314_917_127_071_823,
        (9_774_000, 1_240_000, 324_000),
    ),
];

fn check(pins: &[Pin]) {
    let Some(dir) = common::data_dir() else {
        return;
    };
    for p in pins {
        let file = p.file;
        let t = load(&dir, file);
        assert_eq!(t.rank(), Some(p.rank), "{file}");
        assert_eq!(
            t.distributed.as_ref().unwrap().world_size,
            Some(p.world),
            "{file}"
        );
        assert_eq!(t.events.len(), p.gpu_events, "{file}");
        assert_eq!(
            t.count(KernelClass::Communication),
            p.comm_kernels,
            "{file}"
        );
        assert_eq!(t.count(KernelClass::Other), 0, "{file}");
        let h = t.hta_overlap(HtaOptions::default());
        assert_eq!(
            (h.rounded, h.step_filtered),
            (p.rounded, p.filtered),
            "{file}"
        );
        let got = h.percent().unwrap();
        assert!(
            (got - p.hta).abs() <= 1e-9,
            "{file}: {got} vs HTA {}",
            p.hta
        );
        let last = t
            .hta_overlap(HtaOptions {
                include_last_profiler_step: true,
            })
            .percent()
            .unwrap();
        assert!(
            (last - p.hta_last).abs() <= 1e-9,
            "{file}: {last} vs HTA {}",
            p.hta_last
        );
        let x = t.exact_overlap();
        assert_eq!(
            (x.comm_ns, x.compute_ns, x.overlap_ns),
            p.exact_ns,
            "{file}"
        );
    }
}

#[test]
fn hta_traces_overlap_equals_hta_0_5_0() {
    check(&HTA);
}

#[test]
fn dlrm_ranks_overlap_equals_hta_0_5_0() {
    check(&DLRM);
}

#[test]
fn every_comm_kernel_is_nccl_and_on_its_own_stream() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    for file in HTA.iter().chain(&DLRM).map(|p| p.file) {
        let t = load(&dir, file);
        for e in &t.events {
            let name = t.name_of(e);
            if e.class == KernelClass::Communication {
                assert!(name.starts_with("ncclKernel_"), "{file}: {name}");
            }
        }
        // In these runs NCCL kernels have streams of their own.
        let comm_streams: std::collections::BTreeSet<i64> = t
            .events
            .iter()
            .filter(|e| e.class == KernelClass::Communication)
            .map(|e| e.stream)
            .collect();
        assert!(t
            .events
            .iter()
            .filter(|e| e.class == KernelClass::Computation)
            .all(|e| !comm_streams.contains(&e.stream)));
    }
}

#[test]
fn dlrm_report_has_four_ranks_and_clean_lanes() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let traces: Vec<(String, RankTrace)> = DLRM
        .iter()
        .rev() // given out of order: the report sorts by rank
        .map(|p| {
            (
                p.file.rsplit('/').next().unwrap().to_string(),
                load(&dir, p.file),
            )
        })
        .collect();
    let r = report(&traces);
    let rows = &r.tables[0].rows;
    assert_eq!(rows.len(), 4);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0].display(), format!("rank {i}"));
        let pct = r.metric(&format!("rank{i}.overlap_pct")).unwrap();
        assert!((pct - DLRM[i].hta).abs() < 1e-9);
    }
    assert!(r
        .findings
        .iter()
        .any(|f| f == "The job had 8 ranks; 4 of their traces were given."));
    assert!(r
        .findings
        .iter()
        .any(|f| f.starts_with("rank 1 hides the least communication: 2.4700 % overlapped")));
    // All ranks together: Σ|C ∩ P| / Σ|C|.
    let all: f64 = 100.0 * (261_000.0 + 280_000.0 + 275_000.0 + 324_000.0)
        / (5_798_000.0 + 11_336_000.0 + 3_492_000.0 + 9_774_000.0);
    assert!((r.metric("all.overlap_pct").unwrap() - all).abs() < 1e-9);
    for tl in &r.timelines {
        assert!(
            tl.undeclared().is_empty(),
            "{}: {:?}",
            tl.name,
            tl.undeclared()
        );
        let names: Vec<&str> = tl.lanes.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            ["stream 7", "stream 22", "stream 24", "stream 84"],
            "{}",
            tl.name
        );
        for lane in &tl.lanes {
            for w in lane.spans.windows(2) {
                assert!(
                    w[0].start_ns + w[0].dur_ns <= w[1].start_ns,
                    "{}",
                    lane.name
                );
            }
        }
        assert_eq!(
            tl.lanes
                .iter()
                .map(|l| l.spans.first().unwrap().start_ns)
                .min(),
            Some(0)
        );
    }
}

#[test]
fn gzip_and_plain_text_read_the_same() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let path = dir.join(HTA[0].file);
    let gz = std::fs::read(&path).unwrap();
    let json = gunzip(&gz, 1 << 30).unwrap();
    assert_eq!(parse_trace(&json).unwrap(), parse_trace(&gz).unwrap());
}
