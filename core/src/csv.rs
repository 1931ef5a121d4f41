//! The CSV reader every trace and list reader shares (the fairness lab's job traces, the sharing
//! lab's openb node and pod lists, the elastic lab's workloads): a header, data rows with their
//! 1-based line numbers, fields bounded in length and rows in number, and errors naming the row
//! and the column.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize};

/// Longest accepted field, in characters (bytes of UTF-8); longer is a bad row.
pub const MAX_FIELD_CHARS: usize = 256;
/// Largest accepted time or duration, in seconds (1e10 s ≈ 317 years; keeps ns far from `u64::MAX`).
pub const MAX_SECONDS: f64 = 1e10;
/// Default cap on data rows ([`ReadOptions::max_rows`]).
pub const DEFAULT_MAX_ROWS: usize = 1_000_000;

/// How a reader treats bad rows and how many rows it accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadOptions {
    /// Skip bad rows and count them (the fairness lab's `Trace::skipped_rows`) instead of
    /// failing on the first.
    pub skip_bad_rows: bool,
    /// Most data rows (jobs, for JSON) read; more is an error. Default [`DEFAULT_MAX_ROWS`].
    pub max_rows: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            skip_bad_rows: false,
            max_rows: DEFAULT_MAX_ROWS,
        }
    }
}

/// A trace that cannot be read: where and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceError {
    /// 1-based line of the text (header = 1); for Philly JSON, the 1-based index of the job in
    /// the array (0 when the document itself is not valid JSON).
    pub row: usize,
    /// The column (CSV header name or JSON field) at fault; `(header)`, `(row)` or `(json)` when
    /// no single column is.
    pub column: String,
    /// What is wrong.
    pub message: String,
}

