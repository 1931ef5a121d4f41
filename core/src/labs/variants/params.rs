//! The variants lab's scenario: the catalogue of model variants of one use-case (accuracy,
//! hardware, profiled latency, load time), the applications that query it (each with its
//! accuracy floor, latency SLO and rate), the hardware prices and the policies to compare.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::policies::SelectionPolicy;
use crate::scenario::ScenarioError;

/// The most variants of a catalogue.
pub const MAX_VARIANTS: usize = 64;
/// The most applications.
pub const MAX_APPS: usize = 16;
/// The most queries one run may simulate (the sum over applications of rate × time).
pub const MAX_QUERIES: f64 = 2_000_000.0;

crate::kinds! {
    /// The hardware a variant runs on; its framework decides it in INFaaS
    /// (`src/common/common_model_util.cc` l. 378–413: TensorFlow-CPU and PyTorch on CPU,
    /// TensorRT and TensorFlow-GPU on GPU).
    pub enum Hardware as "hardware" {
        /// A CPU instance.
        Cpu = "cpu", "CPU";
        /// A GPU instance.
        Gpu = "gpu", "GPU";
    }
}

/// One model variant: an architecture compiled for one framework and hardware, with the profile
/// INFaaS's model registrar stores (`src/profiler/model_profile.config.template`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Name, unique in the catalogue (e.g. `resnet50-gpu`).
    pub name: String,
    /// Hardware it runs on.
    pub hardware: Hardware,
    /// Top-1 accuracy, %.
    pub accuracy_pct: f64,
    /// Largest batch it takes; INFaaS reads a variant with more than 64 as a CPU variant.
    pub max_batch: u32,
    /// Profiled inference latency at batch 0, ms (the registrar's least-squares intercept).
    pub intercept_ms: f64,
    /// Profiled inference latency per item of a batch, ms (the registrar's slope).
    pub slope_ms: f64,
    /// Time to load it onto an instance before its first query, ms.
    pub load_ms: f64,
}

/// An application: queries of one use-case with the same accuracy floor and latency SLO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct App {
    /// Name, unique among the applications.
    pub name: String,
    /// Lowest acceptable top-1 accuracy, %.
    pub min_accuracy_pct: f64,
    /// Latency SLO of one query, arrival to answer, ms.
    pub slo_ms: f64,
    /// Queries per second outside the burst (Poisson arrivals).
    pub qps: f64,
    /// Queries per second during the burst.
    pub burst_qps: f64,
}

/// What one hour of a machine of each hardware costs, $.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Prices {
    /// One CPU machine, $ per hour.
    pub cpu_per_hour: f64,
    /// One GPU machine, $ per hour.
    pub gpu_per_hour: f64,
}

impl Default for Prices {
    /// AWS on-demand list prices (us-east-1) of the instance types INFaaS was evaluated on:
    /// m5.2xlarge (8 vCPUs) and p3.2xlarge (one V100).
    fn default() -> Self {
        Prices {
            cpu_per_hour: 0.384,
            gpu_per_hour: 3.06,
        }
    }
}

impl Prices {
    /// The price of one machine of `hardware`, $ per hour.
    #[must_use]
    pub fn per_hour(&self, hardware: Hardware) -> f64 {
        match hardware {
            Hardware::Cpu => self.cpu_per_hour,
            Hardware::Gpu => self.gpu_per_hour,
        }
    }
}

/// The machines instances may be loaded on, per hardware (the pool stays fixed: INFaaS's VM
/// autoscaler is not modelled; a machine is billed from its first load).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Machines {
    /// CPU machines.
    pub cpu: u32,
    /// GPU machines.
    pub gpu: u32,
}

impl Default for Machines {
    fn default() -> Self {
        Machines { cpu: 4, gpu: 4 }
    }
}

impl Machines {
    /// The machines of `hardware`.
    #[must_use]
    pub fn of(&self, hardware: Hardware) -> u32 {
        match hardware {
            Hardware::Cpu => self.cpu,
            Hardware::Gpu => self.gpu,
        }
    }
}

