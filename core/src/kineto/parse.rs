//! The streaming JSON pass over a Kineto trace.
//!
//! `serde_json` walks the document once. The top-level object is visited key by key; the
//! `traceEvents` array is visited element by element, and each element is reduced to borrowed
//! [`RawValue`] slices of the few fields we read (`ph`, `cat`, `name`, `ts`, `dur`, `pid`, `tid`,
//! `args`) before it is classified and either dropped (CPU ops, runtime calls, flows, metadata)
//! or turned into a [`GpuEvent`]. Nothing is kept per skipped event, so memory is the input plus
//! the GPU events and one copy of each distinct kernel name.

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::hta::{HtaRow, HtaRows};
use super::{DistributedInfo, ErrorKind, GpuEvent, KernelClass, KinetoError, RankTrace};

/// Field names read from each trace event, in slot order.
const EVENT_FIELDS: &[&str] = &["ph", "cat", "name", "ts", "dur", "pid", "tid", "args"];
const PH: usize = 0;
const CAT: usize = 1;
const NAME: usize = 2;
const TS: usize = 3;
const DUR: usize = 4;
const PID: usize = 5;
const TID: usize = 6;
const ARGS: usize = 7;
const ARGS_FIELDS: &[&str] = &["stream", "device", "correlation"];
const DIST_FIELDS: &[&str] = &["rank", "world_size", "backend"];
const TOP_FIELDS: &[&str] = &["traceEvents", "distributedInfo"];
const MAX_FIELDS: usize = 8;

/// The values of the wanted fields of one JSON object, borrowed from the input.
struct Picked<'a> {
    vals: [Option<&'a RawValue>; MAX_FIELDS],
}

/// Visits one JSON object and keeps only the fields named in `names` (at most [`MAX_FIELDS`]);
/// a repeated field keeps its last value, as JavaScript's `JSON.parse` does.
#[derive(Clone, Copy)]
struct PickSeed {
    names: &'static [&'static str],
    expecting: &'static str,
}

impl<'de> DeserializeSeed<'de> for PickSeed {
    type Value = Picked<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PickSeed {
    type Value = Picked<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut vals = [None; MAX_FIELDS];
        while let Some(slot) = map.next_key_seed(KeySeed(self.names))? {
            match slot {
                Some(i) => vals[i] = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Picked { vals })
    }
}

/// A map key: the index of the wanted field it names, or `None`.
struct KeySeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self
            .0
            .iter()
            .position(|n| *n == v)
            .filter(|&i| i < MAX_FIELDS))
    }
}

/// Parses `raw` (a JSON text borrowed from the input) as an object and picks `names`;
/// anything that is not an object gives `None`.
fn pick_lenient<'a>(raw: &'a RawValue, names: &'static [&'static str]) -> Option<Picked<'a>> {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    PickSeed {
        names,
        expecting: "an object",
    }
    .deserialize(&mut de)
    .ok()
}

/// The state of one pass: what was kept so far and where the pass is.
pub(super) struct Collector {
    /// Address of the first byte of the JSON text, to turn borrowed slices into offsets.
    base: usize,
    /// Added to every offset (a skipped byte-order mark).
    shift: u64,
    gzipped: bool,
    names: BTreeMap<String, u32>,
    events: Vec<GpuEvent>,
    distributed: Option<DistributedInfo>,
    saw_events: bool,
    next_index: u64,
    in_events: bool,
    skipped_gpu: u64,
    failure: Option<KinetoError>,
    /// HTA's rows (every entry with `dur` and `cat`, see `hta.rs`).
    hta_rows: Vec<HtaRow>,
    /// Every entry so far has a `ts` written as a JSON integer.
    ts_all_integers: bool,
    /// Distinct names and categories of HTA rows that contain `ProfilerStep`.
    step_symbols: alloc::collections::BTreeSet<String>,
}

impl Collector {
    fn offset_of(&self, raw: &RawValue) -> u64 {
        (raw.get().as_ptr() as usize).wrapping_sub(self.base) as u64 + self.shift
    }

    /// An error about event `index`, located at the offending value `at`, or else at
    /// `fallback` (a field of the same event: its `cat`).
    fn event_err(
        &self,
        index: u64,
        at: Option<&RawValue>,
        fallback: Option<&RawValue>,
        message: String,
    ) -> KinetoError {
        KinetoError {
            kind: ErrorKind::Event,
            offset: at.or(fallback).map(|r| self.offset_of(r)),
            event: Some(index),
            gzipped: self.gzipped,
            message,
        }
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.names.get(name) {
            return i;
        }
        let i = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.insert(name.to_string(), i);
        i
    }

