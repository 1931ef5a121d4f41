//! The agentic lab's Report: per-controller metrics, the comparison table (with the best static
//! cap in hindsight when a sweep ran), stacked time series on one time axis, a per-agent
//! timeline per controller, and findings.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::engine::Counters;
use super::params::{AgenticParams, LatencySlo};
use super::sim::{ControllerRun, Sample};
use super::workload::Workload;
use crate::report::{Cell, CounterTrack, KindDef, Lane, Report, Series, Span, Table, Timeline};

/// Most points per time series (consecutive control intervals are merged beyond it).
pub const MAX_SERIES_POINTS: usize = 400;

/// Chart keys of the stacked time series, top to bottom.
pub const CHARTS: [&str; 5] = [
    "agentic.active_agents",
    "agentic.kv_usage",
    "agentic.hit_rate",
    "agentic.recompute",
    "agentic.throughput",
];

/// What one run measured, summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Stable id (`unbounded`, `cap-8`, `concur`).
    pub id: String,
    /// Display label.
    pub label: String,
    /// Time the last agent finished, s.
    pub completion_s: f64,
    /// Generated tokens / completion time, tokens/s.
    pub useful_tokens_per_s: f64,
    /// Recomputed tokens / all tokens computed (prefill new + recompute + decode).
    pub recompute_ratio: f64,
    /// Tokens served from the cache / reusable history tokens.
    pub history_hit_rate: f64,
    /// Agent latency (finish − arrival) median and 99th percentile, s.
    pub latency_p50_s: f64,
    /// 99th percentile, s.
    pub latency_p99_s: f64,
    /// Useful throughput in each third of the batch's duration, tokens/s.
    pub thirds_tokens_per_s: [f64; 3],
    /// Recomputed share of the tokens computed in each third.
    pub thirds_recompute_share: [f64; 3],
    /// Generated tokens of requests that met both latency SLOs / completion time, tokens/s.
    pub goodput_tokens_per_s: f64,
    /// Requests that met both SLOs / requests.
    pub slo_attainment: f64,
    /// Time to first token, p50 and p99, s.
    pub ttft_p50_s: f64,
    /// p99, s.
    pub ttft_p99_s: f64,
    /// Time per output token, p50 and p99, ms.
    pub tpot_p50_ms: f64,
    /// p99, ms.
    pub tpot_p99_ms: f64,
    /// Prefill attention's share of the engine's busy time.
    pub attention_share: f64,
    /// Counters of the whole run.
    pub counters: Counters,
}

/// Nearest-rank percentile `q` of sorted ns values, s (0 when empty).
fn percentile(sorted: &[u64], q: f64) -> f64 {
    crate::units::nearest_rank(sorted.len(), q).map_or(0.0, |i| sorted[i] as f64 / 1e9)
}

fn computed(c: &Counters) -> u64 {
    c.prefill_new_tokens + c.recompute_tokens + c.partial_block_tokens + c.decode_tokens
}

