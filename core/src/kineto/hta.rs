//! Holistic Trace Analysis 0.5.0's communication–computation overlap, rule for rule.
//!
//! HTA (Meta, MIT licence; PyPI `HolisticTraceAnalysis==0.5.0`) computes, per rank,
//! `TraceAnalysis(trace_dir).get_comm_comp_overlap()`. This module restates its pipeline
//! without pandas, in the order HTA applies it (file and function names are HTA 0.5.0's):
//!
//! 1. **Rows** (`common/trace_parser.py`, `_compress_df`): every `traceEvents` entry with a
//!    `dur` and a `cat`, except `cat == "Trace"`, whatever its `ph` or category: CPU operators
//!    and runtime calls are rows too. The stream is `args.stream` only (`int()` of it, −1 when
//!    missing or not an integer: `utils/utils.py`, `normalize_gpu_stream_numbers`; `tid` is
//!    never read); the correlation is `args.correlation` (−1 when missing).
//! 2. **Rounding** (`common/trace_parser.py`, `round_down_time_stamps`): when the `ts` column is
//!    float — some `ts` is written as a non-integer JSON number, or some entry (even a metadata
//!    `M` event) has no `ts` — every row becomes `end = floor(ts + dur)`, `ts = ceil(ts)`,
//!    `dur = end − ts` (µs, f64). A sub-µs kernel can get a negative duration; that is kept.
//!    Traces whose `ts` are all integers are left alone (a fractional `dur` stays).
//! 3. **Step filter** (`common/trace.py`, `Trace._filter_irrelevant_gpu_kernels`): only when at
//!    least two distinct strings among the rows' names and categories contain `ProfilerStep`.
//!    A "GPU" row has `stream ≥ 0` and `correlation ≥ 0`, or is named `Event Sync` /
//!    `Context Sync` (`common/trace_filter.py`, `_filter_gpu_kernels_with_cuda_sync`); every
//!    other row is "CPU". CPU rows are kept when `ts <` the latest start of a CPU row whose
//!    name contains `ProfilerStep` (the default, `include_last_profiler_step=False`: the last
//!    step is dropped), or `ts ≤` the latest end of one (`True`). GPU rows are kept when their
//!    correlation is that of a kept CPU row; the others (and orphans) are dropped.
//! 4. **Classes** (`utils/utils.py`, `get_kernel_type`), by name only, case-sensitive, on the
//!    rows with `stream ≠ −1`: see [`HtaKernelType::of`].
//! 5. **Metric** (`analyzers/communication_analysis.py`, `get_comm_comp_overlap`): the
//!    communication rows and the computation rows are each merged over all streams
//!    (`utils/utils.py`, `merge_kernel_intervals`: sorted by `ts`, a row opens a new group
//!    only if its `ts` is greater than every earlier row's end, so touching intervals merge;
//!    rows that overlap on one stream are merged as they are, never clipped or dropped). A sweep
//!    adds +1/−1 at each merged communication start/end and +2/−2 at each merged computation
//!    start/end; the time while the running sum is 3 is the overlap. The ratio is
//!    overlap / Σ(merged communication lengths); HTA shows `round(100 · ratio, 2)`.
//!
//! Differences kept on purpose, all at inputs HTA cannot handle: a GPU-category event without a
//! numeric `ts`/`dur` is an error here (HTA would carry NaN or fail), other rows without a
//! numeric `ts` are skipped, and a rank without communication time gives `None` where HTA gives
//! NaN (0/0). HTA counts `ProfilerStep` names over all ranks loaded together (its symbol table
//! is shared), so a rank's value can change with the other files in `trace_dir`; here every
//! trace is its own HTA run, as HTA gives for a folder holding that one trace.

use alloc::vec::Vec;

/// One HTA row (step 1 of the module documentation), times in µs as written in the trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtaRow {
    /// Index of its name in [`super::RankTrace::names`] (`""` when the entry has no name).
    pub name: u32,
    /// `ts`, µs (parsed as f64, correctly rounded, as Python's `float()`).
    pub ts_us: f64,
    /// `dur`, µs.
    pub dur_us: f64,
    /// `args.stream` as an integer, −1 when missing or not an integer.
    pub stream: i64,
    /// `args.correlation` as an integer, −1 when missing.
    pub correlation: i64,
    /// The name contains `ProfilerStep`.
    pub profiler_step: bool,
}

/// What HTA reads from one trace: its rows and the two whole-trace facts its rules use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HtaRows {
    /// The rows, in file order.
    pub rows: Vec<HtaRow>,
    /// Every `traceEvents` entry has a `ts` written as a JSON integer (pandas keeps the column
    /// int64 and HTA does not round).
    pub ts_all_integers: bool,
    /// Number of distinct strings among the rows' names and categories containing
    /// `ProfilerStep` (HTA's test for filtering: at least 2).
    pub profiler_step_symbols: usize,
}

/// The one option of `TraceAnalysis` that changes the metric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HtaOptions {
    /// HTA's `include_last_profiler_step` (default `false`: kernels launched from the last
    /// `ProfilerStep` on are dropped).
    pub include_last_profiler_step: bool,
}