    /// Records what HTA 0.5.0 reads of one entry (`hta.rs`, steps 1 and 2): whether its `ts`
    /// is a JSON integer, and, when it has a `dur` and a `cat` other than `"Trace"`, its row.
    /// A row whose `ts` or `dur` is not a number is skipped (HTA would carry NaN).
    fn hta_row(&mut self, ev: &Picked<'_>) {
        fn not_null(r: Option<&RawValue>) -> Option<&RawValue> {
            r.filter(|r| r.get() != "null")
        }
        let ts_raw = not_null(ev.vals[TS]);
        self.ts_all_integers &= ts_raw.is_some_and(|r| {
            let t = r.get();
            !t.starts_with('"') && !t.contains(['.', 'e', 'E'])
        });
        let (Some(ts_raw), Some(dur_raw), Some(cat_raw)) =
            (ts_raw, not_null(ev.vals[DUR]), not_null(ev.vals[CAT]))
        else {
            return;
        };
        let cat = json_str(cat_raw);
        if cat.as_deref() == Some("Trace") {
            return;
        }
        let as_f64 = |r: &RawValue| number_text(r).and_then(|t| t.parse::<f64>().ok());
        let (Some(ts_us), Some(dur_us)) = (as_f64(ts_raw), as_f64(dur_raw)) else {
            return;
        };
        let name = ev.vals[NAME].and_then(json_str).unwrap_or_default();
        let args = ev.vals[ARGS].and_then(|r| pick_lenient(r, ARGS_FIELDS));
        let arg = |i: usize| args.as_ref().and_then(|a| a.vals[i]).map_or(-1, python_int);
        let profiler_step = name.contains("ProfilerStep");
        if profiler_step && !self.step_symbols.contains(name.as_ref()) {
            self.step_symbols.insert(name.to_string());
        }
        if let Some(c) = cat.filter(|c| c.contains("ProfilerStep")) {
            self.step_symbols.insert(c.into_owned());
        }
        let row = HtaRow {
            name: self.intern(&name),
            ts_us,
            dur_us,
            stream: arg(0),
            correlation: arg(2),
            profiler_step,
        };
        self.hta_rows.push(row);
    }

    /// Classifies one event and keeps it when it ran on a GPU stream.
    fn process(&mut self, index: u64, ev: &Picked<'_>) -> Result<(), KinetoError> {
        self.hta_row(ev);
        let Some(cat_raw) = ev.vals[CAT] else {
            return Ok(());
        };
        let Some(cat) = json_str(cat_raw) else {
            return Ok(());
        };
        if !is_gpu_category(&cat) {
            return Ok(());
        }
        let is_complete = ev.vals[PH].and_then(json_str).is_some_and(|ph| ph == "X");
        if !is_complete {
            self.skipped_gpu += 1;
            return Ok(());
        }
        let what = "GPU event";
        let name_raw = ev.vals[NAME];
        let name = name_raw.and_then(json_str).ok_or_else(|| {
            self.event_err(
                index,
                name_raw,
                ev.vals[CAT],
                format!("{what} (cat {cat:?}): expected `name` as a string"),
            )
        })?;
        let ts_raw = ev.vals[TS];
        let start_ns = ts_raw
            .and_then(|r| number_text(r).and_then(|t| decimal_to_ns(&t).ok()))
            .ok_or_else(|| {
                self.event_err(
                    index,
                    ts_raw,
                    ev.vals[CAT],
                    format!(
                        "{what} {name:?}: expected `ts` as a number of µs within ±9.2e15, found {}",
                        shown(ts_raw)
                    ),
                )
            })?;
        let dur_raw = ev.vals[DUR];
        let dur = dur_raw
            .and_then(|r| number_text(r).and_then(|t| decimal_to_ns(&t).ok()))
            .ok_or_else(|| {
                self.event_err(
                    index,
                    dur_raw,
                    ev.vals[CAT],
                    format!(
                        "{what} {name:?}: expected `dur` as a number of µs within 9.2e15, found {}",
                        shown(dur_raw)
                    ),
                )
            })?;
        let dur_ns = u64::try_from(dur).map_err(|_| {
            self.event_err(
                index,
                dur_raw,
                ev.vals[CAT],
                format!("{what} {name:?}: `dur` is negative ({})", shown(dur_raw)),
            )
        })?;
        if start_ns.checked_add(dur).is_none() {
            return Err(self.event_err(
                index,
                dur_raw,
                ev.vals[CAT],
                format!("{what} {name:?}: `ts` + `dur` is past the representable time range"),
            ));
        }
        let args = ev.vals[ARGS].and_then(|r| pick_lenient(r, ARGS_FIELDS));
        let arg = |i: usize| args.as_ref().and_then(|a| a.vals[i]);
        let stream = arg(0)
            .and_then(json_int)
            .or_else(|| ev.vals[TID].and_then(stream_from_tid))
            .ok_or_else(|| {
                self.event_err(
                    index,
                    ev.vals[ARGS].or(ev.vals[TID]),
                    ev.vals[CAT],
                    format!(
                        "{what} {name:?}: expected the CUDA stream as an integer `args.stream` or `tid`"
                    ),
                )
            })?;
        let device = arg(1)
            .and_then(json_int)
            .or_else(|| ev.vals[PID].and_then(json_int));
        let class = KernelClass::classify(&name);
        let name = self.intern(&name);
        self.events.push(GpuEvent {
            name,
            class,
            device,
            stream,
            start_ns,
            dur_ns,
            event_index: index,
        });
        Ok(())
    }
}

