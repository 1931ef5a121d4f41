//! `bubblelab tour`: walk a tour without the page — each step's question, the run's answer and
//! the explanation — or, with `--link`, print the link that opens it in the page. A teacher
//! checks a tour file with it: the command prints nothing and fails, naming each step, where a
//! run does not give the answer the explanation states.

use std::path::Path;

use bubblelab_core::report::format_number;
use bubblelab_core::share;
use bubblelab_core::tour::{self, Answer, Measured, Tour};
use clap::Args;

use crate::error::Failure;
use crate::files;

/// Arguments of `bubblelab tour`.
#[derive(Debug, Args)]
pub struct TourArgs {
    /// A shipped tour's id, a tour file or a tour link (`…/#/tours?t=…`); without it, the
    /// shipped tours are listed.
    #[arg(value_name = "TOUR")]
    tour: Option<String>,
    /// Print the link that opens the tour in the page instead of walking it.
    #[arg(long)]
    link: bool,
    /// Address the page is served from (with `--link`).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    base: String,
}

/// The tour file's text and the tour that `given` names: a shipped id, a file or a link.
fn load(given: &str) -> Result<(String, Tour), Failure> {
    let read = |text: String, what: &str| {
        Tour::from_json(&text)
            .map(|t| (text, t))
            .map_err(|e| Failure::Input(format!("{what}: {e}")))
    };
    if let Some(t) = tour::find(given) {
        return read(t.json.to_string(), given);
    }
    if let Some((_, fragment)) = given.split_once('#') {
        if let Some(payload) = share::parse_fragment(fragment).tour {
            return share::decode_tour(&payload).map_err(|e| Failure::Input(e.to_string()));
        }
    }
    let path = Path::new(given);
    if path.is_file() {
        return read(files::read_text(path, share::MAX_JSON_BYTES)?, given);
    }
    Err(Failure::Input(format!(
        "`{given}` is not a shipped tour, a tour file or a tour link (list the tours with `bubblelab tour`)"
    )))
}

/// `bubblelab tour`.
///
/// # Errors
/// [`Failure::Input`] for a tour that does not read (naming the field), and for a step whose
/// run does not give the answer its explanation states (naming the step).
pub fn tour(args: &TourArgs) -> Result<(), Failure> {
    let Some(given) = &args.tour else {
        let mut out = String::new();
        for t in tour::all() {
            let tour = t
                .tour()
                .map_err(|e| Failure::Other(format!("{}: {e}", t.id)))?;
            out.push_str(&format!(
                "{:<22} {:<11} {} ({} steps)\n",
                t.id,
                tour.lab,
                tour.title,
                tour.steps.len()
            ));
        }
        return files::write_stdout(&out);
    };
    let (text, tour) = load(given)?;
    if args.link {
        let url = format!(
            "{}/{}\n",
            args.base.trim_end_matches('/'),
            share::tour_fragment(&text)
        );
        return files::write_stdout(&url);
    }
    let mut out = format!("{}\n{}\n", tour.title, tour.summary);
    let mut wrong = Vec::new();
    for (i, step) in tour.steps.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n", i + 1, step.title));
        if !step.set.is_empty() {
            out.push_str(&format!("   changes: {}\n", step.set.join(", ")));
        }
        out.push_str(&format!("   Q: {}\n", step.question));
        let report = bubblelab_core::run(&step.scenario)
            .map_err(|e| crate::run::scenario_failure(&format!("step {}", i + 1), &e))?;
        match tour.check_step(i, &report) {
            Ok(measured) => out.push_str(&format!(
                "   run: {}\n",
                answer_line(&step.answer, &measured)
            )),
            Err(e) => {
                out.push_str(&format!("   run: WRONG — {e}\n"));
                wrong.push(e.to_string());
            }
        }
        out.push_str(&format!("   why: {}\n", step.explanation()));
    }
    if !wrong.is_empty() {
        return Err(Failure::Input(format!(
            "{} step(s) of the tour do not give the answer their explanation states: {}",
            wrong.len(),
            wrong.join("; ")
        )));
    }
    files::write_stdout(&out)
}

/// The run's answer, with every option's value for a choice.
fn answer_line(answer: &Answer, measured: &Measured) -> String {
    match (answer, measured) {
        (Answer::Number { tolerance, .. }, m @ Measured::Number { .. }) => {
            format!(
                "{} (a prediction within ±{} is right)",
                m.display(),
                format_number(*tolerance)
            )
        }
        (_, Measured::Choice { winner, values }) => {
            let all: Vec<String> = values
                .iter()
                .map(|(label, v)| format!("{label} {}", format_number(*v)))
                .collect();
            format!("{winner} ({})", all.join(", "))
        }
        (_, m) => m.display(),
    }
}