/// The scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VariantsParams {
    /// Policies to compare, in display order.
    pub policies: Vec<SelectionPolicy>,
    /// The catalogue of variants of the use-case.
    pub variants: Vec<Variant>,
    /// The applications that query it.
    pub apps: Vec<App>,
    /// Items (images) per query.
    pub batch: u32,
    /// Simulated time, s: queries arrive until then.
    pub duration_s: f64,
    /// Start of the burst, s.
    pub burst_start_s: f64,
    /// End of the burst, s.
    pub burst_end_s: f64,
    /// Period of each instance's load monitor, ms (INFaaS's `query_executor.cc`: 1 s).
    pub monitor_ms: u32,
    /// The machines of each hardware.
    pub machines: Machines,
    /// Machine prices.
    pub prices: Prices,
    /// Seed of the arrivals.
    pub seed: u64,
}

/// A variant of the default catalogue: top-1 accuracy and time per batch of 32 as the Keras
/// Applications table gives them (keras.io/api/applications), the time split as slope only.
fn keras(name: &str, hardware: Hardware, accuracy_pct: f64, batch32_ms: f64) -> Variant {
    Variant {
        name: name.into(),
        hardware,
        accuracy_pct,
        max_batch: match hardware {
            Hardware::Cpu => 128,
            Hardware::Gpu => 32,
        },
        intercept_ms: 0.0,
        slope_ms: batch32_ms / 32.0,
        load_ms: match hardware {
            Hardware::Cpu => 1_000.0,
            Hardware::Gpu => 2_000.0,
        },
    }
}

/// The default catalogue: seven ImageNet classifiers of the Keras Applications table, each
/// on CPU and on GPU.
fn default_variants() -> Vec<Variant> {
    let rows = [
        ("mobilenet_v2", 71.3, 25.9, 3.8),
        ("resnet50", 74.9, 58.2, 4.6),
        ("resnet101_v2", 77.2, 72.7, 5.4),
        ("inception_v3", 77.9, 42.2, 6.9),
        ("resnet152_v2", 78.0, 107.5, 6.6),
        ("xception", 79.0, 109.4, 8.1),
        ("inception_resnet_v2", 80.3, 130.2, 10.0),
    ];
    let mut out = Vec::new();
    for (name, acc, cpu_ms, gpu_ms) in rows {
        out.push(keras(&format!("{name}-cpu"), Hardware::Cpu, acc, cpu_ms));
        out.push(keras(&format!("{name}-gpu"), Hardware::Gpu, acc, gpu_ms));
    }
    out
}

impl Default for VariantsParams {
    fn default() -> Self {
        let app = |name: &str, min_accuracy_pct, slo_ms, qps, burst_qps| App {
            name: name.into(),
            min_accuracy_pct,
            slo_ms,
            qps,
            burst_qps,
        };
        VariantsParams {
            policies: SelectionPolicy::ALL.to_vec(),
            variants: default_variants(),
            apps: vec![
                app("photo-tagging", 76.0, 300.0, 4.0, 4.0),
                app("visual-search", 76.0, 50.0, 100.0, 400.0),
                app("moderation", 79.0, 100.0, 20.0, 20.0),
            ],
            batch: 32,
            duration_s: 60.0,
            burst_start_s: 20.0,
            burst_end_s: 40.0,
            monitor_ms: 1_000,
            machines: Machines::default(),
            prices: Prices::default(),
            seed: 1,
        }
    }
}

