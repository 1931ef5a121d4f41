//! Per-GPU-type speeds for a trace whose jobs have none: each job is given one of Gavel's 26
//! job types (a model and batch size) and runs on each GPU type at that job type's measured
//! throughput there, relative to the cluster's first type (the type of the jobs' durations).
//!
//! The table is Gavel's simulator input (stanford-futuredata/gavel @c4fa400,
//! `scheduler/simulation_throughputs.json`, MIT licence): steps/s of each job type alone on one
//! GPU (scale factor 1, key `null`) of a V100, a P100 and a K80. A job of several GPUs uses the
//! same ratios (Gavel measures its multi-GPU throughputs separately; the ratios differ by a few
//! per cent). The cluster's GPU types are matched to the table's by name (`V100`, `P100`, `K80`,
//! any case).
//!
//! Randomness: `rand_pcg::Pcg64Mcg` seeded from [`ThroughputSpec::seed`], one uniform draw per
//! job of the trace in its order (its job type, uniform over the 26 as Gavel's generator draws
//! them from its `JobTable`, `scheduler/utils.py` line 87, `job_table.py` 74–87); a job that
//! already has speeds keeps them.

use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::labs::fairness::job::Trace;
use crate::labs::fairness::params::GpuTypeSpec;
use crate::scenario::ScenarioError;

crate::kinds! {
    /// Where jobs' per-type speeds come from.
    #[derive(Default)]
    pub enum ThroughputTable as "throughput table" {
        /// None: every job runs at its duration's speed on every type.
        #[default]
        None = "none", "none: every type at the reference speed";
        /// Gavel's measured throughputs of 26 job types on V100, P100 and K80.
        Gavel = "gavel", "Gavel's 26 job types on V100, P100, K80";
    }
}

/// The GPU types of Gavel's table, in its columns' order.
pub const GAVEL_TYPES: [&str; 3] = ["V100", "P100", "K80"];

/// Gavel's job types and their throughputs alone on one GPU, steps/s on V100, P100, K80.
pub const GAVEL_THROUGHPUTS: [(&str, [f64; 3]); 26] = [
    ("ResNet-18 (batch size 16)", [32.3534, 35.8692, 4.7953]),
    ("ResNet-18 (batch size 32)", [29.9472, 35.8254, 7.1758]),
    ("ResNet-18 (batch size 64)", [24.0932, 22.3049, 7.0521]),
    ("ResNet-18 (batch size 128)", [17.9949, 11.6755, 1.8065]),
    ("ResNet-18 (batch size 256)", [10.3003, 7.7228, 0.8856]),
    ("ResNet-50 (batch size 16)", [11.3961, 9.053, 2.3005]),
    ("ResNet-50 (batch size 32)", [7.7873, 4.8883, 1.2366]),
    ("ResNet-50 (batch size 64)", [4.3948, 2.6195, 0.619]),
    ("ResNet-50 (batch size 128)", [2.4968, 1.5844, 0.3472]),
    ("Transformer (batch size 16)", [11.0641, 9.5372, 5.4674]),
    ("Transformer (batch size 32)", [10.6209, 7.8692, 3.5074]),
    ("Transformer (batch size 64)", [8.6178, 5.0918, 1.7522]),
    ("Transformer (batch size 128)", [5.4461, 3.0735, 0.9816]),
    ("Transformer (batch size 256)", [1.5951, 1.6777, 0.4583]),
    ("A3C", [7.1758, 5.6813, 3.4388]),
    ("LM (batch size 5)", [109.1666, 90.7759, 25.4855]),
    ("LM (batch size 10)", [81.6516, 77.0847, 23.7944]),
    ("LM (batch size 20)", [64.7425, 58.1727, 17.1423]),
    ("LM (batch size 40)", [45.2374, 35.7664, 11.4997]),
    ("LM (batch size 80)", [28.24, 21.1575, 6.0542]),
    ("Recommendation (batch size 512)", [23.3176, 48.8824, 32.8593]),
    ("Recommendation (batch size 1024)", [13.2826, 30.7444, 20.05]),
    ("Recommendation (batch size 2048)", [7.4696, 16.5966, 10.4412]),
    ("Recommendation (batch size 4096)", [3.9061, 8.8967, 5.3002]),
    ("Recommendation (batch size 8192)", [2.8415, 5.5484, 2.6988]),
    ("CycleGAN", [4.4261, 2.4027, 0.5048]),
];

/// How jobs get per-type speeds (the `fairness.throughputs` part of a scenario).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ThroughputSpec {
    /// The table (default: none, which leaves a trace as it is).
    pub table: ThroughputTable,
    /// Seed of the draws.
    pub seed: u64,
}

/// The column of Gavel's table for each of `types` (by name, any case).
///
/// # Errors
/// [`ScenarioError::Field`] at `fairness.cluster.gpu_types[i].name` for a type the table does
/// not have, or at `fairness.cluster.gpu_types` when the cluster lists no types.
pub fn gavel_columns(types: &[GpuTypeSpec]) -> Result<Vec<usize>, ScenarioError> {
    if types.is_empty() {
        return Err(ScenarioError::Field {
            path: "fairness.cluster.gpu_types".into(),
            message: "Gavel's throughput table needs the cluster's GPU types by name (V100, P100, K80)".into(),
        });
    }
    types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            GAVEL_TYPES
                .iter()
                .position(|g| g.eq_ignore_ascii_case(&t.name))
                .ok_or_else(|| ScenarioError::Field {
                    path: alloc::format!("fairness.cluster.gpu_types[{i}].name"),
                    message: alloc::format!(
                        "Gavel's throughput table has V100, P100 and K80, not `{}`",
                        t.name
                    ),
                })
        })
        .collect()
}

/// Gives `trace`'s jobs speeds as `spec` says on a cluster of `types` (nothing when the table
/// is none, or when the types are not the table's, which validation rejects); see the module
/// documentation.
pub fn assign(trace: &mut Trace, spec: &ThroughputSpec, types: &[GpuTypeSpec]) {
    if spec.table == ThroughputTable::None {
        return;
    }
    let Ok(columns) = gavel_columns(types) else {
        return;
    };
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    for job in &mut trace.jobs {
        let u: f64 = rng.random();
        if !job.speed_by_gpu_type.is_empty() {
            continue;
        }
        let row = ((u * GAVEL_THROUGHPUTS.len() as f64) as usize).min(GAVEL_THROUGHPUTS.len() - 1);
        let tp = GAVEL_THROUGHPUTS[row].1;
        let reference = tp[columns[0]];
        job.speed_by_gpu_type = columns.iter().map(|&c| tp[c] / reference).collect();
    }
}
