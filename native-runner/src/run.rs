//! `bubblelab run` and `bubblelab pipeline-log`: produce a Report and print it.

use std::path::{Path, PathBuf};

use bubblelab_core::labs::pipeline::pipemorph::{load_run, MAX_LOG_BYTES};
use bubblelab_core::scenario::InputFile;
use bubblelab_core::sweep;
use bubblelab_core::{Report, Scenario, ScenarioError};
use clap::Args;

use crate::error::Failure;
use crate::files::{self, MAX_INPUT_BYTES};
use crate::{Format, ReportOutput};

/// Arguments of `bubblelab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A lab's name (the run starts from its first preset, the one its page opens with), a
    /// scenario JSON file, or `-` to read one from stdin.
    #[arg(
        value_name = "LAB|SCENARIO",
        required_unless_present_any = ["preset", "scenario_flag"],
        conflicts_with_all = ["preset", "scenario_flag"]
    )]
    scenario: Option<PathBuf>,
    /// The same scenario file as a flag, as the lab commands take it.
    #[arg(long = "scenario", value_name = "FILE", conflicts_with = "preset")]
    scenario_flag: Option<PathBuf>,
    /// Run a built-in preset instead of a file (list them with `bubblelab presets`).
    #[arg(long, value_name = "ID")]
    preset: Option<String>,
    /// Set a parameter, as errors name it: `stages=8`, `astraea.quota=fair`,
    /// `stage_slowdown[2]=1.5`, `schedules=1f1b,zb-h1` (JSON, a bare word, or a comma list for
    /// a list); repeatable, applied in order, validated once at the end.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Sweep a field over values: PATH=V1,V2,… (repeatable: every combination, the first
    /// axis outermost); one table, a row per point with every metric the points share.
    #[arg(long = "sweep", value_name = "PATH=V1,V2,…")]
    sweep: Vec<String>,
    /// Read a file into one of the lab's input slots (`trace=philly.csv`, `pods=pods.csv`);
    /// repeatable. `bubblelab run LAB --inputs` lists the lab's slots.
    #[arg(long = "input", value_name = "SLOT=FILE")]
    input: Vec<String>,
    /// List the lab's input slots and exit.
    #[arg(long)]
    inputs: bool,
    /// List the lab's parameters (path, unit, range, default, meaning) and exit.
    #[arg(long)]
    fields: bool,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// Arguments of `bubblelab pipeline-log`.
