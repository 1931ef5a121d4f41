//! `bubblelab presets`: list the preset scenarios or print one.

use bubblelab_core::presets::{self, Preset};
use clap::Args;

use crate::error::Failure;
use crate::files;

/// Arguments of `bubblelab presets`.
#[derive(Debug, Args)]
pub struct PresetsArgs {
    /// Preset to print as scenario JSON; without it every preset is listed.
    #[arg(value_name = "ID")]
    id: Option<String>,
    /// With ID: print every parameter (defaults filled in), not only those the preset sets.
    #[arg(long, requires = "id")]
    full: bool,
}

/// The preset with this id.
///
/// # Errors
/// [`Failure::Input`] listing the known ids.
pub fn find(id: &str) -> Result<&'static Preset, Failure> {
    presets::find(id).ok_or_else(|| {
        let known: Vec<&str> = presets::all().map(|p| p.id).collect();
        Failure::Input(format!(
            "unknown preset `{id}`; known presets: {}",
            known.join(", ")
        ))
    })
}

/// `bubblelab presets`.
///
/// # Errors
/// [`Failure::Input`] for an unknown id; write failures.
pub fn presets(args: &PresetsArgs) -> Result<(), Failure> {
    let Some(id) = &args.id else {
        return files::write_stdout(&list());
    };
    let preset = find(id)?;
    let mut text = if args.full {
        preset
            .scenario()
            .map_err(|e| Failure::Other(format!("preset {id} is broken: {e}")))?
            .to_json_pretty()
    } else {
        preset.json.trim_end().to_string()
    };
    text.push('\n');
    files::write_stdout(&text)
}

/// Every preset as aligned `id  lab  title` rows.
fn list() -> String {
    let id_width = presets::all().map(|p| p.id.len()).max().unwrap_or(0).max(2);
    let lab_width = presets::all()
        .map(|p| p.lab.len())
        .max()
        .unwrap_or(0)
        .max(3);
    let mut out = format!("{:id_width$}  {:lab_width$}  title\n", "id", "lab");
    for p in presets::all() {
        out.push_str(&format!(
            "{:id_width$}  {:lab_width$}  {}\n",
            p.id, p.lab, p.title
        ));
    }
    out
}
