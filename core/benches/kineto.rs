//! Benchmark of the Kineto trace reader on a synthetic ~100 MB trace.
//!
//! The trace is generated in memory with the event mix of a real training-step trace (see
//! `hta_kineto_traces/trace_diff/control`): per launched kernel, a CPU operator with shapes, a
//! CUDA runtime call, a flow start/finish pair; kernels with grid/block arguments, one NCCL kernel
//! in sixteen on a communication stream, memcpy/memset, a few sync records and metadata. About
//! one event in ten is a GPU event, as in the real files.
//!
//! * `kineto/parse_plain`: [`parse_trace`] on the plain JSON; throughput in input bytes.
//! * `kineto/parse_gzip`: the same trace gzip-compressed (level 1); throughput in inflated
//!   JSON bytes, to compare with `parse_plain` (the work adds inflating and the CRC-32).
//! * `kineto/report`: [`report`] (overlap metric, timeline with one span per GPU event).
//!
//! Before the timed groups, one import of each form runs under a counting global allocator and
//! the peak heap above the starting point is printed, against the input size.
//!
//! Run with `cargo bench -p bubblelab-core --bench kineto`; about a minute on two cores.
#![allow(unsafe_code)] // the counting allocator below implements `GlobalAlloc`
#![allow(clippy::disallowed_methods)] // a benchmark measures wall time

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bubblelab_core::kineto::{crc32, parse_trace, report, RankTrace};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

/// The system allocator, counting live bytes and their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the counters
// only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // While a moving realloc copies, old and new blocks both exist: count that peak.
            grew(new_size);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns its result and the peak heap above the live bytes at the start.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - base)
}

/// A small deterministic generator (64-bit LCG, Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

const KERNELS: [&str; 6] = [
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "ampere_sgemm_128x64_tn",
    "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float, float, float, float, cudnnTensorStruct, float const*)",
];
const NCCL: [&str; 2] = [
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
];
const CPU_OPS: [&str; 5] = [
    "aten::linear",
    "aten::addmm",
    "aten::add_",
    "aten::softmax",
    "aten::copy_",
];

