//! Change-point detector on raw iteration time: a one-sided CUSUM (Page 1954). The first
//! `window` iterations give the reference mean μ and standard deviation σ; then
//! S ← max(0, S + (x − μ)/σ − k) and an alarm is raised when S > h. After an alarm the reference
//! is learned again from the next `window` iterations (the new regime).

use alloc::vec::Vec;

use super::{mean_std, Alarm};

/// State of the CUSUM detector.
#[derive(Clone, Debug)]
pub struct ChangePoint {
    window: usize,
    k: f64,
    h: f64,
    learning: Vec<f64>,
    reference: Option<(f64, f64)>,
    sum: f64,
}

impl ChangePoint {
    /// A detector with reference window `window`, slack `k` and threshold `h` (in σ).
    #[must_use]
    pub fn new(window: u32, k: f64, h: f64) -> ChangePoint {
        ChangePoint {
            window: window as usize,
            k,
            h,
            learning: Vec::new(),
            reference: None,
            sum: 0.0,
        }
    }

    /// Feeds one iteration's time, s.
    pub fn observe(&mut self, iteration: u32, time_s: f64) -> Option<Alarm> {
        let Some((mean, std)) = self.reference else {
            self.learning.push(time_s);
            if self.learning.len() >= self.window {
                let (m, s) = mean_std(&self.learning);
                // A σ of 0 (no variation at all) would make any change infinite: floor at 0.1 %.
                self.reference = Some((m, s.max(m * 1e-3).max(1e-12)));
                self.learning.clear();
                self.sum = 0.0;
            }
            return None;
        };
        self.sum = (self.sum + (time_s - mean) / std - self.k).max(0.0);
        if self.sum > self.h {
            self.reference = None;
            self.sum = 0.0;
            return Some(Alarm {
                iteration,
                gpus: Vec::new(),
                slowdowns: Vec::new(),
            });
        }
        None
    }
}
