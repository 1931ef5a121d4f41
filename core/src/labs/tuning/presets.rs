//! The tuning lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

const LAB: &str = "tuning";

/// The presets of the tuning lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "tuning-mutransfer-mlp",
        "μTransfer: MLP widths 32–256, Adam, SP vs μP; GPT-2 small shrunk ÷8; fusion on H100"
    ),
];

/// The tuning lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Tuning",
    title: "Cheap tuning trials",
    body: CardBody::Lab {
        problem: "Tuning a large model's hyperparameters on the model itself costs many full trainings; tuning a narrow copy finds the wrong learning rate unless the parametrization makes it transfer.",
        system: "Hydro's tuning side: μP shrinking (Tensor Programs V) and trial fusion",
        idea: "Shrink the width, re-parametrize every layer class with μP so the best hyperparameters carry over to the wide target, and fuse many small trials into one batched model.",
        claim: "Under μP the best learning rate stays put across widths while it drifts under standard parametrization (seed's claim; in our short real experiment both drift by two grid steps — see the lab page and docs/CLAIMS.md).",
    },
};

/// The tours of the tuning lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("tuning-mutransfer")];
