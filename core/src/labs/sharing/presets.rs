//! The sharing lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

const LAB: &str = "sharing";

/// The presets of the sharing lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "sharing-fgd-openb-shape",
        "FGD vs its artifact's baselines: openb's common pod shapes on a tenth of its cluster, cloned to 130 %"
    ),
    preset!(
        "sharing-gandiva-packing-over-time",
        "Over time: packing raises GPU use but slows pods; Gandiva-style unpacking moves the slowest"
    ),
];

/// The sharing lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Sharing",
    title: "GPUs in slivers",
    body: CardBody::Lab {
        problem: "Pods that ask for a share of one GPU leave slivers no arriving pod can use, and whole-GPU pods need wholly free GPUs on one node: pods fail while a tenth of the cluster sits idle.",
        system: "FGD (fragmentation gradient descent), against its artifact's Random, DotProd, GpuClustering, GpuPacking and BestFit",
        idea: "Score each placement by how much it grows the node's fragmentation — the idle GPU share the usual mix of pods could not use — and take the smallest growth.",
        claim: "Up to 49 % fewer unallocated GPUs (290 GPUs) on Alibaba's openb trace (seed's numbers; ours on the real node list and half the pods: 31 % fewer than BestFit, 47 % fewer than DotProd — docs/CLAIMS.md).",
    },
};

/// The tours of the sharing lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("sharing-fgd")];
