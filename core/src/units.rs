//! Units. Simulated time is integer nanoseconds so that every platform agrees on every event
//! order; costs may be computed in `f64` and are rounded once, here.

use serde::{Deserialize, Serialize};

/// A span of simulated time in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    /// Zero nanoseconds.
    pub const ZERO: Nanos = Nanos(0);

    /// Rounds a non-negative duration in milliseconds to whole nanoseconds (negative or NaN → 0).
    #[must_use]
    pub fn from_ms_f64(ms: f64) -> Nanos {
        nanos_from_f64(ms * 1e6)
    }

    /// This duration in milliseconds.
    #[must_use]
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// This duration in microseconds (the unit of Chrome trace timestamps).
    #[must_use]
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
}

impl core::ops::Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
}

impl core::ops::Sub for Nanos {
    type Output = Nanos;
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }
}

/// Rounds a non-negative `f64` count of nanoseconds to the nearest integer once.
/// Negative values and NaN become 0; values beyond `u64::MAX` saturate.
#[must_use]
pub fn nanos_from_f64(ns: f64) -> Nanos {
    if ns.is_nan() || ns <= 0.0 {
        Nanos(0)
    } else {
        // `as` saturates for values above u64::MAX.
        Nanos(libm::round(ns) as u64)
    }
}

/// Bytes in one gibibyte.
pub const GIB: u64 = 1 << 30;

/// Formats a byte count with a binary prefix for tables (`1.50 GiB`).
#[must_use]
pub fn format_bytes(bytes: f64) -> alloc::string::String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    alloc::format!("{value:.2} {}", UNITS[unit])
}

/// `v` rounded to `decimals` decimal places (half away from zero; ±∞ and NaN unchanged), as the
/// Reports' tables show figures. At most 9 places.
#[must_use]
pub fn round_to(v: f64, decimals: u32) -> f64 {
    const SCALE: [f64; 10] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
    let scale = SCALE[(decimals as usize).min(SCALE.len() - 1)];
    libm::round(v * scale) / scale
}

/// Index of the nearest-rank percentile `q` (0–1) in a sorted slice of `len` values: the
/// ⌈q·len⌉-th value, at least the first; `None` when empty.
#[must_use]
pub fn nearest_rank(len: usize, q: f64) -> Option<usize> {
    if len == 0 {
        return None;
    }
    let rank = libm::ceil(q * len as f64) as usize;
    Some(rank.clamp(1, len) - 1)
}

/// The median of `values` (sorted in place, by `total_cmp`): the middle value, or the mean of
/// the middle two for an even count; `None` when empty.
pub fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some(f64::midpoint(values[n / 2 - 1], values[n / 2])),
    }
}

/// A standard normal deviate by the Box–Muller transform from two uniforms in [0, 1):
/// z = √(−2 ln(1 − u₁)) · cos(2π u₂) (Box and Muller 1958, eq. 1; 1 − u₁ keeps the logarithm
/// finite). The one normal of the core: the synthetic traces, the agentic workload, the
/// resilience jitter and sequence lengths and the tuning lab's initial weights all draw here,
/// so a seed keeps giving the same stream everywhere.
#[must_use]
pub fn box_muller(u1: f64, u2: f64) -> f64 {
    libm::sqrt(-2.0 * libm::log(1.0 - u1)) * libm::cos(2.0 * core::f64::consts::PI * u2)
}

/// A standard normal deviate from the next two uniforms of `rng` ([`box_muller`]).
pub fn standard_normal(rng: &mut impl rand::RngExt) -> f64 {
    let u1: f64 = rng.random();
    let u2: f64 = rng.random();
    box_muller(u1, u2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_once_and_saturating() {
        assert_eq!(Nanos::from_ms_f64(1.5), Nanos(1_500_000));
        assert_eq!(nanos_from_f64(-3.0), Nanos(0));
        assert_eq!(nanos_from_f64(f64::NAN), Nanos(0));
        assert_eq!(nanos_from_f64(2.5), Nanos(3));
        assert_eq!(nanos_from_f64(1e30), Nanos(u64::MAX));
        assert_eq!(Nanos(5) - Nanos(7), Nanos(0));
    }

    #[test]
    fn bytes_format() {
        assert_eq!(format_bytes(1536.0 * 1024.0 * 1024.0), "1.50 GiB");
        assert_eq!(format_bytes(12.0), "12.00 B");
    }

    #[test]
    fn round_to_percentile_and_median() {
        assert_eq!(round_to(1.234_56, 3), 1.235);
        assert_eq!(round_to(-2.5, 0), -3.0);
        assert!(round_to(f64::NAN, 2).is_nan());
        assert_eq!(round_to(f64::INFINITY, 4), f64::INFINITY);
        assert_eq!(nearest_rank(0, 0.5), None);
        assert_eq!(nearest_rank(4, 0.0), Some(0));
        assert_eq!(nearest_rank(4, 0.5), Some(1));
        assert_eq!(nearest_rank(4, 0.51), Some(2));
        assert_eq!(nearest_rank(4, 1.0), Some(3));
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
