//! Alibaba GPU cluster trace v2023 (Weng et al., "Beware of Fragmentation", ATC'23;
//! github.com/alibaba/clusterdata `cluster-trace-gpu-v2023`) `openb_pod_list_*.csv`:
//! `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
//! deletion_time,scheduled_time` (times in trace-relative seconds).
//!
//! Columns are found by name. Mapping:
//! - `id` = the 0-based index of the data row (pod names are `openb-pod-NNNN`, and NNNN equals
//!   this index in the released files), counting skipped rows too;
//! - tenant = `qos` (`LS`, `BE`, `Burstable`, `Guaranteed`): the trace has no user or tenant
//!   column, and qos is its only class label (per the data folder's README);
//! - submission = `creation_time` seconds;
//! - duration = `deletion_time` − `scheduled_time` seconds (the time the pod held its GPUs;
//!   pods still running at the end of the trace end at the trace's end);
//! - `gpus` = ⌈`num_gpu` × `gpu_milli` / 1000⌉ when `gpu_milli` > 0, else `num_gpu`: a
//!   GPU-sharing pod (`num_gpu` 1, `gpu_milli` < 1000) is given one whole GPU, since the
//!   simulator allocates whole GPUs (this overstates the demand of sharing pods; whole-GPU pods
//!   have `gpu_milli` 1000 and are unchanged).
//!
//! Always skipped and counted (see the parent module): pods with `num_gpu` 0 (CPU pods) and pods
//! never scheduled (empty `scheduled_time`, phase `Pending`: they never ran, so they have no
//! duration). `cpu_milli`, `memory_mib`, `gpu_spec` and `pod_phase` are not used.

use super::{check_gpus, ns_from_s, Builder, Csv, ReadOptions, TraceError};
use crate::labs::fairness::job::Trace;

/// Parses an Alibaba v2023 `openb_pod_list` CSV; see the module documentation.
///
/// # Errors
/// A missing header column; the first bad row unless `options.skip_bad_rows`.
pub fn parse(text: &str, options: &ReadOptions) -> Result<Trace, TraceError> {
    let mut csv = Csv::new(text, options)?;
    let c_gpus = csv.require("num_gpu")?;
    let c_milli = csv.require("gpu_milli")?;
    let c_qos = csv.require("qos")?;
    let c_create = csv.require("creation_time")?;
    let c_delete = csv.require("deletion_time")?;
    let c_sched = csv.require("scheduled_time")?;
    let mut b = Builder::new(options);
    let mut index: u64 = 0;
    while let Some(row) = csv.next_row() {
        let row = row?;
        let id = index;
        index += 1;
        let outcome = (|| {
            csv.check_width(&row)?;
            let num_gpu = csv.uint(&row, c_gpus)?;
            let milli = csv.uint(&row, c_milli)?;
            let qos = csv.tenant(&row, c_qos)?;
            let create_s = csv.seconds(&row, c_create)?;
            let delete_s = csv.seconds(&row, c_delete)?;
            if csv.text(&row, c_sched)?.is_empty() || num_gpu == 0 {
                b.skip();
                return Ok(());
            }
            let sched_s = csv.seconds(&row, c_sched)?;
            if delete_s < sched_s {
                return Err(TraceError::new(
                    row.line,
                    csv.name(c_delete),
                    "before scheduled_time",
                ));
            }
            let gpus = if milli == 0 {
                num_gpu
            } else {
                num_gpu.saturating_mul(milli).div_ceil(1000)
            };
            let gpus =
                check_gpus(gpus).map_err(|m| TraceError::new(row.line, csv.name(c_gpus), m))?;
            b.push(
                row.line,
                id,
                qos,
                gpus,
                ns_from_s(create_s),
                ns_from_s(delete_s - sched_s),
            );
            Ok(())
        })();
        b.row(outcome)?;
    }
    Ok(b.finish("alibaba-openb"))
}
