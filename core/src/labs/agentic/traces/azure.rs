//! The Azure LLM inference trace 2023 (Patel et al., "Splitwise", ISCA'24;
//! `AzurePublicDataset/data/AzureLLMInferenceTrace_{code,conv}.csv`): CSV with a header naming
//! `TIMESTAMP` (`YYYY-MM-DD HH:MM:SS[.fffffff]`), `ContextTokens` and `GeneratedTokens`.
//!
//! The trace has no sessions and no prefix information, so each request becomes a single-turn
//! agent arriving at its timestamp (relative to the earliest): admission control there only
//! bounds concurrency; there is no history to keep.

use alloc::format;
use alloc::vec::Vec;

use super::TraceError;
use crate::labs::agentic::workload::{Agent, Turn, Workload, MAX_REQUEST_TOKENS, MAX_TURNS_TOTAL};

/// Reads the CSV into single-turn agents, ordered by arrival.
///
/// # Errors
/// [`TraceError`] naming the line and column of the first bad row.
pub fn parse(text: &str) -> Result<Workload, TraceError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((hi, header)) = lines.next() else {
        return Err(TraceError::new(
            0,
            None,
            "empty file: expected a header TIMESTAMP,ContextTokens,GeneratedTokens",
        ));
    };
    let cols: Vec<&str> = header
        .trim()
        .trim_start_matches('\u{feff}')
        .split(',')
        .map(str::trim)
        .collect();
    let find = |name: &str| cols.iter().position(|c| c.eq_ignore_ascii_case(name));
    let (Some(ts_col), Some(ctx_col), Some(gen_col)) = (
        find("TIMESTAMP"),
        find("ContextTokens"),
        find("GeneratedTokens"),
    ) else {
        return Err(TraceError::new(
            hi + 1,
            None,
            format!(
                "expected a header with TIMESTAMP, ContextTokens and GeneratedTokens, got `{}`",
                truncate(header)
            ),
        ));
    };
    let mut rows: Vec<(i128, u64, u64)> = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if rows.len() as u64 >= MAX_TURNS_TOTAL {
            return Err(TraceError::new(
                n,
                None,
                format!("more than {MAX_TURNS_TOTAL} rows"),
            ));
        }
        let cells: Vec<&str> = line.trim().split(',').map(str::trim).collect();
        if cells.len() != cols.len() {
            return Err(TraceError::new(
                n,
                None,
                format!("expected {} columns, got {}", cols.len(), cells.len()),
            ));
        }
        let ts = parse_timestamp(cells[ts_col]).ok_or_else(|| {
            TraceError::new(
                n,
                Some("TIMESTAMP"),
                format!(
                    "expected YYYY-MM-DD HH:MM:SS[.fraction], got `{}`",
                    truncate(cells[ts_col])
                ),
            )
        })?;
        let tokens = |col: usize, name: &str| -> Result<u64, TraceError> {
            cells[col]
                .parse::<u64>()
                .ok()
                .filter(|&v| v <= MAX_REQUEST_TOKENS)
                .ok_or_else(|| {
                    TraceError::new(
                        n,
                        Some(name),
                        format!(
                            "expected a token count from 0 to {MAX_REQUEST_TOKENS}, got `{}`",
                            truncate(cells[col])
                        ),
                    )
                })
        };
        let ctx = tokens(ctx_col, "ContextTokens")?;
        let generated = tokens(gen_col, "GeneratedTokens")?;
        if ctx == 0 {
            return Err(TraceError::new(
                n,
                Some("ContextTokens"),
                "expected at least 1 token, got 0",
            ));
        }
        rows.push((ts, ctx, generated));
    }
    if rows.is_empty() {
        return Err(TraceError::new(0, None, "no rows after the header"));
    }
    let t0 = rows.iter().map(|r| r.0).min().unwrap_or(0);
    rows.sort_by_key(|r| r.0);
    let agents: Vec<Agent> = rows
        .iter()
        .map(|&(ts, ctx, generated)| Agent {
            arrival_ns: u64::try_from(ts - t0).unwrap_or(u64::MAX),
            turns: alloc::vec![Turn {
                prompt_tokens: ctx,
                shared_prefix_tokens: 0,
                output_tokens: generated,
                tool_ns: 0,
            }],
        })
        .collect();
    Ok(Workload {
        source: format!("Azure LLM inference trace ({} requests)", agents.len()),
        agents,
    })
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(40) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `YYYY-MM-DD HH:MM:SS[.fffffffff]` → ns since 1970-01-01 (proleptic Gregorian, no time zone).
fn parse_timestamp(s: &str) -> Option<i128> {
    let (date, time) = s.split_once([' ', 'T'])?;
    let mut d = date.split('-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: u32 = d.next()?.parse().ok()?;
    let day: u32 = d.next()?.parse().ok()?;
    if d.next().is_some()
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
        || !(1..=9999).contains(&y)
    {
        return None;
    }
    let (hms, frac) = match time.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (time, None),
    };
    let mut t = hms.split(':');
    let h: u32 = t.next()?.parse().ok()?;
    let mi: u32 = t.next()?.parse().ok()?;
    let sec: u32 = t.next()?.parse().ok()?;
    if t.next().is_some() || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut frac_ns: i128 = 0;
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut v: i128 = f.parse().ok()?;
        for _ in f.len()..9 {
            v *= 10;
        }
        frac_ns = v;
    }
    let days = days_from_civil(y, m, day);
    let secs =
        i128::from(days) * 86_400 + i128::from(h) * 3_600 + i128::from(mi) * 60 + i128::from(sec);
    Some(secs * 1_000_000_000 + frac_ns)
}

/// Days since 1970-01-01 of a civil date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
