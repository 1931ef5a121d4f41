//! The variants lab's home-page card and navigation link, its presets in menu order (the first
//! is what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

const LAB: &str = "variants";

/// The presets of the variants lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "variants-burst",
        "Three applications, one burst: INFaaS against a fixed variant per application"
    ),
    preset!(
        "variants-loose-slo-bin",
        "An accuracy floor whose first bin holds only fast variants: INFaaS refuses a loose SLO"
    ),
];

/// The variants lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Variants",
    title: "Choosing a model variant",
    body: CardBody::Lab {
        problem: "One task has many model variants — architectures, frameworks, CPU or GPU — that trade accuracy, latency and cost. Asking each user to pick one and provision it either overpays for loose deadlines or misses tight ones when load changes.",
        system: "INFaaS's model-less selection (its artifact's use-case search and load monitor), against a fixed variant per application chosen by the cheapest or the fastest profile",
        idea: "Let a query state only its accuracy floor and latency SLO; the system picks among running variants the one with the least slack, starts a new one when none fits or the running one is overloaded, and sends loose deadlines to cheap CPU variants.",
        claim: "1.3× higher throughput, 1.6× fewer SLO violations and up to 21.6× lower cost than existing serving systems (the paper's abstract; ours, on a catalogue of Keras's published ImageNet models, are on the lab page and in docs/CLAIMS.md).",
    },
};

/// The tours of the variants lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("variants-infaas")];
