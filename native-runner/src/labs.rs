//! `bubblelab labs`: every lab of the registry with its card — what goes wrong, the systems it
//! runs, and the files it reads — in the order the playground lists them.

use bubblelab_core::labs::{LABS, LAB_CARDS, LAB_PRESETS};
use bubblelab_core::presets::CardBody;
use bubblelab_core::Scenario;

use crate::error::Failure;
use crate::files;

/// `bubblelab labs`.
///
/// # Errors
/// Write failures.
pub fn labs() -> Result<(), Failure> {
    files::write_stdout(&list())
}

/// One paragraph per lab.
fn list() -> String {
    let mut out = String::new();
    for ((lab, card), presets) in LABS.iter().zip(LAB_CARDS).zip(LAB_PRESETS) {
        out.push_str(&format!("{lab} — {}\n", card.title));
        match card.body {
            CardBody::Lab {
                problem, system, ..
            } => {
                out.push_str(&format!("  problem: {problem}\n  systems: {system}\n"));
            }
            CardBody::Tool { text } => out.push_str(&format!("  {text}\n")),
        }
        let slots = Scenario::defaults(lab).map_or(&[][..], |s| s.input_slots());
        if !slots.is_empty() {
            let names: Vec<&str> = slots.iter().map(|s| s.name).collect();
            out.push_str(&format!(
                "  reads:   {} (`bubblelab run {lab} --inputs`)\n",
                names.join(", ")
            ));
        }
        let plural = if presets.len() == 1 { "" } else { "s" };
        out.push_str(&format!(
            "  try:     bubblelab run {lab}   ({} preset{plural}: `bubblelab presets`)\n\n",
            presets.len()
        ));
    }
    out
}
