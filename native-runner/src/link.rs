//! `bubblelab link`: make a share link, or open one.

use std::path::PathBuf;

use bubblelab_core::share::{self, LinkError};
use bubblelab_core::Scenario;
use clap::Args;

use crate::error::Failure;
use crate::files;

/// Arguments of `bubblelab link`.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// Scenario JSON file, or `-` to read it from stdin.
    #[arg(
        value_name = "SCENARIO",
        required_unless_present_any = ["preset", "decode", "scenario_flag"],
        conflicts_with_all = ["preset", "decode", "scenario_flag"]
    )]
    scenario: Option<PathBuf>,
    /// The same scenario file as a flag, as the lab commands take it.
    #[arg(
        long = "scenario",
        value_name = "FILE",
        conflicts_with_all = ["preset", "decode"]
    )]
    scenario_flag: Option<PathBuf>,
    /// Link a built-in preset instead of a file (list them with `bubblelab presets`).
    #[arg(long, value_name = "ID", conflicts_with = "decode")]
    preset: Option<String>,
    /// Address the page is served from; the link is `<BASE>/#/<lab>?s=<payload>`.
    #[arg(
        long,
        value_name = "URL",
        default_value = "http://127.0.0.1:8080",
        conflicts_with = "decode"
    )]
    base: String,
    /// Decode a share link instead and print its scenario as JSON. Accepts a full URL
    /// (`…/#/<lab>?s=<payload>`), a fragment (`#/<lab>?s=…`) or the bare payload.
    #[arg(long, value_name = "LINK")]
    decode: Option<String>,
}

/// `bubblelab link`.
///
/// # Errors
/// [`Failure::Input`] for a bad scenario or a link that does not decode.
pub fn link(args: &LinkArgs) -> Result<(), Failure> {
    if let Some(link) = &args.decode {
        let scenario = decode(link)?;
        let mut json = scenario.to_json_pretty();
        json.push('\n');
        return files::write_stdout(&json);
    }
    let file = args.scenario.as_deref().or(args.scenario_flag.as_deref());
    let scenario = crate::run::load_scenario(file, args.preset.as_deref())?;
    let mut url = share::link(&args.base, &scenario);
    url.push('\n');
    files::write_stdout(&url)
}

/// The scenario of a link (a URL, its fragment, `s=…` or the bare payload).
///
/// # Errors
/// [`Failure::Input`] saying what is wrong with the link, as `--decode`'s error.
pub(crate) fn decode(link: &str) -> Result<Scenario, Failure> {
    share::decode_link(link).map_err(|e| {
        let hint = match e {
            LinkError::Base64(_) | LinkError::Deflate(_) => {
                " (was the link cut short or changed when it was copied?)"
            }
            _ => "",
        };
        Failure::Input(format!("--decode: {e}{hint}"))
    })
}