/// GPU activity categories that Kineto writes: kernels, memory copies and sets, and CUDA
/// synchronisation records (lower-case since PyTorch 1.x's `kernel`; older traces wrote
/// `Kernel`, `Memcpy`, `Memset`).
fn is_gpu_category(cat: &str) -> bool {
    [
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "memcpy",
        "memset",
        "cuda_sync",
    ]
    .iter()
    .any(|c| cat.eq_ignore_ascii_case(c))
}

/// The text of a JSON string value, unescaped only when it has escapes.
fn json_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// The digits of a number written either as a JSON number or as a JSON string.
fn number_text(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if text.starts_with('"') {
        json_str(raw)
    } else {
        Some(Cow::Borrowed(text))
    }
}

/// An integer written as a JSON number (`7`, `7.0`) or a numeric string (`"7"`).
fn json_int(raw: &RawValue) -> Option<i64> {
    parse_decimal(&number_text(raw)?, 0)
        .ok()
        .filter(|v| v.1)
        .map(|v| v.0)
}

/// Python's `int()` of a JSON value as HTA applies it to `args.stream`: an integer, a float
/// truncated toward zero, a string holding an integer; −1 for anything else.
fn python_int(raw: &RawValue) -> i64 {
    let text = raw.get();
    if let Some(s) = json_str(raw).filter(|_| text.starts_with('"')) {
        return s.trim().parse::<i64>().unwrap_or(-1);
    }
    if !text.contains(['.', 'e', 'E']) {
        if let Ok((v, true)) = parse_decimal(text, 0) {
            return v;
        }
    }
    match text.parse::<f64>() {
        // `as` saturates; HTA would fail on an infinite or out-of-range value.
        Ok(f) if f.is_finite() && f.abs() < 9.2e18 => libm::trunc(f) as i64,
        _ => -1,
    }
}

/// A stream from a `tid`: an integer, or a string such as `"stream 7"` (older Kineto).
fn stream_from_tid(raw: &RawValue) -> Option<i64> {
    if let Some(v) = json_int(raw) {
        return Some(v);
    }
    let text = json_str(raw)?;
    let lower = text.trim().to_ascii_lowercase();
    let digits = lower.strip_prefix("stream")?.trim();
    parse_decimal(digits, 0).ok().filter(|v| v.1).map(|v| v.0)
}

/// A short rendering of a raw value for messages.
fn shown(raw: Option<&RawValue>) -> String {
    match raw {
        None => "nothing".into(),
        Some(r) => {
            let t = r.get();
            if t.chars().count() > 40 {
                let cut: String = t.chars().take(40).collect();
                format!("{cut}…")
            } else {
                t.to_string()
            }
        }
    }
}

/// Converts a decimal number of microseconds to integer nanoseconds exactly, rounding half to
/// even (the text is read digit by digit, never through f64, so 16-digit epoch timestamps with
/// fractional µs keep every nanosecond).
///
/// # Errors
/// A short reason when the text is not a JSON number or is outside ±(2^63 − 1) ns.
pub fn decimal_to_ns(text: &str) -> Result<i64, &'static str> {
    parse_decimal(text, 3).map(|v| v.0)
}

