//! The cost lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

const LAB: &str = "cost";

/// The presets of the cost lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "cost-allreduce-h100",
        "AllReduce of 64 MiB on 8 H100s in one node (NVLink)"
    ),
    preset!(
        "cost-allreduce-two-nodes",
        "The same AllReduce on 16 H100s across two nodes (InfiniBand)"
    ),
];

/// The cost lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Cost models",
    title: "Cost models",
    body: CardBody::Tool {
        text: "GEMM, attention and memory-bound kernels on A100, H100 and H200; AllReduce, AllGather, ReduceScatter, AllToAll and P2P under the alpha-beta model over NVLink and InfiniBand, next to measured NCCL profiles.",
    },
};

/// The tours of the cost lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("cost-collectives")];
