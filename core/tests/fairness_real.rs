//! Claim direction on the real per-user job traces in `../shared/data` (DIR-LAB derivatives of
//! Philly and Helios): ASTRAEA against the baselines. `BUBBLELAB_DATA` names the folder; when it
//! is missing the test fails under `CI=true` and prints "skipped: no data folder" otherwise.
//! Full-trace numbers (7,500 jobs each) are in docs/CLAIMS.md (`bubblelab fairness`); this test
//! runs the first 500 jobs of each on 128 GPUs to stay fast in debug builds.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::fairness::traces::{self, ReadOptions, TraceFormat};
use bubblelab_core::labs::fairness::{self, FairnessParams, PolicyKind};

#[test]
fn real_traces_astraea_fairer_than_fifo() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    for (folder, file) in [
        ("philly_user_jobs_dirlab", "philly_data_training.csv"),
        ("helios_user_jobs_dirlab", "helios_data_training.csv"),
    ] {
        let path = dir.join(folder).join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let options = ReadOptions {
            skip_bad_rows: true,
            ..ReadOptions::default()
        };
        let mut trace = traces::parse(TraceFormat::Dirlab, &text, &options).unwrap();
        trace.jobs.truncate(500);
        let mut params = FairnessParams::default();
        params.cluster.nodes = 16;
        params.policies = vec![PolicyKind::Fifo, PolicyKind::Sjf, PolicyKind::Astraea];
        let report = fairness::run_trace(&params, &trace).unwrap();
        let u = |id: &str| report.metric(&format!("{id}.tenant_unfairness")).unwrap();
        let j = |id: &str| report.metric(&format!("{id}.avg_jct_s")).unwrap();
        for k in &params.policies {
            println!(
                "{folder} {:>13}: tenant unfairness {:.4}, avg JCT {:.0} s",
                k.id(),
                u(k.id()),
                j(k.id())
            );
        }
        assert!(u("astraea") < u("fifo"), "{folder}");
        assert!(u("astraea") < u("sjf"), "{folder}");
    }
}
