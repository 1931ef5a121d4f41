//! Naive detector on raw iteration time: an iteration alarms when its time is more than
//! `z_threshold` standard deviations above the mean of the previous `window` iterations. Each
//! run of consecutive alarming iterations is one alarm (raised at its first iteration).

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::{mean_std, Alarm};

/// State of the naive z-score detector.
#[derive(Clone, Debug)]
pub struct Naive {
    window: usize,
    z_threshold: f64,
    recent: VecDeque<f64>,
    in_alarm: bool,
}

impl Naive {
    /// A detector with a moving window of `window` iterations.
    #[must_use]
    pub fn new(window: u32, z_threshold: f64) -> Naive {
        Naive {
            window: window as usize,
            z_threshold,
            recent: VecDeque::new(),
            in_alarm: false,
        }
    }

    /// Feeds one iteration's time, s; returns an alarm at the start of an alarming run.
    pub fn observe(&mut self, iteration: u32, time_s: f64) -> Option<Alarm> {
        let mut alarm = None;
        if self.recent.len() >= self.window {
            let values: Vec<f64> = self.recent.iter().copied().collect();
            let (mean, std) = mean_std(&values);
            let z = if std > 0.0 {
                (time_s - mean) / std
            } else if time_s > mean {
                f64::INFINITY
            } else {
                0.0
            };
            let high = z > self.z_threshold;
            if high && !self.in_alarm {
                alarm = Some(Alarm {
                    iteration,
                    gpus: Vec::new(),
                    slowdowns: Vec::new(),
                });
            }
            self.in_alarm = high;
        }
        self.recent.push_back(time_s);
        if self.recent.len() > self.window {
            self.recent.pop_front();
        }
        alarm
    }
}
