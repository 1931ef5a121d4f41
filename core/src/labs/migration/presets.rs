//! The migration lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

const LAB: &str = "migration";

/// The presets of the migration lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "migration-7b-tp2-dp4-one-node",
        "Pause/restore a 7B TP=2 × DP=4 job: reserved pool vs active + low point + dedup"
    ),
    preset!(
        "migration-13b-tp4-two-nodes",
        "Migrate a 13B TP=4 × DP=4 job across nodes vs framework checkpoint + restart"
    ),
    preset!(
        "migration-small-cnn-cpu-bound",
        "A small model whose CPU state dominates: where active-only stops paying"
    ),
];

/// The migration lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Migration",
    title: "Pausing and moving GPU jobs",
    body: CardBody::Lab {
        problem: "Preemption, defragmentation and migration need a running GPU job paused, its state saved small and correct, and resumed elsewhere; saving the framework's whole reserved pool, or checkpointing in the framework and restarting the process, makes every move expensive.",
        system: "FlowGPU-style transparent checkpoint (active memory, low point of the iteration, fixed-size-region dedup), against the reserved pool (POS-style) and framework checkpoint + restart",
        idea: "Save only memory in use, wait (boundedly) for the iteration's low point, save replicas' identical regions once, restore at the same virtual addresses so device pointers stay valid.",
        claim: "Pause 6.2–15× faster than POS, restore 12–18× faster, migration 1.7–4.5× faster than framework checkpointing (seed's numbers; ours, from the cost model, are on the lab page and in docs/CLAIMS.md).",
    },
};

/// The tours of the migration lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("migration-flowgpu")];
