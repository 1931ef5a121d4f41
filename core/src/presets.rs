//! Preset scenarios: the JSON files in `static/presets/`, shared by the page and the CLI. Each
//! lab lists its own in its `presets.rs` (the registry collects them).

use crate::scenario::{Scenario, ScenarioError};

/// A named preset scenario.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// File stem, e.g. `pipeline-gpipe-vs-1f1b`.
    pub id: &'static str,
    /// Lab it belongs to.
    pub lab: &'static str,
    /// Menu title.
    pub title: &'static str,
    /// The scenario JSON as stored in `static/presets/<id>.json`.
    pub json: &'static str,
}

impl Preset {
    /// Parses the preset.
    ///
    /// # Errors
    /// Only if a preset file is broken, which a test forbids.
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        Scenario::from_json(self.json)
    }
}

/// A preset whose scenario is `static/presets/<id>.json`, for a lab's `presets.rs` (whose
/// `LAB` names the lab).
macro_rules! preset {
    ($id:literal, $title:literal) => {
        $crate::presets::Preset {
            id: $id,
            lab: LAB,
            title: $title,
            json: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../static/presets/",
                $id,
                ".json"
            )),
        }
    };
}
pub(crate) use preset;

/// Every preset, lab by lab in the registry's order, each lab's in its menu order. A lab's
/// first preset is what its page opens with ([`default_for`]).
pub fn all() -> impl Iterator<Item = &'static Preset> {
    crate::labs::LAB_PRESETS
        .iter()
        .flat_map(|presets| presets.iter())
}

/// The preset with this id.
#[must_use]
pub fn find(id: &str) -> Option<&'static Preset> {
    all().find(|p| p.id == id)
}

/// The preset a lab's page opens with: the lab's first in menu order (`None` for a lab
/// without presets).
#[must_use]
pub fn default_for(lab: &str) -> Option<&'static Preset> {
    for_lab(lab).next()
}

/// The presets of one lab.
pub fn for_lab(lab: &str) -> impl Iterator<Item = &'static Preset> + '_ {
    all().filter(move |p| p.lab == lab)
}

/// How the playground introduces a lab: its link in the navigation and its card on the home
/// page. A lab declares it in its `presets.rs` beside its presets; the registry collects it
/// ([`crate::labs::LAB_CARDS`]).
#[derive(Clone, Copy, Debug)]
pub struct Card {
    /// The navigation link's text, e.g. `Pipeline`.
    pub nav: &'static str,
    /// The card's title, e.g. `Pipeline bubbles`.
    pub title: &'static str,
    /// What the card says.
    pub body: CardBody,
}

/// The text of a lab's [`Card`].
#[derive(Clone, Copy, Debug)]
pub enum CardBody {
    /// A card under "Labs": the problem, the systems, their key idea and the headline claim.
    Lab {
        /// What goes wrong, in one or two sentences.
        problem: &'static str,
        /// The systems the lab runs.
        system: &'static str,
        /// Their key idea.
        idea: &'static str,
        /// The source's headline claim, and where ours is.
        claim: &'static str,
    },
    /// A card under "Tools every lab shares": what the tool shows.
    Tool {
        /// One paragraph.
        text: &'static str,
    },
}