/// Parses a JSON number (RFC 8259 §6 grammar) and returns round(value × 10^scale) as i64 with
/// ties to even, and whether that was exact.
fn parse_decimal(text: &str, scale: i32) -> Result<(i64, bool), &'static str> {
    const MAX_DIGITS: u32 = 36;
    let b = text.as_bytes();
    let mut i = 0;
    let negative = b.first() == Some(&b'-');
    if negative {
        i += 1;
    }
    let mut mant: u128 = 0;
    let mut digits: u32 = 0;
    let mut exp10: i64 = 0;
    let mut sticky = false;
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        let d = u128::from(b[i] - b'0');
        if digits < MAX_DIGITS {
            if mant != 0 || d != 0 {
                mant = mant * 10 + d;
                if mant != 0 {
                    digits += 1;
                }
            }
        } else {
            exp10 += 1;
            sticky |= d != 0;
        }
        i += 1;
    }
    let int_len = i - int_start;
    if int_len == 0 || (int_len > 1 && b[int_start] == b'0') {
        return Err("not a number");
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            let d = u128::from(b[i] - b'0');
            if digits < MAX_DIGITS {
                mant = mant * 10 + d;
                if mant != 0 {
                    digits += 1;
                }
                exp10 -= 1;
            } else {
                sticky |= d != 0;
            }
            i += 1;
        }
        if i == frac_start {
            return Err("not a number");
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let mut exp_neg = false;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            exp_neg = b[i] == b'-';
            i += 1;
        }
        let exp_start = i;
        let mut e: i64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            e = (e * 10 + i64::from(b[i] - b'0')).min(1_000_000);
            i += 1;
        }
        if i == exp_start {
            return Err("not a number");
        }
        exp10 += if exp_neg { -e } else { e };
    }
    if i != b.len() {
        return Err("not a number");
    }
    exp10 += i64::from(scale);
    let (mag, exact) = if mant == 0 {
        (0u128, !sticky)
    } else if exp10 >= 0 {
        if exp10 > 38 {
            return Err("out of range");
        }
        let m = mant
            .checked_mul(10u128.pow(exp10 as u32))
            .ok_or("out of range")?;
        (m, !sticky)
    } else if exp10 < -38 {
        // mant < 10^36, so the value is below 0.01: it rounds to zero.
        (0, false)
    } else {
        let p = 10u128.pow((-exp10) as u32);
        let (q, r) = (mant / p, mant % p);
        let half = p / 2;
        let up = r > half || (r == half && (sticky || q % 2 == 1));
        (q + u128::from(up), r == 0 && !sticky)
    };
    let limit = i64::MAX as u128;
    if mag > limit {
        return Err("out of range");
    }
    let v = mag as i64;
    Ok((if negative { -v } else { v }, exact))
}

/// The top-level value: an object with `traceEvents`, or a bare array of events (the two
/// forms of Google's Trace Event Format).
struct TopSeed<'c>(&'c mut Collector);

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace: an object with a `traceEvents` array, or an array of events")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(slot) = map.next_key_seed(KeySeed(TOP_FIELDS))? {
            match slot {
                Some(0) => {
                    if self.0.saw_events {
                        return Err(de::Error::custom("`traceEvents` appears twice"));
                    }
                    self.0.saw_events = true;
                    map.next_value_seed(EventsSeed(self.0))?;
                }
                Some(_) => {
                    let raw = map.next_value::<&'de RawValue>()?;
                    self.0.distributed = pick_lenient(raw, DIST_FIELDS).map(|p| DistributedInfo {
                        rank: p.vals[0].and_then(json_int),
                        world_size: p.vals[1].and_then(json_int),
                        backend: p.vals[2].and_then(json_str).map(Cow::into_owned),
                    });
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.0.saw_events = true;
        EventsSeed(self.0).visit_seq(seq)
    }
}

/// The `traceEvents` array, visited one event at a time.
struct EventsSeed<'c>(&'c mut Collector);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`traceEvents` as an array of event objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let c = self.0;
        c.in_events = true;
        let seed = PickSeed {
            names: EVENT_FIELDS,
            expecting: "a trace event object",
        };
        while let Some(ev) = seq.next_element_seed(seed)? {
            let index = c.next_index;
            if let Err(e) = c.process(index, &ev) {
                c.failure = Some(e);
                return Err(de::Error::custom("rejected event"));
            }
            c.next_index += 1;
        }
        c.in_events = false;
        Ok(())
    }
}

