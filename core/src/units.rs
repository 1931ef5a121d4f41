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
}
