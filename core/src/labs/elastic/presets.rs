//! The elastic lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

const LAB: &str = "elastic";

/// The presets of the elastic lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "elastic-pollux-vs-baselines",
        "Pollux against Optimus+Oracle and Tiresias on the artifact's workload-6 (a lighter search: 30 individuals × 20 generations)"
    ),
    preset!(
        "elastic-pollux-artifact-search",
        "The same with the artifact's search, 100 × 100 (about 30 s natively)"
    ),
];

/// The elastic lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Elastic",
    title: "Jobs that grow and shrink",
    body: CardBody::Lab {
        problem: "Users pick a job's GPU count and batch size once; the best choice changes as the cluster fills and as training goes on (a larger batch buys less progress per sample), so fixed choices waste GPUs or time.",
        system: "Pollux (goodput-driven co-adaptive scheduling), against its artifact's Optimus+Oracle and Tiresias",
        idea: "Model each job's goodput — throughput × statistical efficiency — and every minute re-choose all jobs' GPUs for the fairest mean goodput speedup; each job then picks its best batch size.",
        claim: "Average JCT 37–50 % below state-of-the-art schedulers given ideal configurations; in its artifact's simulator 52 % below Optimus+Oracle and 32 % below Tiresias (seed's numbers; ours on its eight workloads: 55 % and 39 % — docs/CLAIMS.md).",
    },
};

/// The tours of the elastic lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("elastic-pollux")];
