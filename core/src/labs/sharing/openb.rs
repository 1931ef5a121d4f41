//! Readers of the Alibaba GPU cluster trace v2023 (Weng et al., "Beware of Fragmentation",
//! ATC'23; github.com/alibaba/clusterdata `cluster-trace-gpu-v2023`), as FGD's artifact reads
//! them for its placement experiment:
//! - `openb_node_list_*.csv`: `sn,cpu_milli,memory_mib,gpu,model`, one node per row, grouped
//!   here into [`NodeGroup`]s of identical nodes (first appearance first);
//! - `openb_pod_list_*.csv`: `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...`, one
//!   pod per row, grouped into [`PodClass`]es of identical shapes. The experiment drops every
//!   time column (the artifact's `pod_csv_to_yaml.py` leaves them out of the pods it makes), so
//!   `qos`, `pod_phase` and the times are not read, and every row is a pod, whatever its phase.
//!   `gpu_milli` above 1000 is read as 1000, as the artifact clamps it; `gpu_milli` of a
//!   multi-GPU pod is per GPU (1000 in the released files); `gpu_spec` is a `|`-separated
//!   model list (empty: any model).
//!
//! Columns are found by name (any order); errors name the 1-based line and the column.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::params::{NodeGroup, PodClass, GPU_MILLI, MAX_GPUS_PER_NODE, MAX_NODES, MAX_PODS};
use crate::csv::{Csv, ReadOptions, TraceError};

/// Reads a node list into groups of identical nodes.
///
/// # Errors
/// A missing column, a row that is not a node (bad number, no GPU, more than
/// [`MAX_GPUS_PER_NODE`] GPUs, an empty model), or more than [`MAX_NODES`] rows.
pub fn parse_nodes(text: &str) -> Result<Vec<NodeGroup>, TraceError> {
    let options = ReadOptions {
        skip_bad_rows: false,
        max_rows: MAX_NODES as usize,
    };
    let mut csv = Csv::new(text, &options)?;
    let c_cpu = csv.require("cpu_milli")?;
    let c_mem = csv.require("memory_mib")?;
    let c_gpu = csv.require("gpu")?;
    let c_model = csv.require("model")?;
    let mut groups: Vec<NodeGroup> = Vec::new();
    let mut index: BTreeMap<(String, u32, u64, u64), usize> = BTreeMap::new();
    while let Some(row) = csv.next_row() {
        let row = row?;
        csv.check_width(&row)?;
        let cpu_milli = csv.uint(&row, c_cpu)?;
        let memory_mib = csv.uint(&row, c_mem)?;
        let gpus = csv.uint(&row, c_gpu)?;
        let model = csv.tenant(&row, c_model)?;
        if gpus == 0 || gpus > u64::from(MAX_GPUS_PER_NODE) {
            return Err(TraceError::new(
                row.line,
                csv.name(c_gpu),
                alloc::format!("expected 1 to {MAX_GPUS_PER_NODE} GPUs, got {gpus}"),
            ));
        }
        if cpu_milli > 1 << 32 || memory_mib > 1 << 40 {
            return Err(TraceError::new(
                row.line,
                "(row)",
                "cpu_milli above 2^32 or memory_mib above 2^40",
            ));
        }
        let gpus = gpus as u32;
        let key = (model.to_string(), gpus, cpu_milli, memory_mib);
        if let Some(&i) = index.get(&key) {
            groups[i].count += 1;
        } else {
            index.insert(key, groups.len());
            groups.push(NodeGroup {
                count: 1,
                model: model.to_string(),
                gpus,
                cpu_milli,
                memory_mib,
            });
        }
    }
    if groups.is_empty() {
        return Err(TraceError::new(1, "(row)", "no node rows"));
    }
    Ok(groups)
}

/// Reads a pod list into classes of identical pods.
///
/// # Errors
/// A missing column, a bad number, `num_gpu` above [`MAX_GPUS_PER_NODE`], a GPU pod with
/// `gpu_milli` 0, a sharing share (`gpu_milli` < 1000) on a multi-GPU pod, `cpu_milli` 0, or
/// more than [`MAX_PODS`] rows.
pub fn parse_pods(text: &str) -> Result<Vec<PodClass>, TraceError> {
    let options = ReadOptions {
        skip_bad_rows: false,
        max_rows: MAX_PODS as usize,
    };
    let mut csv = Csv::new(text, &options)?;
    let c_cpu = csv.require("cpu_milli")?;
    let c_mem = csv.require("memory_mib")?;
    let c_gpus = csv.require("num_gpu")?;
    let c_milli = csv.require("gpu_milli")?;
    let c_spec = csv.find(&["gpu_spec"]);
    let mut classes: Vec<PodClass> = Vec::new();
    let mut index: BTreeMap<(u64, u64, u32, u32, String), usize> = BTreeMap::new();
    while let Some(row) = csv.next_row() {
        let row = row?;
        csv.check_width(&row)?;
        let cpu_milli = csv.uint(&row, c_cpu)?;
        let memory_mib = csv.uint(&row, c_mem)?;
        let num_gpu = csv.uint(&row, c_gpus)?;
        let milli = csv.uint(&row, c_milli)?;
        let spec = match c_spec {
            Some(c) => csv.text(&row, c)?,
            None => "",
        };
        if num_gpu > u64::from(MAX_GPUS_PER_NODE) {
            return Err(TraceError::new(
                row.line,
                csv.name(c_gpus),
                alloc::format!("expected at most {MAX_GPUS_PER_NODE} GPUs, got {num_gpu}"),
            ));
        }
        let num_gpu = num_gpu as u32;
        if cpu_milli == 0 || cpu_milli > 1 << 32 {
            return Err(TraceError::new(
                row.line,
                csv.name(c_cpu),
                "expected 1 to 2^32 milli-cores",
            ));
        }
        if memory_mib > 1 << 40 {
            return Err(TraceError::new(row.line, csv.name(c_mem), "above 2^40 MiB"));
        }
        let gpu_milli = if num_gpu == 0 {
            0
        } else {
            let m = milli.min(u64::from(GPU_MILLI)) as u32;
            if m == 0 {
                return Err(TraceError::new(
                    row.line,
                    csv.name(c_milli),
                    "a GPU pod must ask for more than 0 milli-GPU",
                ));
            }
            if num_gpu > 1 && m < GPU_MILLI {
                return Err(TraceError::new(
                    row.line,
                    csv.name(c_milli),
                    alloc::format!(
                        "a pod of {num_gpu} GPUs must take whole GPUs (1000), got {milli}"
                    ),
                ));
            }
            m
        };
        let key = (cpu_milli, memory_mib, num_gpu, gpu_milli, spec.to_string());
        if let Some(&i) = index.get(&key) {
            classes[i].count += 1;
        } else {
            index.insert(key, classes.len());
            classes.push(PodClass {
                count: 1,
                cpu_milli,
                memory_mib,
                num_gpu,
                gpu_milli,
                models: spec
                    .split('|')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(ToString::to_string)
                    .collect(),
            });
        }
    }
    if classes.is_empty() {
        return Err(TraceError::new(1, "(row)", "no pod rows"));
    }
    Ok(classes)
}