/// HTA's `KernelType` of a row with a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HtaKernelType {
    /// Matches `^nccl.*Kernel` (`ncclKernel_*` of NCCL ≤ 2.18, `ncclDevKernel_*` of NCCL ≥
    /// 2.19, RCCL kernels that keep NCCL's names).
    Communication,
    /// Starts with `Memcpy`, `Memset` or `dma`.
    Memory,
    /// Otherwise contains `Memcpy` or `Sync` (`Event Sync`, `Context Sync`,
    /// `cudaDeviceSynchronize`): neither compute nor communication.
    Other,
    /// Everything else: also `Stream Wait Event`, `nccl*` names without `Kernel`, names that
    /// start `rccl` (HTA has no RCCL rule), annotations that carry an `args.stream`.
    Computation,
}

impl HtaKernelType {
    /// HTA 0.5.0's `get_kernel_type(name)` (`utils/utils.py`): `re.match` of
    /// `^nccl.*Kernel`, then `(^Memcpy)|(^Memset)|(^dma)`, then
    /// `(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)`. `re.match` anchors at the start and
    /// `.` stops at a newline, so the substrings are looked for in the first line only. The
    /// category is not used, and the test is case-sensitive (`NCCLKernel…` and `void
    /// ncclKernel…` are computation).
    #[must_use]
    pub fn of(name: &str) -> Self {
        let first_line = name.split('\n').next().unwrap_or("");
        if first_line
            .strip_prefix("nccl")
            .is_some_and(|rest| rest.contains("Kernel"))
        {
            HtaKernelType::Communication
        } else if ["Memcpy", "Memset", "dma"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            HtaKernelType::Memory
        } else if first_line.contains("Memcpy") || first_line.contains("Sync") {
            HtaKernelType::Other
        } else {
            HtaKernelType::Computation
        }
    }
}

/// HTA's result on one rank, µs (after its rounding and step filter).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HtaOverlap {
    /// Σ merged communication lengths, µs (can be below the sum of positive lengths when
    /// rounding made some interval negative).
    pub comm_us: f64,
    /// Σ merged computation lengths, µs.
    pub compute_us: f64,
    /// Time with the sweep's running sum at 3, µs.
    pub overlap_us: f64,
    /// HTA rounded the timestamps (the `ts` were not all integers).
    pub rounded: bool,
    /// HTA's step filter ran (≥ 2 `ProfilerStep` symbols).
    pub step_filtered: bool,
    /// Rows with a stream (`stream ≠ −1`) left after the filter.
    pub stream_rows: usize,
    /// Of those, communication rows.
    pub comm_rows: usize,
}

impl HtaOverlap {
    /// `100 · (overlap / comm)`, %, unrounded (HTA prints it rounded to 2 decimals); `None`
    /// when there is no communication time (HTA: NaN, or ±inf after negative rounding).
    #[must_use]
    pub fn percent(&self) -> Option<f64> {
        (self.comm_us != 0.0).then(|| 100.0 * (self.overlap_us / self.comm_us))
    }

    /// Communication time not under computation, comm − overlap, µs.
    #[must_use]
    pub fn exposed_comm_us(&self) -> f64 {
        self.comm_us - self.overlap_us
    }
}

