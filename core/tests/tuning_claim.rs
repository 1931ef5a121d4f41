//! Tensor Programs V's μTransfer claim at CLI scale: on `tests/claims/tuning-mutransfer-long.json`
//! (seed 2022, widths 32–512, Adam, 200 steps, 8 replicas averaged, η = 2⁻¹² … 2⁻³) the best
//! learning rate under μP stays on one grid point across a 16× change of width while SP's moves
//! by two. The page's quick preset (60 steps, one replica) is too short and too noisy to show it
//! (`tuning_known::mutransfer_on_the_fixed_seed` pins that); docs/CLAIMS.md lists every
//! configuration tried, including those that do not separate SP from μP.
//!
//! About three minutes in an optimised build, hours in a debug one, so it runs only in
//! optimised builds: `cargo test --profile bench -p bubblelab-core --test tuning_claim`
//! (a step of `cargo xtask test`).

use bubblelab_core::labs::tuning::experiment::{self, spread_steps, WidthSweep};
use bubblelab_core::Scenario;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "minutes in an optimised build: cargo test --profile bench -p bubblelab-core --test tuning_claim"
)]
fn mup_keeps_the_best_learning_rate_across_widths_and_sp_does_not() {
    let json = include_str!("../../tests/claims/tuning-mutransfer-long.json");
    let Ok(Scenario::Tuning(p)) = Scenario::from_json(json) else {
        panic!("tests/claims/tuning-mutransfer-long.json is not a tuning scenario")
    };
    let out = experiment::run(&p.experiment, &mut |_, _| {});
    let best = |s: &[WidthSweep]| -> Vec<usize> { s.iter().map(WidthSweep::best_index).collect() };
    assert!(
        spread_steps(&out.mup) <= 1,
        "μP's best grid index per width: {:?}",
        best(&out.mup)
    );
    assert!(
        spread_steps(&out.sp) >= 2,
        "SP's best grid index per width: {:?}",
        best(&out.sp)
    );
    // Measured on this configuration: SP 5,5,4,4,3 (η = 2⁻⁷ → 2⁻⁹), μP 5,5,5,5,5 (2⁻⁷).
    assert_eq!(best(&out.sp), vec![5, 5, 4, 4, 3]);
    assert_eq!(best(&out.mup), vec![5, 5, 5, 5, 5]);
}
