//! The tuning lab's page parts (Hydro's tuning side): the μP shrinker's per-layer table, a live
//! μTransfer experiment — small MLPs really trained in the page's worker at several widths,
//! loss against learning rate under standard parametrization and under μP — and the
//! trial-fusion model's throughput and memory against the fusion count. The page is the
//! generic one; the Report's tables and charts are its picture.

use super::generic::PageParts;

/// What the tuning page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "Hydro tunes a narrow surrogate instead of the wide target, re-parametrized with μP so \
           that the best hyperparameters carry over, and fuses many small trials into one batched \
           model. Here the shrinker's rules are a table, the transfer is a real experiment — every \
           curve below comes from MLPs trained in this page — and fusion is a model of throughput \
           and memory. This quick run (60 steps, one replica) is too short for the best rate to \
           settle: with 200 steps and 8 replicas (`bubblelab tuning --scenario \
           tests/claims/tuning-mutransfer-long.json`, about three minutes) μP keeps it on one grid \
           point from width 32 to 512 while SP's falls fourfold (docs/CLAIMS.md).",
    unit: "training runs",
    main: &[
        "experiment.widths",
        "experiment.optimizer",
        "experiment.steps",
        "experiment.batch",
        "experiment.hidden_layers",
        "experiment.seed",
        "experiment.seeds",
        "shrinker.ratio",
        "fusion.max_fusion",
        "fusion.launch_overhead_us",
    ],
    charts: &[
        (
            "tuning.sp",
            "Standard parametrization: held-out loss vs learning rate, per width",
        ),
        (
            "tuning.mup",
            "μP: held-out loss vs learning rate, per width",
        ),
        ("tuning.fusion.throughput", "Fused trials: throughput vs F"),
        ("tuning.fusion.memory", "Fused trials: memory vs F"),
    ],
    ..PageParts::PLAIN
};