/// HTA's `merge_kernel_intervals`: `(start, end)` pairs sorted by start, grouped while
/// `start ≤` the largest earlier end; each group becomes `(min start, max end)`. HTA sorts with
/// pandas' default (not stable) quicksort and this sort is stable; the order of equal starts
/// changes the groups only when rounding made one of those intervals negative.
#[must_use]
pub fn hta_merge(mut intervals: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut max_end = f64::NEG_INFINITY;
    for (s, e) in intervals {
        match out.last_mut() {
            Some(last) if s <= max_end => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
        max_end = max_end.max(e);
    }
    out
}

/// HTA's sweep: the time during which a merged communication and a merged computation
/// interval are both open (running sum 3), µs.
#[must_use]
pub fn hta_sweep_overlap(comm: &[(f64, f64)], comp: &[(f64, f64)]) -> f64 {
    let mut points: Vec<(f64, i32)> = Vec::with_capacity(2 * (comm.len() + comp.len()));
    points.extend(comm.iter().flat_map(|&(s, e)| [(s, 1), (e, -1)]));
    points.extend(comp.iter().flat_map(|&(s, e)| [(s, 2), (e, -2)]));
    // Points at the same time add 0 to the overlap in any order, so a stable sort suffices.
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut running = 0i32;
    let mut overlap = 0.0f64;
    for (i, &(t, delta)) in points.iter().enumerate() {
        running += delta;
        if running == 3 {
            if let Some(&(next, _)) = points.get(i + 1) {
                overlap += next - t;
            }
        }
    }
    overlap
}

/// Runs HTA 0.5.0's pipeline (module documentation, steps 2–5) on one trace's rows.
#[must_use]
pub fn hta_overlap(
    rows: &HtaRows,
    names: &[alloc::string::String],
    opts: HtaOptions,
) -> HtaOverlap {
    let rounded = !rows.ts_all_integers;
    // Step 2: (start, end) per row.
    let span = |r: &HtaRow| -> (f64, f64) {
        if rounded {
            let end = libm::floor(r.ts_us + r.dur_us);
            (libm::ceil(r.ts_us), end)
        } else {
            (r.ts_us, r.ts_us + r.dur_us)
        }
    };
    let name_of = |r: &HtaRow| names.get(r.name as usize).map_or("", |s| s.as_str());
    // Step 3.
    let step_filtered = rows.profiler_step_symbols >= 2;
    let mut keep = alloc::vec![true; rows.rows.len()];
    if step_filtered {
        let is_gpu = |r: &HtaRow| {
            (r.stream >= 0 && r.correlation >= 0)
                || matches!(name_of(r), "Event Sync" | "Context Sync")
        };
        let steps = rows
            .rows
            .iter()
            .filter(|r| !is_gpu(r) && r.profiler_step)
            .map(span);
        // pandas' max of an empty column is NaN, and every comparison with NaN is false.
        let limit = if opts.include_last_profiler_step {
            steps.map(|s| s.1).fold(f64::NAN, f64::max)
        } else {
            steps.map(|s| s.0).fold(f64::NAN, f64::max)
        };
        let mut kept_correlations: Vec<i64> = Vec::new();
        for (k, r) in rows.rows.iter().enumerate() {
            if is_gpu(r) {
                continue;
            }
            let ts = span(r).0;
            keep[k] = if opts.include_last_profiler_step {
                ts <= limit
            } else {
                ts < limit
            };
            if keep[k] {
                kept_correlations.push(r.correlation);
            }
        }
        kept_correlations.sort_unstable();
        for (k, r) in rows.rows.iter().enumerate() {
            if is_gpu(r) {
                keep[k] = kept_correlations.binary_search(&r.correlation).is_ok();
            }
        }
    }
    // Steps 4 and 5.
    let (mut comm, mut comp) = (Vec::new(), Vec::new());
    let (mut stream_rows, mut comm_rows) = (0usize, 0usize);
    for (r, _) in rows
        .rows
        .iter()
        .zip(&keep)
        .filter(|(r, k)| **k && r.stream != -1)
    {
        stream_rows += 1;
        match HtaKernelType::of(name_of(r)) {
            HtaKernelType::Communication => {
                comm_rows += 1;
                comm.push(span(r));
            }
            HtaKernelType::Computation => comp.push(span(r)),
            HtaKernelType::Memory | HtaKernelType::Other => {}
        }
    }
    let comm = hta_merge(comm);
    let comp = hta_merge(comp);
    let length = |v: &[(f64, f64)]| v.iter().map(|&(s, e)| e - s).sum::<f64>();
    HtaOverlap {
        comm_us: length(&comm),
        compute_us: length(&comp),
        overlap_us: hta_sweep_overlap(&comm, &comp),
        rounded,
        step_filtered,
        stream_rows,
        comm_rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_classify_as_hta_get_kernel_type() {
        use HtaKernelType::*;
        for (name, want) in [
            (
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
                Communication,
            ),
            (
                "ncclDevKernel_AllGather_RING_LL(ncclDevComm*)",
                Communication,
            ),
            (
                "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)",
                Communication,
            ),
            ("NCCLKernel_AllReduce", Computation),
            ("void ncclKernel_AllReduce", Computation),
            ("ncclAllReduceNoK", Computation),
            ("nccl_custom_allreduce", Computation),
            ("rcclKernel_AllReduce", Computation),
            ("void rccl::reduce_kernel", Computation),
            ("Memcpy DtoD (Device -> Device)", Memory),
            ("Memset (Device)", Memory),
            ("dma_copy", Memory),
            ("void my_Memcpy_kernel", Other),
            ("Event Sync", Other),
            ("Context Sync", Other),
            ("cudaDeviceSynchronize", Other),
            ("Stream Wait Event", Computation),
            ("nccl\nKernel", Computation),
            ("gemm\nSync", Computation),
        ] {
            assert_eq!(HtaKernelType::of(name), want, "{name:?}");
        }
    }

    #[test]
    fn merge_groups_touching_and_uses_the_running_max_end() {
        let m = hta_merge(alloc::vec![
            (5.0, 10.0),
            (0.0, 3.0),
            (3.0, 4.0),
            (6.0, 7.0),
            (10.0, 12.0)
        ]);
        assert_eq!(m, alloc::vec![(0.0, 4.0), (5.0, 12.0)]);
        // A negative interval (rounding) opens its own group and shrinks the sum.
        let m = hta_merge(alloc::vec![(0.0, 2.0), (7.0, 6.0)]);
        assert_eq!(m, alloc::vec![(0.0, 2.0), (7.0, 6.0)]);
        assert_eq!(hta_sweep_overlap(&[(0.0, 10.0)], &[(5.0, 20.0)]), 5.0);
    }
}