/// Reads a Kineto trace from JSON text (plain, already inflated).
pub(super) fn parse_json(bytes: &[u8], gzipped: bool) -> Result<RankTrace, KinetoError> {
    // A UTF-8 byte-order mark is not JSON but some editors write one.
    let (json, shift) = match bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        Some(rest) => (rest, 3u64),
        None => (bytes, 0u64),
    };
    let mut c = Collector {
        base: json.as_ptr() as usize,
        shift,
        gzipped,
        names: BTreeMap::new(),
        events: Vec::new(),
        distributed: None,
        saw_events: false,
        next_index: 0,
        in_events: false,
        skipped_gpu: 0,
        failure: None,
        hta_rows: Vec::new(),
        ts_all_integers: true,
        step_symbols: alloc::collections::BTreeSet::new(),
    };
    let mut de = serde_json::Deserializer::from_slice(json);
    let result = TopSeed(&mut c).deserialize(&mut de).and_then(|()| de.end());
    if let Err(e) = result {
        if let Some(failure) = c.failure.take() {
            return Err(failure);
        }
        return Err(syntax_error(
            json,
            shift,
            &e,
            c.in_events.then_some(c.next_index),
            gzipped,
        ));
    }
    if !c.saw_events {
        return Err(KinetoError {
            kind: ErrorKind::Json,
            offset: None,
            event: None,
            gzipped,
            message: "no `traceEvents` array: this is not a Chrome/Kineto trace".into(),
        });
    }
    let mut names: Vec<String> = Vec::with_capacity(c.names.len());
    let mut by_index: Vec<(u32, String)> = c.names.into_iter().map(|(n, i)| (i, n)).collect();
    by_index.sort_unstable_by_key(|(i, _)| *i);
    names.extend(by_index.into_iter().map(|(_, n)| n));
    c.events.shrink_to_fit();
    c.hta_rows.shrink_to_fit();
    Ok(RankTrace {
        hta: HtaRows {
            rows: c.hta_rows,
            ts_all_integers: c.ts_all_integers,
            profiler_step_symbols: c.step_symbols.len(),
        },
        distributed: c.distributed,
        names,
        events: c.events,
        trace_events: c.next_index,
        skipped_gpu_events: c.skipped_gpu,
    })
}

/// A `serde_json` error as a [`KinetoError`] with the byte offset recovered from its line and
/// column. Lines are 1-based. A syntax error's column is the 1-based column of the offending
/// byte; a data error's (a value of the wrong type) and an end-of-input error's column is the
/// number of bytes of the line read so far, so the offset is where reading stopped: at the
/// start of a wrong container, just past a wrong scalar, at the end of truncated input.
fn syntax_error(
    json: &[u8],
    shift: u64,
    e: &serde_json::Error,
    event: Option<u64>,
    gzipped: bool,
) -> KinetoError {
    let mut line = 1usize;
    let mut line_start = 0usize;
    if e.line() > 1 {
        for (i, &b) in json.iter().enumerate() {
            if b == b'\n' {
                line += 1;
                if line == e.line() {
                    line_start = i + 1;
                    break;
                }
            }
        }
    }
    let column = if e.is_syntax() {
        e.column().saturating_sub(1)
    } else {
        e.column()
    };
    let offset = (line_start + column).min(json.len()) as u64 + shift;
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let mut message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
    if e.is_eof() {
        message = format!("{message} (the JSON ends early: truncated file?)");
    }
    KinetoError {
        kind: ErrorKind::Json,
        offset: Some(offset),
        event,
        gzipped,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_convert_exactly() {
        assert_eq!(decimal_to_ns("1"), Ok(1000));
        assert_eq!(
            decimal_to_ns("4458676983543.183"),
            Ok(4_458_676_983_543_183)
        );
        assert_eq!(
            decimal_to_ns("1694128201428473"),
            Ok(1_694_128_201_428_473_000)
        );
        assert_eq!(decimal_to_ns("1.5e3"), Ok(1_500_000));
        assert_eq!(decimal_to_ns("0.0005"), Ok(0)); // 0.5 ns: ties to even
        assert_eq!(decimal_to_ns("0.0015"), Ok(2));
        assert_eq!(
            decimal_to_ns("0.00150000000000000000000000000000000000001"),
            Ok(2)
        );
        assert_eq!(decimal_to_ns("-2.5"), Ok(-2500));
        assert_eq!(decimal_to_ns("1e-400"), Ok(0));
        assert!(decimal_to_ns("1e400").is_err());
        assert!(decimal_to_ns("9223372036854776").is_err());
        for bad in ["", "-", "01", "1.", ".5", "1e", "1x", "+1", "NaN", "0x10"] {
            assert!(decimal_to_ns(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_decimal("7.0", 0), Ok((7, true)));
        assert_eq!(parse_decimal("7.5", 0), Ok((8, false)));
    }
}