impl TraceError {
    /// A new error at `row`, `column`.
    #[must_use]
    pub fn new(row: usize, column: &str, message: impl Into<String>) -> TraceError {
        TraceError {
            row,
            column: column.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "row {}, column `{}`: {}",
            self.row, self.column, self.message
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for TraceError {}

/// Splits one CSV line into fields: commas separate, double quotes quote (`""` is a quote).
pub(crate) fn split_csv(line: &str) -> Vec<&str> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_quotes = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => in_quotes = !in_quotes,
            b',' if !in_quotes => {
                out.push(unquote(&line[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(unquote(&line[start..]));
    out
}

/// Strips one pair of surrounding double quotes (an inner `""` stays as is: ids and names in
/// these traces never contain quotes).
fn unquote(field: &str) -> &str {
    let f = field.trim();
    if f.len() >= 2 && f.starts_with('"') && f.ends_with('"') {
        &f[1..f.len() - 1]
    } else {
        f
    }
}

/// A CSV text: its header and its data lines with their 1-based line numbers.
pub(crate) struct Csv<'a> {
    header: Vec<String>,
    lines: core::iter::Enumerate<core::str::Lines<'a>>,
    rows_seen: usize,
    max_rows: usize,
}

/// One data row of a [`Csv`], with access to its fields by column index.
pub(crate) struct Row<'a> {
    /// 1-based line number.
    pub line: usize,
    fields: Vec<&'a str>,
}

impl<'a> Csv<'a> {
    /// Reads the header (the first non-blank line).
    pub(crate) fn new(text: &'a str, options: &ReadOptions) -> Result<Csv<'a>, TraceError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.lines().enumerate();
        let header = loop {
            match lines.next() {
                None => return Err(TraceError::new(1, "(header)", "empty input: no header row")),
                Some((i, l)) if l.trim().is_empty() => {
                    if i > 1000 {
                        return Err(TraceError::new(
                            i + 1,
                            "(header)",
                            "no header row in the first 1000 lines",
                        ));
                    }
                }
                Some((i, l)) => {
                    let fields = split_csv(l.trim_end_matches('\r'));
                    if fields.len() > 64 || fields.iter().any(|f| f.len() > MAX_FIELD_CHARS) {
                        return Err(TraceError::new(
                            i + 1,
                            "(header)",
                            "not a header: more than 64 columns or a name longer than 256 characters",
                        ));
                    }
                    break fields
                        .into_iter()
                        .map(|f| f.trim().to_ascii_lowercase())
                        .collect();
                }
            }
        };
        Ok(Csv {
            header,
            lines,
            rows_seen: 0,
            max_rows: options.max_rows,
        })
    }

    /// The index of the first of `names` present in the header.
    pub(crate) fn find(&self, names: &[&str]) -> Option<usize> {
        names
            .iter()
            .find_map(|n| self.header.iter().position(|h| h == n))
    }

    /// The index of a required column, or an error on the header row.
    pub(crate) fn require(&self, name: &str) -> Result<usize, TraceError> {
        self.find(&[name])
            .ok_or_else(|| TraceError::new(1, name, "required column missing from the header"))
    }

    /// The header's column name at `index`.
    pub(crate) fn name(&self, index: usize) -> &str {
        self.header.get(index).map_or("?", String::as_str)
    }

    /// The next non-blank data row; an error when there are more than `max_rows`.
    pub(crate) fn next_row(&mut self) -> Option<Result<Row<'a>, TraceError>> {
        loop {
            let (i, l) = self.lines.next()?;
            let l = l.trim_end_matches('\r');
            if l.trim().is_empty() {
                continue;
            }
            self.rows_seen += 1;
            if self.rows_seen > self.max_rows {
                return Some(Err(TraceError::new(
                    i + 1,
                    "(row)",
                    format!(
                        "more than {} data rows (ReadOptions::max_rows)",
                        self.max_rows
                    ),
                )));
            }
            return Some(Ok(Row {
                line: i + 1,
                fields: split_csv(l),
            }));
        }
    }

    /// Checks the row's field count against the header.
    pub(crate) fn check_width(&self, row: &Row<'_>) -> Result<(), TraceError> {
        let (n, h) = (row.fields.len(), self.header.len());
        if n < h {
            Err(TraceError::new(
                row.line,
                self.name(n),
                format!("missing (the row has {n} fields, the header has {h})"),
            ))
        } else if n > h {
            Err(TraceError::new(
                row.line,
                "(row)",
                format!("too many fields (the row has {n} fields, the header has {h})"),
            ))
        } else {
            Ok(())
        }
    }

    /// The raw text of column `index` (width already checked), bounded in length.
    pub(crate) fn text(&self, row: &Row<'a>, index: usize) -> Result<&'a str, TraceError> {
        let f = row.fields.get(index).copied().unwrap_or("");
        if f.len() > MAX_FIELD_CHARS {
            return Err(TraceError::new(
                row.line,
                self.name(index),
                format!("longer than {MAX_FIELD_CHARS} characters"),
            ));
        }
        Ok(f)
    }

    /// Column `index` as a non-negative integer.
    pub(crate) fn uint(&self, row: &Row<'a>, index: usize) -> Result<u64, TraceError> {
        let f = self.text(row, index)?;
        parse_uint(f).map_err(|m| TraceError::new(row.line, self.name(index), m))
    }

    /// Column `index` as non-negative seconds (≤ [`MAX_SECONDS`]).
    pub(crate) fn seconds(&self, row: &Row<'a>, index: usize) -> Result<f64, TraceError> {
        let f = self.text(row, index)?;
        parse_seconds(f).map_err(|m| TraceError::new(row.line, self.name(index), m))
    }
}

/// Parses a non-negative decimal integer.
pub(crate) fn parse_uint(f: &str) -> Result<u64, String> {
    if f.is_empty() {
        return Err("empty".to_string());
    }
    if !f.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected a non-negative integer, got `{f}`"));
    }
    f.parse::<u64>()
        .map_err(|_| format!("integer out of range, got `{f}`"))
}

/// Parses non-negative, finite seconds (a decimal number) of at most [`MAX_SECONDS`].
pub(crate) fn parse_seconds(f: &str) -> Result<f64, String> {
    if f.is_empty() {
        return Err("empty".to_string());
    }
    // Only plain decimals: digits, one dot, an optional exponent; no `inf`, `nan` or sign.
    let ok = f
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && f.as_bytes()[0] != b'-';
    let v: f64 = if ok { f.parse().ok() } else { None }
        .ok_or_else(|| format!("expected a non-negative number of seconds, got `{f}`"))?;
    check_seconds(v, f)
}

/// Checks seconds parsed from `raw`.
pub(crate) fn check_seconds(v: f64, raw: &str) -> Result<f64, String> {
    if !v.is_finite() || v < 0.0 {
        Err(format!(
            "expected a non-negative number of seconds, got `{raw}`"
        ))
    } else if v > MAX_SECONDS {
        Err(format!("at most 1e10 s, got `{raw}`"))
    } else {
        Ok(v)
    }
}