#[derive(Debug, Args)]
pub struct PipelineLogArgs {
    /// Folder of one PipeMorph run: its per-stage `*.log` files and, optionally, Megatron's
    /// `log.txt`.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// Loads the scenario named by a file argument (or `-`) or a preset id; exactly one is given.
///
/// # Errors
/// [`Failure::Input`] naming the file (or preset) and the bad field.
pub fn load_scenario(file: Option<&Path>, preset: Option<&str>) -> Result<Scenario, Failure> {
    match (file, preset) {
        (_, Some(id)) => {
            let preset = crate::presets::find(id)?;
            preset
                .scenario()
                .map_err(|e| Failure::Other(format!("preset {id} is broken: {e}")))
        }
        (Some(path), None) => {
            let name = files::label(path);
            let text = files::read_text(path, MAX_INPUT_BYTES)?;
            Scenario::from_json(&text).map_err(|e| scenario_failure(&name, &e))
        }
        (None, None) => Err(Failure::Input(
            "give a scenario file, `-` for stdin, or --preset <ID>".into(),
        )),
    }
}

/// A scenario error as a failure: bad input names the source; a failed run is not the user's
/// fault.
pub(crate) fn scenario_failure(source: &str, e: &ScenarioError) -> Failure {
    let message = if source.is_empty() {
        e.to_string()
    } else {
        format!("{source}: {e}")
    };
    match e {
        ScenarioError::Run(_) => Failure::Other(message),
        ScenarioError::Syntax { .. } | ScenarioError::Field { .. } => Failure::Input(message),
    }
}

/// The parameters a lab command starts from: `file`, else preset `preset`, else the lab's
/// first preset (what its page opens with); refused when the scenario is another lab's.
///
/// # Errors
/// [`Failure::Input`] naming the file, preset or field, or the lab the scenario is for.
pub fn lab_params<P: TryFrom<Scenario, Error = Scenario>>(
    lab: &str,
    file: Option<&Path>,
    preset: Option<&str>,
) -> Result<P, Failure> {
    let scenario = match (file, preset) {
        (Some(path), _) => load_scenario(Some(path), None)?,
        (None, Some(id)) => load_scenario(None, Some(id))?,
        (None, None) => Scenario::for_lab(lab).map_err(|e| Failure::Other(e.to_string()))?,
    };
    P::try_from(scenario).map_err(|other| {
        let article = if lab.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        Failure::Input(format!(
            "the scenario is for the `{}` lab; `bubblelab {lab}` needs {article} {lab} scenario",
            other.lab()
        ))
    })
}

/// The scenario `bubblelab run` names: a lab's first preset, a file or a preset, with every
/// `--set` applied; and where it came from, for errors.
fn run_scenario(args: &RunArgs) -> Result<(Scenario, String), Failure> {
    let file = args.scenario.as_ref().or(args.scenario_flag.as_ref());
    let lab = file
        .and_then(|p| p.to_str())
        .filter(|name| bubblelab_core::scenario::LABS.contains(name));
    let (scenario, source) = match (lab, &args.preset, file) {
        (Some(lab), _, _) => (
            Scenario::for_lab(lab).map_err(|e| Failure::Other(e.to_string()))?,
            String::new(),
        ),
        (None, Some(id), _) => (load_scenario(None, Some(id))?, format!("preset {id}")),
        (None, None, path) => (
            load_scenario(path.map(PathBuf::as_path), None)?,
            path.map(|p| files::label(p)).unwrap_or_default(),
        ),
    };
    let scenario = with_sets(scenario, &args.set, &source)?;
    Ok((scenario, source))
}

/// `scenario` with every `--set PATH=VALUE` applied in order, validated once at the end;
/// failures name `source`.
///
/// # Errors
/// [`Failure::Input`] naming the assignment or the field.
pub(crate) fn with_sets(
    scenario: Scenario,
    set: &[String],
    source: &str,
) -> Result<Scenario, Failure> {
    if set.is_empty() {
        return Ok(scenario);
    }
    let sets = set
        .iter()
        .map(|s| bubblelab_core::edit::split_assignment(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| scenario_failure(source, &e))?;
    scenario
        .with_fields(&sets)
        .map_err(|e| scenario_failure(source, &e))
}

/// Each `SLOT=FILE` of `given` (the values of the flag `flag`, e.g. `--input`) as (slot, file
/// name, text), the slots checked before any file is read.
pub(crate) fn read_inputs(
    given: &[String],
    flag: &str,
    scenario: &Scenario,
) -> Result<Vec<(String, String, String)>, Failure> {
    let slots = scenario.input_slots();
    given
        .iter()
        .map(|given| {
            let Some((slot, path)) = given
                .split_once('=')
                .filter(|(s, p)| !s.is_empty() && !p.is_empty())
            else {
                return Err(Failure::Input(format!(
                    "{flag}: expected SLOT=FILE (e.g. trace=philly.csv), got `{given}`"
                )));
            };
            if !slots.iter().any(|s| s.name == slot) {
                let names: Vec<&str> = slots.iter().map(|s| s.name).collect();
                return Err(Failure::Input(format!(
                    "{flag}: the {} lab has no input `{slot}`; it reads {}",
                    scenario.lab(),
                    if names.is_empty() {
                        "no files".into()
                    } else {
                        names.join(", ")
                    }
                )));
            }
            Ok((slot, path))
        })
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .map(|(slot, path)| {
            let path = Path::new(path);
            let text = files::read_text(path, MAX_INPUT_FILE_BYTES)?;
            Ok((slot.to_string(), files::label(path), text))
        })
        .collect()
}

/// Largest input file read, bytes (a year of a real cluster's jobs fits).
pub(crate) const MAX_INPUT_FILE_BYTES: usize = 256 << 20;

/// The lab's input slots as `--inputs` lists them.
fn slots_text(scenario: &Scenario) -> String {
    let slots = scenario.input_slots();
    if slots.is_empty() {
        return format!("the {} lab reads no input files\n", scenario.lab());
    }
    let width = slots.iter().map(|s| s.name.len()).max().unwrap_or(0);
    slots
        .iter()
        .map(|s| format!("{:width$}  {}\n", s.name, s.help))
        .collect()
}

/// The lab's field table as aligned text: path, unit, range, default (the lab's defaults),
/// then label and help.
fn fields_text(scenario: &Scenario) -> String {
    let lab = scenario.lab();
    let fields = scenario.fields();
    let defaults = Scenario::defaults(lab)
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s.to_json()).ok())
        .map(|v| v["params"].clone())
        .unwrap_or_default();
    let rows: Vec<[String; 5]> = fields
        .iter()
        .map(|f| {
            [
                f.path.to_string(),
                f.unit.to_string(),
                f.range.text(),
                bubblelab_core::fields::value_at(&defaults, f.path)
                    .map(bubblelab_core::fields::compact)
                    .unwrap_or_default(),
                format!("{}: {}", f.label, f.help),
            ]
        })
        .collect();
    let header = ["field", "unit", "range", "default", "meaning"].map(String::from);
    let mut width = [0usize; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    std::iter::once(&header)
        .chain(&rows)
        .map(|r| {
            format!(
                "{:w0$}  {:w1$}  {:w2$}  {:w3$}  {}\n",
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                w0 = width[0],
                w1 = width[1],
                w2 = width[2],
                w3 = width[3]
            )
        })
        .collect()
}

/// `bubblelab run`.
///
/// # Errors
/// Any [`Failure`] of loading, running or printing.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
    let (scenario, source) = run_scenario(args)?;
    if args.inputs {
        return files::write_stdout(&slots_text(&scenario));
    }
    if args.fields {
        return files::write_stdout(&fields_text(&scenario));
    }
    let texts = read_inputs(&args.input, "--input", &scenario)?;
    let inputs: Vec<InputFile<'_>> = texts
        .iter()
        .map(|(slot, source, text)| InputFile { slot, source, text })
        .collect();
    if !args.sweep.is_empty() {
        let axes = args
            .sweep
            .iter()
            .map(|a| sweep::Axis::parse(a))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| scenario_failure("", &e))?;
        let bar = crate::progress::bar("sweep points");
        let mut on_progress =
            |done: usize, total: usize| crate::progress::update(&bar, done, total);
        let report = sweep::run(&scenario, &axes, &inputs, &mut on_progress);
        bar.finish_and_clear();
        let report = report.map_err(|e| scenario_failure(&source, &e))?;
        return print_report(&report, &args.output);
    }
    let bar = crate::progress::bar("steps");
    let mut on_progress = |done: usize, total: usize| crate::progress::update(&bar, done, total);
    let report = match &scenario {
        // The fairness lab's policies run on one thread per core (the Report is the same).
        Scenario::Fairness(params) => {
            let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
            scenario
                .validate()
                .and_then(|()| {
                    params.read_inputs(
                        &inputs,
                        None,
                        &bubblelab_core::labs::fairness::traces::ReadOptions::default(),
                    )
                })
                .and_then(|(params, trace)| {
                    params.simulate_with(&trace, &mut on_progress, &mut |n, run_one, progress| {
                        crate::fairness::run_on_threads(threads, n, run_one, progress)
                    })
                })
                .map(|s| s.report)
        }
        _ => bubblelab_core::run_with_inputs(&scenario, &inputs, &mut on_progress),
    };
    bar.finish_and_clear();
    let report = report.map_err(|e| scenario_failure(&source, &e))?;
    print_report(&report, &args.output)
}