/// A Kineto-like trace of at least `target` bytes.
fn synthetic_trace(target: usize) -> String {
    let mut rng = Lcg(42);
    let mut s = String::with_capacity(target + (1 << 20));
    s.push_str(r#"{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-80GB","totalGlobalMem":85198045184,"computeMajor":8,"computeMinor":0,"numSms":108}],"distributedInfo":{"backend":"nccl","rank":3,"world_size":8},"record_shapes":1,"traceEvents":["#);
    s.push_str("\n  {\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":0,\"args\":{\"name\":\"python3\"}}");
    let base = 1_661_203_463_029_566u64;
    let mut cpu_t = 0u64; // ns since base
    let mut gpu_t = 0u64;
    let mut nccl_t = 0u64;
    let mut i = 0u64;
    while s.len() < target {
        i += 1;
        let op = CPU_OPS[rng.below(5) as usize];
        let dur_cpu = 5_000 + rng.below(40_000);
        let ts = |t: u64| format!("{}.{:03}", base + t / 1000, t % 1000);
        let _ = write!(
            s,
            ",\n  {{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"{op}\",\"pid\":3113936,\"tid\":3113936,\"ts\":{},\"dur\":{}.{:03},\"args\":{{\"External id\":{i},\"Ev Idx\":{i},\"Input Dims\":[[512,1024],[1024,1024],[]],\"Input type\":[\"float\",\"float\",\"\"],\"Sequence number\":{i},\"Fwd thread id\":0}}}}",
            ts(cpu_t),
            dur_cpu / 1000,
            dur_cpu % 1000
        );
        let launch = cpu_t + dur_cpu / 2;
        let _ = write!(
            s,
            ",\n  {{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":3113936,\"tid\":3113936,\"ts\":{},\"dur\":4.25,\"args\":{{\"External id\":{i},\"cbid\":211,\"correlation\":{i}}}}}",
            ts(launch)
        );
        let _ = write!(
            s,
            ",\n  {{\"ph\":\"s\",\"id\":{i},\"pid\":3113936,\"tid\":3113936,\"ts\":{},\"cat\":\"ac2g\",\"name\":\"ac2g\"}}",
            ts(launch)
        );
        gpu_t = gpu_t.max(launch + 3_000);
        let dur = 2_000 + rng.below(60_000);
        let kind = rng.below(100);
        let (cat, name, stream) = if kind < 4 {
            ("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 7)
        } else if kind < 6 {
            ("gpu_memset", "Memset (Device)", 7)
        } else if kind == 6 {
            ("cuda_sync", "Event Sync", 7)
        } else {
            ("kernel", KERNELS[rng.below(6) as usize], 7)
        };
        let _ = write!(
            s,
            ",\n  {{\"ph\":\"X\",\"cat\":\"{cat}\",\"name\":\"{name}\",\"pid\":3,\"tid\":{stream},\"ts\":{},\"dur\":{}.{:03},\"args\":{{\"External id\":{i},\"queued\":0,\"device\":3,\"context\":1,\"stream\":{stream},\"correlation\":{i},\"registers per thread\":90,\"shared memory\":49152,\"blocks per SM\":0.5925926,\"warps per SM\":2.3703704,\"grid\":[64,1,1],\"block\":[128,1,1],\"est. achieved occupancy %\":4}}}}",
            ts(gpu_t),
            dur / 1000,
            dur % 1000
        );
        let _ = write!(
            s,
            ",\n  {{\"ph\":\"f\",\"id\":{i},\"pid\":3,\"tid\":{stream},\"ts\":{},\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}}",
            ts(gpu_t)
        );
        gpu_t += dur + rng.below(5_000);
        if i.is_multiple_of(16) {
            nccl_t = nccl_t.max(gpu_t - dur);
            let ndur = 20_000 + rng.below(200_000);
            let _ = write!(
                s,
                ",\n  {{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"{}\",\"pid\":3,\"tid\":21,\"ts\":{},\"dur\":{}.{:03},\"args\":{{\"External id\":{i},\"queued\":0,\"device\":3,\"context\":1,\"stream\":21,\"correlation\":{i},\"registers per thread\":96,\"shared memory\":0,\"grid\":[2,1,1],\"block\":[512,1,1]}}}}",
                NCCL[rng.below(2) as usize],
                ts(nccl_t),
                ndur / 1000,
                ndur % 1000
            );
            nccl_t += ndur;
        }
        cpu_t += dur_cpu + rng.below(3_000);
    }
    s.push_str("\n],\"traceName\":\"synthetic\",\"displayTimeUnit\":\"ms\"}\n");
    s
}

/// Gzip (RFC 1952) of `data`, DEFLATE level 1.
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 1));
    out.extend(crc32(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn bench_kineto(c: &mut Criterion) {
    let text = synthetic_trace(100_000_000);
    let plain = text.into_bytes();
    let gz = gzip(&plain);

    let start = Instant::now();
    let (trace, peak_plain) = peak_during(|| parse_trace(&plain).expect("synthetic trace reads"));
    let plain_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let (trace_gz, peak_gz) = peak_during(|| parse_trace(&gz).expect("gzip trace reads"));
    let gz_s = start.elapsed().as_secs_f64();
    assert_eq!(trace, trace_gz);
    let (_, peak_report) = peak_during(|| report(&[("synthetic".into(), trace.clone())]));
    let o = trace.hta_overlap(bubblelab_core::kineto::HtaOptions::default());
    println!(
        "kineto: synthetic trace {:.1} MB plain, {:.1} MB gzip; {} events, {} GPU events kept, \
         {} names; HTA 0.5.0 overlap {:.2} %",
        mb(plain.len()),
        mb(gz.len()),
        trace.trace_events,
        trace.events.len(),
        trace.names.len(),
        o.percent().unwrap_or(f64::NAN)
    );
    println!(
        "kineto: plain import {:.2} s ({:.0} MB/s), peak heap above the input {:.1} MB = {:.3}x \
         the input (input + import = {:.3}x)",
        plain_s,
        mb(plain.len()) / plain_s,
        mb(peak_plain),
        peak_plain as f64 / plain.len() as f64,
        1.0 + peak_plain as f64 / plain.len() as f64
    );
    println!(
        "kineto: gzip import {:.2} s ({:.0} MB/s of inflated JSON), peak heap above the input \
         {:.1} MB = {:.3}x the inflated size",
        gz_s,
        mb(plain.len()) / gz_s,
        mb(peak_gz),
        peak_gz as f64 / plain.len() as f64
    );
    println!(
        "kineto: report (timeline of {} spans) peak heap {:.1} MB",
        trace.events.len(),
        mb(peak_report)
    );

    let mut group = c.benchmark_group("kineto");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes(plain.len() as u64));
    group.bench_function("parse_plain", |b| {
        b.iter(|| black_box(parse_trace(black_box(&plain)).map(|t| t.events.len())));
    });
    group.bench_function("parse_gzip", |b| {
        b.iter(|| black_box(parse_trace(black_box(&gz)).map(|t| t.events.len())));
    });
    let one: Vec<(String, RankTrace)> = vec![("synthetic".into(), trace)];
    group.throughput(Throughput::Elements(one[0].1.events.len() as u64));
    group.bench_function("report", |b| {
        b.iter(|| black_box(report(black_box(&one)).timelines.len()));
    });
    group.finish();
}

criterion_group!(benches, bench_kineto);
criterion_main!(benches);