fn share(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Summarises one run; `slo` decides which requests count towards goodput.
#[must_use]
pub fn summarize(run: &ControllerRun, interval_ns: u64, slo: &LatencySlo) -> RunSummary {
    let c = &run.counters;
    let completion_s = run.makespan_ns as f64 / 1e9;
    let ttft_max = crate::units::nanos_from_f64(slo.ttft_s * 1e9).0;
    let tpot_max = crate::units::nanos_from_f64(slo.tpot_ms * 1e6).0;
    let good = run
        .requests
        .iter()
        .filter(|r| r.ttft_ns <= ttft_max && r.tpot_ns <= tpot_max);
    let good_requests = good.clone().count();
    let good_tokens: u64 = good.map(|r| r.output_tokens).sum();
    let mut ttft: Vec<u64> = run.requests.iter().map(|r| r.ttft_ns).collect();
    ttft.sort_unstable();
    let mut tpot: Vec<u64> = run.requests.iter().map(|r| r.tpot_ns).collect();
    tpot.sort_unstable();
    let mut lat = run.agent_latency_ns.clone();
    lat.sort_unstable();
    let mut thirds = [Counters::default(); 3];
    let m = run.makespan_ns.max(1);
    for s in &run.samples {
        let mid = s.end_ns.saturating_sub(interval_ns / 2);
        let k = ((u128::from(mid) * 3 / u128::from(m)) as usize).min(2);
        let t = &mut thirds[k];
        t.decode_tokens += s.delta.decode_tokens;
        t.recompute_tokens += s.delta.recompute_tokens;
        t.prefill_new_tokens += s.delta.prefill_new_tokens;
        t.partial_block_tokens += s.delta.partial_block_tokens;
    }
    let third_s = completion_s / 3.0;
    let per_s = |v: u64| {
        if third_s > 0.0 {
            v as f64 / third_s
        } else {
            0.0
        }
    };
    RunSummary {
        id: run.spec.id(),
        label: run.spec.label(),
        completion_s,
        useful_tokens_per_s: if completion_s > 0.0 {
            c.decode_tokens as f64 / completion_s
        } else {
            0.0
        },
        recompute_ratio: share(c.recompute_tokens, computed(c)),
        history_hit_rate: share(c.history_hit_tokens, c.history_query_tokens),
        latency_p50_s: percentile(&lat, 0.5),
        latency_p99_s: percentile(&lat, 0.99),
        thirds_tokens_per_s: [
            per_s(thirds[0].decode_tokens),
            per_s(thirds[1].decode_tokens),
            per_s(thirds[2].decode_tokens),
        ],
        thirds_recompute_share: [
            share(thirds[0].recompute_tokens, computed(&thirds[0])),
            share(thirds[1].recompute_tokens, computed(&thirds[1])),
            share(thirds[2].recompute_tokens, computed(&thirds[2])),
        ],
        goodput_tokens_per_s: if completion_s > 0.0 {
            good_tokens as f64 / completion_s
        } else {
            0.0
        },
        slo_attainment: share(good_requests as u64, run.requests.len() as u64),
        ttft_p50_s: percentile(&ttft, 0.5),
        ttft_p99_s: percentile(&ttft, 0.99),
        tpot_p50_ms: percentile(&tpot, 0.5) * 1e3,
        tpot_p99_ms: percentile(&tpot, 0.99) * 1e3,
        attention_share: share(c.attention_ns, c.busy_ns),
        counters: *c,
    }
}

/// The Report of all runs on one workload. `sweep` holds the static-cap sweep (may be empty);
/// `dropped` counts agents left out because one of their requests exceeds the KV capacity.
#[must_use]
#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
pub fn build(
    params: &AgenticParams,
    work: &Workload,
    runs: &[ControllerRun],
    sweep: &[ControllerRun],
    dropped: usize,
) -> Report {
    let e = &params.engine;
    let interval_ns = params.interval_ns();
    let blocks = e.capacity_blocks();
    let capacity_tokens = blocks * u64::from(e.block_tokens);
    let mut report = Report {
        lab: "agentic".into(),
        title: format!(
            "Agentic batch: {} agents, {} turns; {} on {} × {}, {} ({} KV tokens); {}",
            work.agents.len(),
            work.total_turns(),
            e.model.name,
            e.gpus,
            e.gpu.label(),
            e.mode.label(),
            capacity_tokens,
            work.source
        ),
        ..Report::default()
    };
    report.push_metric(
        "workload.agents",
        "Agents",
        work.agents.len() as f64,
        "count",
    );
    report.push_metric(
        "workload.turns",
        "Turns",
        work.total_turns() as f64,
        "count",
    );
    let unique: u64 = work
        .agents
        .iter()
        .map(super::workload::Agent::unique_tokens)
        .sum();
    report.push_metric(
        "workload.unique_tokens",
        "Tokens to compute once",
        unique as f64,
        "tokens",
    );
    report.push_metric(
        "workload.dropped_agents",
        "Agents left out (a request exceeds the KV capacity)",
        dropped as f64,
        "count",
    );
    report.push_metric(
        "engine.kv_capacity_tokens",
        "KV capacity",
        capacity_tokens as f64,
        "tokens",
    );
    report.push_metric(
        "engine.kv_bytes_per_token",
        "KV per token per GPU",
        e.kv_bytes_per_token_per_gpu() as f64,
        "bytes",
    );
    let slo = &params.slo;
    let sums: Vec<RunSummary> = runs
        .iter()
        .map(|r| summarize(r, interval_ns, slo))
        .collect();
    let sweep_sums: Vec<RunSummary> = sweep
        .iter()
        .map(|r| summarize(r, interval_ns, slo))
        .collect();
    for s in &sums {
        let id = &s.id;
        let l = &s.label;
        report.push_metric(
            &format!("{id}.batch_completion_s"),
            &format!("{l}: batch completion"),
            s.completion_s,
            "s",
        );
        report.push_metric(
            &format!("{id}.useful_throughput_tokens_per_s"),
            &format!("{l}: useful throughput"),
            s.useful_tokens_per_s,
            "tokens/s",
        );
        report.push_metric(
            &format!("{id}.recompute_ratio"),
            &format!("{l}: recomputed / computed tokens"),
            s.recompute_ratio,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.history_hit_rate"),
            &format!("{l}: history hit rate"),
            s.history_hit_rate,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.agent_latency_p50_s"),
            &format!("{l}: agent latency p50"),
            s.latency_p50_s,
            "s",
        );
        report.push_metric(
            &format!("{id}.agent_latency_p99_s"),
            &format!("{l}: agent latency p99"),
            s.latency_p99_s,
            "s",
        );
        report.push_metric(
            &format!("{id}.mid_vs_first_third_throughput"),
            &format!("{l}: middle-third / first-third useful throughput"),
            share_f(s.thirds_tokens_per_s[1], s.thirds_tokens_per_s[0]),
            "ratio",
        );
        report.push_metric(
            &format!("{id}.mid_third_recompute_share"),
            &format!("{l}: recomputed share of middle-third tokens"),
            s.thirds_recompute_share[1],
            "ratio",
        );
        report.push_metric(
            &format!("{id}.preemptions"),
            &format!("{l}: preemptions"),
            s.counters.preemptions as f64,
            "count",
        );
        report.push_metric(
            &format!("{id}.evicted_blocks"),
            &format!("{l}: evicted KV blocks"),
            s.counters.evicted_blocks as f64,
            "count",
        );
        report.push_metric(
            &format!("{id}.slo_goodput_tokens_per_s"),
            &format!(
                "{l}: goodput under the SLO (TTFT ≤ {} s, TPOT ≤ {} ms)",
                slo.ttft_s, slo.tpot_ms
            ),
            s.goodput_tokens_per_s,
            "tokens/s",
        );
        report.push_metric(
            &format!("{id}.slo_attainment"),
            &format!("{l}: requests meeting the SLO"),
            s.slo_attainment,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.ttft_p99_s"),
            &format!("{l}: time to first token p99"),
            s.ttft_p99_s,
            "s",
        );
        report.push_metric(
            &format!("{id}.tpot_p99_ms"),
            &format!("{l}: time per output token p99"),
            s.tpot_p99_ms,
            "ms",
        );
        report.push_metric(
            &format!("{id}.prefill_attention_share"),
            &format!("{l}: prefill attention's share of step time"),
            s.attention_share,
            "ratio",
        );
    }
    let find = |id: &str| sums.iter().find(|s| s.id == id);
    let best = sweep_sums.iter().min_by(|a, b| {
        a.completion_s
            .total_cmp(&b.completion_s)
            .then(a.id.cmp(&b.id))
    });
    if let (Some(c), Some(u)) = (find("concur"), find("unbounded")) {
        report.push_metric(
            "concur.speedup_vs_unbounded",
            "CONCUR useful throughput / unbounded",
            share_f(c.useful_tokens_per_s, u.useful_tokens_per_s),
            "ratio",
        );
    }
    if let Some(b) = best {
        let cap =
            b.id.trim_start_matches("cap-")
                .parse::<f64>()
                .unwrap_or(0.0);
        report.push_metric(
            "best_cap.cap",
            "Best static cap in hindsight",
            cap,
            "agents",
        );
        report.push_metric(
            "best_cap.useful_throughput_tokens_per_s",
            "Best static cap: useful throughput",
            b.useful_tokens_per_s,
            "tokens/s",
        );
        report.push_metric(
            "best_cap.batch_completion_s",
            "Best static cap: batch completion",
            b.completion_s,
            "s",
        );
        if let Some(c) = find("concur") {
            report.push_metric(
                "concur.throughput_vs_best_cap",
                "CONCUR useful throughput / best static cap's",
                share_f(c.useful_tokens_per_s, b.useful_tokens_per_s),
                "ratio",
            );
        }
    }
    // Comparison table.
    let columns: Vec<String> = [
        "controller",
        "batch completion (s)",
        "useful throughput (tokens/s)",
        "goodput under SLO (tokens/s)",
        "requests meeting SLO",
        "recompute ratio",
        "history hit rate",
        "prefill attention share of step time",
        "preemptions",
        "agent latency p50 (s)",
        "agent latency p99 (s)",
        "throughput 1st third (tokens/s)",
        "2nd third (tokens/s)",
        "3rd third (tokens/s)",
    ]
    .iter()
    .map(|s| String::from(*s))
    .collect();
    let row = |s: &RunSummary, label: String| -> Vec<Cell> {
        alloc::vec![
            Cell::Text(label),
            Cell::Num(round(s.completion_s, 1)),
            Cell::Num(round(s.useful_tokens_per_s, 1)),
            Cell::Num(round(s.goodput_tokens_per_s, 1)),
            Cell::Num(round(s.slo_attainment, 4)),
            Cell::Num(round(s.recompute_ratio, 4)),
            Cell::Num(round(s.history_hit_rate, 4)),
            Cell::Num(round(s.attention_share, 4)),
            Cell::Num(s.counters.preemptions as f64),
            Cell::Num(round(s.latency_p50_s, 1)),
            Cell::Num(round(s.latency_p99_s, 1)),
            Cell::Num(round(s.thirds_tokens_per_s[0], 1)),
            Cell::Num(round(s.thirds_tokens_per_s[1], 1)),
            Cell::Num(round(s.thirds_tokens_per_s[2], 1)),
        ]
    };
    let mut rows: Vec<Vec<Cell>> = sums.iter().map(|s| row(s, s.label.clone())).collect();
    if let Some(b) = best {
        rows.push(row(
            b,
            format!("best static cap in hindsight ({})", b.label),
        ));
    }
    report.tables.push(Table {
        key: "controllers".into(),
        title: "Controllers on the same agents".into(),
        columns: columns.clone(),
        rows,
    });
    if !sweep_sums.is_empty() {
        report.tables.push(Table {
            key: "sweep".into(),
            title: "Static-cap sweep".into(),
            columns,
            rows: sweep_sums.iter().map(|s| row(s, s.label.clone())).collect(),
        });
    }
    for r in runs {
        push_series(&mut report, r, interval_ns);
    }
    for r in runs {
        report.timelines.push(timeline(r, params.timeline_agents));
    }
    findings(&mut report, &sums, best, dropped, work, &params.slo);
    report
}

fn share_f(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

fn round(v: f64, digits: i32) -> f64 {
    let f = libm::pow(10.0, f64::from(digits));
    libm::round(v * f) / f
}

/// Merges consecutive samples so that at most [`MAX_SERIES_POINTS`] remain: counters summed,
/// window, active agents and usage taken from the last sample of each group.
fn merged(samples: &[Sample]) -> Vec<(u64, u64, Sample)> {
    let group = samples.len().div_ceil(MAX_SERIES_POINTS).max(1);
    let mut out = Vec::new();
    let mut start = 0u64;
    for chunk in samples.chunks(group) {
        let mut acc = chunk.last().copied().unwrap_or_default();
        let mut d = Counters::default();
        for s in chunk {
            d.decode_tokens += s.delta.decode_tokens;
            d.recompute_tokens += s.delta.recompute_tokens;
            d.prefill_new_tokens += s.delta.prefill_new_tokens;
            d.history_query_tokens += s.delta.history_query_tokens;
            d.history_hit_tokens += s.delta.history_hit_tokens;
            d.prefix_query_tokens += s.delta.prefix_query_tokens;
            d.prefix_hit_tokens += s.delta.prefix_hit_tokens;
            d.evicted_blocks += s.delta.evicted_blocks;
        }
        acc.delta = d;
        out.push((start, acc.end_ns, acc));
        start = acc.end_ns;
    }
    out
}

fn push_series(report: &mut Report, run: &ControllerRun, _interval_ns: u64) {
    let label = run.spec.label();
    let pts = merged(&run.samples);
    let x = |end: u64| end as f64 / 1e9;
    let mut active = Vec::new();
    let mut window = Vec::new();
    let mut batch = Vec::new();
    let mut usage = Vec::new();
    let mut cached = Vec::new();
    let mut hit = Vec::new();
    let mut engine_hit = Vec::new();
    let mut recompute = Vec::new();
    let mut useful = Vec::new();
    for (start, end, s) in &pts {
        let dt = (end - start) as f64 / 1e9;
        let t = x(*end);
        active.push((t, f64::from(s.active_agents)));
        if s.window != u32::MAX {
            window.push((t, f64::from(s.window)));
        }
        if let Some(limit) = s.batch_limit {
            batch.push((t, f64::from(limit)));
        }
        usage.push((t, s.kv_usage));
        cached.push((t, s.kv_cached));
        if s.delta.prefix_query_tokens > 0 {
            engine_hit.push((
                t,
                share(s.delta.prefix_hit_tokens, s.delta.prefix_query_tokens),
            ));
        }
        if s.delta.history_query_tokens > 0 {
            hit.push((
                t,
                share(s.delta.history_hit_tokens, s.delta.history_query_tokens),
            ));
        }
        let rate = |v: u64| if dt > 0.0 { v as f64 / dt } else { 0.0 };
        recompute.push((t, rate(s.delta.recompute_tokens)));
        useful.push((t, rate(s.delta.decode_tokens)));
    }
    let mut push = |name: String, chart: &str, y: &str, points: Vec<(f64, f64)>| {
        report.series.push(Series {
            name,
            chart: chart.into(),
            x_label: "time (s)".into(),
            y_label: y.into(),
            points,
        });
    };
    push(
        format!("{label}: active agents"),
        CHARTS[0],
        "agents",
        active,
    );
    if !window.is_empty()
        && !matches!(
            run.spec,
            super::controllers::ControllerSpec::StaticCap { .. }
        )
    {
        push(format!("{label}: window"), CHARTS[0], "agents", window);
    }
    if !batch.is_empty() {
        push(
            format!("{label}: batch limit"),
            CHARTS[0],
            "running requests",
            batch,
        );
    }
    push(
        format!("{label}: referenced KV (usage U)"),
        CHARTS[1],
        "fraction of KV blocks",
        usage,
    );
    push(
        format!("{label}: cached (evictable) KV"),
        CHARTS[1],
        "fraction of KV blocks",
        cached,
    );
    push(
        format!("{label}: cache hit rate H"),
        CHARTS[2],
        "hit rate",
        engine_hit,
    );
    push(
        format!("{label}: history hit rate"),
        CHARTS[2],
        "hit rate",
        hit,
    );
    push(
        format!("{label}: recomputed tokens/s"),
        CHARTS[3],
        "tokens/s",
        recompute,
    );
    push(
        format!("{label}: useful throughput"),
        CHARTS[4],
        "generated tokens/s",
        useful,
    );
}

fn timeline(run: &ControllerRun, agents: u32) -> Timeline {
    let mut lanes: Vec<Lane> = (0..agents)
        .map(|a| Lane {
            name: format!("agent {a}"),
            spans: Vec::new(),
        })
        .collect();
    for s in &run.spans {
        if let Some(lane) = lanes.get_mut(s.agent as usize) {
            lane.spans.push(Span {
                start_ns: s.start_ns,
                dur_ns: s.end_ns - s.start_ns,
                name: String::from(s.kind.cat()),
                cat: String::from(s.kind.cat()),
            });
        }
    }
    lanes.retain(|l| !l.spans.is_empty());
    let pts = merged(&run.samples);
    let mut timeline = Timeline {
        name: run.spec.label(),
        lanes,
        kinds: Vec::new(),
        counters: alloc::vec![
            CounterTrack {
                name: "active agents".into(),
                unit: "agents".into(),
                points: pts
                    .iter()
                    .map(|(_, e, s)| (*e, f64::from(s.active_agents)))
                    .collect(),
            },
            CounterTrack {
                name: "referenced KV".into(),
                unit: "fraction".into(),
                points: pts.iter().map(|(_, e, s)| (*e, s.kv_usage)).collect(),
            },
        ],
    };
    timeline.declare(&[SPAN_KINDS]);
    timeline
}

/// The agentic lab's span kinds, one per state of an agent (`SpanKind` in `sim.rs`). Useful
/// work is green and blue, the thrashing CONCUR attacks (recomputation, preemption, evicted
/// tool calls) red, orange and pink, waiting greys and yellow.
pub const SPAN_KINDS: &[KindDef] = &[
    KindDef {
        cat: "decode",
        label: "decode",
        meaning: "generating output tokens",
        colour: "#22c55e",
        trace_colour: "good",
    },
    KindDef {
        cat: "prefill",
        label: "prefill",
        meaning: "prefill of new tokens only (the cached history is reused)",
        colour: "#3b82f6",
        trace_colour: "rail_response",
    },
    KindDef {
        cat: "recompute",
        label: "recompute",
        meaning: "prefill that recomputes history whose KV cache was evicted: thrashing",
        colour: "#dc2626",
        trace_colour: "terrible",
    },
    KindDef {
        cat: "preempted",
        label: "preempted",
        meaning: "preempted by the engine (KV freed), waiting to be rescheduled",
        colour: "#f97316",
        trace_colour: "bad",
    },
    KindDef {
        cat: "queued",
        label: "queued in the engine",
        meaning: "admitted, the request waits in the engine's queue",
        colour: "#cbd5e1",
        trace_colour: "grey",
    },
    KindDef {
        cat: "paused",
        label: "held by the controller",
        meaning: "arrived but not admitted, or paused by the agent-level controller",
        colour: "#fde68a",
        trace_colour: "yellow",
    },
    KindDef {
        cat: "tool",
        label: "tool call",
        meaning: "the agent runs a tool; its KV cache stays resident",
        colour: "#7e22ce",
        trace_colour: "detailed_memory_dump",
    },
    KindDef {
        cat: "tool-evicted",
        label: "tool call, KV evicted",
        meaning: "a tool call during which some of its cached KV was evicted",
        colour: "#f472b6",
        trace_colour: "cq_build_failed",
    },
];

fn pct(v: f64) -> String {
    format!("{:.0} %", v * 100.0)
}

fn findings(
    report: &mut Report,
    sums: &[RunSummary],
    best: Option<&RunSummary>,
    dropped: usize,
    work: &Workload,
    slo: &LatencySlo,
) {
    let find = |id: &str| sums.iter().find(|s| s.id == id);
    if let Some(c) = find("clipper-aimd") {
        // The fixed batch it is compared with: the engine's own limit, else the first other run.
        if let Some(f) = find("unbounded").or_else(|| sums.iter().find(|s| s.id != c.id)) {
            report.findings.push(format!(
                "Clipper's AIMD batch limit holds p99 time per output token to {:.1} ms against {:.1} ms for {} (objective {} ms); {} of requests meet the SLO against {}, goodput {:.0} vs {:.0} tokens/s; the price is the wait for the first token, p99 {:.1} s against {:.1} s.",
                c.tpot_p99_ms,
                f.tpot_p99_ms,
                f.label,
                slo.tpot_ms,
                pct(c.slo_attainment),
                pct(f.slo_attainment),
                c.goodput_tokens_per_s,
                f.goodput_tokens_per_s,
                c.ttft_p99_s,
                f.ttft_p99_s
            ));
        }
    }
    for s in sums {
        let [a, b, _] = s.thirds_tokens_per_s;
        report.findings.push(format!(
            "{}: useful throughput in the middle third of the batch is {} of the first third's ({:.0} vs {:.0} tokens/s); recomputation is {} of the tokens computed in the middle third and {} over the run.",
            s.label,
            pct(share_f(b, a)),
            b,
            a,
            pct(s.thirds_recompute_share[1]),
            pct(s.recompute_ratio)
        ));
    }
    if let (Some(c), Some(u)) = (find("concur"), find("unbounded")) {
        report.findings.push(format!(
            "CONCUR finishes the batch in {:.0} s against {:.0} s for unbounded admission: {:.2}× the useful throughput.",
            c.completion_s,
            u.completion_s,
            share_f(c.useful_tokens_per_s, u.useful_tokens_per_s)
        ));
    }
    if let Some(b) = best {
        let line = match find("concur") {
            Some(c) => format!(
                "The best static cap in hindsight is {} ({:.0} s); CONCUR reaches {} of its throughput without knowing it.",
                b.label,
                b.completion_s,
                pct(share_f(c.useful_tokens_per_s, b.useful_tokens_per_s))
            ),
            None => format!("The best static cap in hindsight is {} ({:.0} s).", b.label, b.completion_s),
        };
        report.findings.push(line);
    }
    if dropped > 0 {
        report.findings.push(format!(
            "{dropped} agents were left out: one of their requests needs more KV than the engine holds ({} agents ran).",
            work.agents.len()
        ));
    }
}