/// `bubblelab pipeline-log`.
///
/// # Errors
/// [`Failure::Input`] when the folder is unreadable, holds no logs, or a log is malformed
/// (the message names the file and line).
pub fn pipeline_log(args: &PipelineLogArgs) -> Result<(), Failure> {
    let files = read_log_folder(&args.dir)?;
    let run = load_run(&files).map_err(|e| Failure::Input(e.to_string()))?;
    let report = run.report(&args.dir.display().to_string());
    print_report(&report, &args.output)
}

/// Every `*.log` file and `log.txt` in `dir`, sorted by file name, as (path, text).
pub(crate) fn read_log_folder(dir: &Path) -> Result<Vec<(String, String)>, Failure> {
    let name = dir.display().to_string();
    let entries =
        std::fs::read_dir(dir).map_err(|e| files::io_input(&name, "cannot read folder", &e))?;
    let mut paths: Vec<(String, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| files::io_input(&name, "cannot read folder", &e))?;
        let file_name = entry.file_name().to_string_lossy().into_owned();
        // PipeMorph writes lowercase `.log` files; a `.LOG` is not one of its logs.
        #[allow(clippy::case_sensitive_file_extension_comparisons)]
        let is_log = file_name.ends_with(".log") || file_name == "log.txt";
        if !is_log {
            continue;
        }
        let path = entry.path();
        // Follows symbolic links; folders named `*.log` are skipped.
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            paths.push((file_name, path));
        }
    }
    if paths.is_empty() {
        return Err(Failure::Input(format!(
            "{name}: no `*.log` stage logs or `log.txt` in this folder"
        )));
    }
    paths.sort();
    paths
        .into_iter()
        .map(|(_, path)| {
            let text = files::read_text(&path, MAX_LOG_BYTES)?;
            Ok((path.display().to_string(), text))
        })
        .collect()
}

/// Writes the trace file (if asked) and then prints the Report in the chosen format.
pub(crate) fn print_report(report: &Report, output: &ReportOutput) -> Result<(), Failure> {
    if let Some(path) = &output.trace {
        let trace = bubblelab_core::trace::to_chrome_trace(report);
        files::write_file(path, &trace)?;
    }
    let text = match output.format {
        Format::Text => report.to_text(),
        Format::Json => {
            let mut json = report.to_json_pretty();
            json.push('\n');
            json
        }
        Format::Csv => report.to_csv(),
    };
    files::write_stdout(&text)
}
