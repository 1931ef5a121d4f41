//! The fairness lab run in pieces, as the playground runs it in several Web Workers: the
//! policies split among pieces ([`FairnessParams::simulate_some`]), each piece's digests sent
//! through JSON, and the Report built from them ([`FairnessParams::assemble`]) is the Report of
//! the run in one go, byte for byte.

#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap fails the test

mod common;

use bubblelab_core::labs::fairness::report::{RunDigest, TraceFacts};
use bubblelab_core::labs::fairness::{synthetic_trace, Dropped, FairnessParams};
use bubblelab_core::scenario::KeepsRuns;
use bubblelab_core::{Report, ScenarioError};
use common::fairness_scenarios as scenarios;

/// The Report of `params` run in the pieces `split`, each piece's output through JSON.
fn in_pieces(params: &FairnessParams, split: &[Vec<usize>]) -> Result<Report, ScenarioError> {
    let trace = synthetic_trace(params)?;
    let mut digests = Vec::new();
    let mut facts = None;
    let mut dropped = None;
    for which in split {
        let piece = params.simulate_some(&trace, which)?;
        assert_eq!(piece.runs.runs.len(), which.len());
        let wire = serde_json::to_string(&(&piece.facts, &piece.dropped, &piece.digests)).unwrap();
        let (f, d, mut ds): (TraceFacts, Dropped, Vec<(usize, RunDigest)>) =
            serde_json::from_str(&wire).expect("a digest survives JSON");
        assert_eq!(ds, piece.digests, "a digest changed through JSON");
        facts = Some(f);
        dropped = Some(d);
        digests.append(&mut ds);
    }
    params.assemble(&facts.unwrap(), dropped.unwrap(), digests)
}

#[test]
fn a_run_in_pieces_gives_the_report_of_the_run_in_one_go() {
    for (name, params) in scenarios() {
        let trace = synthetic_trace(&params).unwrap();
        let whole = params.simulate(&trace, &mut |_, _| {}).unwrap().report;
        let whole = serde_json::to_string(&whole).unwrap();
        let n = params.policies.len();
        // One policy per piece, last first; and two pieces, odd positions then even.
        let singles: Vec<Vec<usize>> = (0..n).rev().map(|i| vec![i]).collect();
        let halves: Vec<Vec<usize>> = vec![
            (0..n).filter(|i| i % 2 == 1).collect(),
            (0..n).filter(|i| i % 2 == 0).collect(),
        ];
        for split in [singles, halves] {
            let pieces = serde_json::to_string(&in_pieces(&params, &split).unwrap()).unwrap();
            assert!(
                pieces == whole,
                "{name}: the Report in pieces {split:?} differs"
            );
        }
    }
}

#[test]
fn assemble_refuses_missing_repeated_or_foreign_digests() {
    let (_, params) = scenarios().remove(0);
    assert!(params.policies.len() >= 2);
    let n = params.policies.len();
    let missing: Vec<Vec<usize>> = vec![(1..n).collect()];
    let err = in_pieces(&params, &missing).unwrap_err().to_string();
    assert!(err.contains("not one of each"), "{err}");
    let repeated: Vec<Vec<usize>> = vec![(0..n).collect(), vec![0]];
    assert!(in_pieces(&params, &repeated).is_err());
    let trace = synthetic_trace(&params).unwrap();
    let err = params.simulate_some(&trace, &[n]).unwrap_err().to_string();
    assert!(
        err.contains("fairness.policies") && err.contains(&format!("position {n}")),
        "{err}"
    );
    // A digest of another policy at a position is refused too.
    let mut piece = params
        .simulate_some(&trace, &(0..n).collect::<Vec<_>>())
        .unwrap();
    let other = params
        .policies
        .iter()
        .find(|&&k| k != params.policies[0])
        .copied();
    piece.digests[0].1.kind = other.expect("the scenario runs two different policies");
    assert!(params
        .assemble(&piece.facts, piece.dropped, piece.digests)
        .is_err());
}