impl VariantsParams {
    /// Checks every field; the error names the first bad one.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path `variants.<field>` and the expected range.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check(
            "variants",
            super::fields::FIELDS,
            &crate::scenario::to_value(self),
        )?;
        if self.burst_end_s < self.burst_start_s {
            return Err(field(
                "burst_end_s",
                format!("must be at least burst_start_s ({}), got {}", self.burst_start_s, self.burst_end_s),
            ));
        }
        self.validate_variants()?;
        self.validate_apps()
    }

    fn validate_variants(&self) -> Result<(), ScenarioError> {
        if self.variants.is_empty() || self.variants.len() > MAX_VARIANTS {
            return Err(field(
                "variants",
                format!("must list 1 to {MAX_VARIANTS} variants, got {}", self.variants.len()),
            ));
        }
        for (i, v) in self.variants.iter().enumerate() {
            let at = |name: &str| format!("variants[{i}].{name}");
            if v.name.is_empty() || self.variants[..i].iter().any(|o| o.name == v.name) {
                return Err(field(&at("name"), format!("must be a name no other variant has, got `{}`", v.name)));
            }
            if !(v.accuracy_pct > 0.0 && v.accuracy_pct <= 100.0) {
                return Err(field(&at("accuracy_pct"), format!("must be more than 0 and at most 100, got {}", v.accuracy_pct)));
            }
            // INFaaS reads the hardware from the max batch in places (over 64: a CPU variant).
            let (lo, hi) = match v.hardware {
                Hardware::Cpu => (65, 1024),
                Hardware::Gpu => (1, 63),
            };
            if !(lo..=hi).contains(&v.max_batch) {
                return Err(field(
                    &at("max_batch"),
                    format!("must be between {lo} and {hi} for a {} variant (INFaaS tells CPU variants by a max batch over 64), got {}", v.hardware.id(), v.max_batch),
                ));
            }
            in_range(&at("intercept_ms"), v.intercept_ms, 0.0, 600_000.0)?;
            in_range(&at("slope_ms"), v.slope_ms, 0.0, 600_000.0)?;
            if v.intercept_ms + v.slope_ms <= 0.0 {
                return Err(field(&at("slope_ms"), "intercept_ms + slope_ms must be more than 0 (a query takes time)".into()));
            }
            in_range(&at("load_ms"), v.load_ms, 0.0, 3_600_000.0)?;
        }
        Ok(())
    }

    fn validate_apps(&self) -> Result<(), ScenarioError> {
        if self.apps.is_empty() || self.apps.len() > MAX_APPS {
            return Err(field("apps", format!("must list 1 to {MAX_APPS} applications, got {}", self.apps.len())));
        }
        let mut queries = 0.0;
        for (i, a) in self.apps.iter().enumerate() {
            let at = |name: &str| format!("apps[{i}].{name}");
            if a.name.is_empty() || self.apps[..i].iter().any(|o| o.name == a.name) {
                return Err(field(&at("name"), format!("must be a name no other application has, got `{}`", a.name)));
            }
            in_range(&at("min_accuracy_pct"), a.min_accuracy_pct, 0.0, 100.0)?;
            in_range(&at("slo_ms"), a.slo_ms, 1.0, 100_000.0)?;
            in_range(&at("qps"), a.qps, 0.0, 100_000.0)?;
            in_range(&at("burst_qps"), a.burst_qps, 0.0, 100_000.0)?;
            let burst_s = self.burst_end_s.min(self.duration_s) - self.burst_start_s.min(self.duration_s);
            queries += a.qps * (self.duration_s - burst_s) + a.burst_qps * burst_s;
        }
        if queries > MAX_QUERIES {
            return Err(field(
                "apps",
                format!("the applications' rates over duration_s ask for about {queries:.0} queries; at most {MAX_QUERIES:.0}"),
            ));
        }
        Ok(())
    }
}

/// A field error at `variants.<path>`.
fn field(path: &str, message: String) -> ScenarioError {
    ScenarioError::field(format!("variants.{path}"), message)
}

/// `v` within `min..=max`, or an error at `variants.<path>`.
fn in_range(path: &str, v: f64, min: f64, max: f64) -> Result<(), ScenarioError> {
    if v.is_finite() && v >= min && v <= max {
        Ok(())
    } else {
        Err(field(path, format!("must be between {min} and {max}, got {v}")))
    }
}
