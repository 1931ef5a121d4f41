//! Axis ticks: round steps (1, 2 or 5 × 10^k) and one unit per axis, so a reader compares
//! labels without converting ("0 ms, 5 ms, 10 ms", never "0 ns … 5.000 ms").

/// The step of 1, 2 or 5 × 10^k nearest (by ratio) to `span / target`: about `target` ticks.
#[must_use]
pub fn nice_step(span: f64, target: f64) -> f64 {
    let raw = span / target.max(1.0);
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let off = |s: f64| (s / raw).max(raw / s);
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .fold(mag, |best, s| if off(s) < off(best) { s } else { best })
}

/// Decimals that show every multiple of `step` exactly (0 for steps of 1 and more).
#[must_use]
pub fn decimals_for(step: f64) -> usize {
    if step >= 1.0 || !(step.is_finite() && step > 0.0) {
        0
    } else {
        (-step.log10().floor()) as usize
    }
}

/// The multiples of `step` within [lo, hi].
#[must_use]
pub fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    if !(step.is_finite() && step > 0.0 && lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last.max(first - 1))
        .map(|k| k as f64 * step)
        .collect()
}

/// One value axis: round ticks over [lo, hi] and their labels, all with the same decimals.
#[must_use]
pub fn value_ticks(lo: f64, hi: f64, target: f64) -> Vec<(f64, String)> {
    let step = nice_step(hi - lo, target);
    let d = decimals_for(step);
    ticks(lo, hi, step)
        .into_iter()
        .map(|v| (v, format!("{:.d$}", if v == 0.0 { 0.0 } else { v })))
        .collect()
}

/// A time axis in one unit: the largest of h, s, ms, µs and ns not above the axis' largest
/// value, with the decimals its step needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeUnit {
    /// Nanoseconds per unit.
    pub ns: f64,
    /// Its symbol.
    pub symbol: &'static str,
    /// Decimals every tick is written with.
    pub decimals: usize,
}

impl TimeUnit {
    /// The unit for an axis reaching `max_ns` with ticks `step_ns` apart.
    #[must_use]
    pub fn for_axis(max_ns: f64, step_ns: f64) -> TimeUnit {
        let (ns, symbol) = [
            (3.6e12, "h"),
            (1e9, "s"),
            (1e6, "ms"),
            (1e3, "µs"),
            (1.0, "ns"),
        ]
        .into_iter()
        .find(|(unit, _)| max_ns.abs() >= *unit)
        .unwrap_or((1.0, "ns"));
        TimeUnit {
            ns,
            symbol,
            decimals: decimals_for(step_ns / ns),
        }
    }

    /// `t_ns` written in this unit.
    #[must_use]
    pub fn format(&self, t_ns: f64) -> String {
        let v = t_ns / self.ns;
        let d = self.decimals;
        format!("{:.d$} {}", if v == 0.0 { 0.0 } else { v }, self.symbol)
    }
}
