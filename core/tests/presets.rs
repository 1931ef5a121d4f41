//! The preset registry and its documentation: every file in `static/presets/` is registered in
//! `presets::all()` (each lab's `presets.rs`) and parses as a scenario of its lab; the pages that open on a lab's default
//! parameters open on that lab's first preset; docs/CLAIMS.md links every preset from a table
//! row and names no preset that does not exist; every lab of the registry has a preset, a
//! section in docs/MODEL.md and a row in ARCHITECTURE.md.

#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use bubblelab_core::labs::cost::CostParams;
use bubblelab_core::labs::pipeline::PipelineParams;
use bubblelab_core::labs::LAB_PRESETS;
use bubblelab_core::presets::{self, Preset};

/// Every preset, lab by lab.
fn all() -> Vec<&'static Preset> {
    presets::all().collect()
}
use bubblelab_core::scenario::LABS;
use bubblelab_core::Scenario;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// What a link to a preset file looks like in docs/CLAIMS.md, after its text:
/// [`id`](../static/presets/id.json).
const LINK_TARGET: &str = "](../static/presets/";

#[test]
fn every_preset_file_is_registered_and_parses_as_its_lab() {
    let files: BTreeSet<String> = fs::read_dir(repo().join("static/presets"))
        .expect("static/presets exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let registered: BTreeSet<String> = all().iter().map(|p| p.id.to_string()).collect();
    assert_eq!(
        registered.len(),
        all().len(),
        "a preset id is registered twice"
    );
    assert_eq!(
        files, registered,
        "static/presets/*.json and the labs' presets.rs must name the same presets"
    );
    for p in all() {
        let scenario = p
            .scenario()
            .unwrap_or_else(|e| panic!("preset {}: {e}", p.id));
        assert_eq!(scenario.lab(), p.lab, "preset {}", p.id);
        assert!(
            p.id.starts_with(&format!("{}-", p.lab)),
            "preset {} should start with its lab's name",
            p.id
        );
    }
}

/// A lab added to the registry (`core/src/labs/mod.rs`) without its preset or its documentation
/// fails here.
#[test]
fn every_lab_has_a_preset_a_model_section_and_an_architecture_row() {
    let model = fs::read_to_string(repo().join("docs/MODEL.md")).expect("docs/MODEL.md exists");
    let architecture =
        fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md exists");
    for lab in LABS {
        assert!(
            presets::default_for(lab).is_some(),
            "lab {lab} has no preset in core/src/labs/{lab}/presets.rs"
        );
        let mut name = lab.to_string();
        name[..1].make_ascii_uppercase();
        assert!(
            model
                .lines()
                .any(|l| l.starts_with(&format!("## {name} lab"))),
            "docs/MODEL.md has no section `## {name} lab`"
        );
        assert!(
            architecture.contains(&format!("| `labs::{lab}` |")),
            "ARCHITECTURE.md has no row for `labs::{lab}`"
        );
    }
}

/// README's "Adding a lab" lists the existing files a new lab edits: at most four, and every
/// lab of the registry is in each of them (its registry row, its CLAIMS.md section with its
/// presets, its MODEL.md section, its ARCHITECTURE.md row).
#[test]
fn readme_lists_the_four_files_a_new_lab_edits_and_every_lab_is_in_each() {
    let readme = fs::read_to_string(repo().join("README.md")).expect("README.md exists");
    let section = readme
        .split("## Adding a lab")
        .nth(1)
        .expect("README.md has `## Adding a lab`");
    let files: Vec<&str> = section
        .lines()
        .filter_map(|l| {
            let (number, rest) = l.split_once(". `")?;
            number.parse::<u32>().ok()?;
            rest.split('`').next()
        })
        .collect();
    assert_eq!(
        files,
        [
            "core/src/labs/mod.rs",
            "docs/CLAIMS.md",
            "docs/MODEL.md",
            "ARCHITECTURE.md"
        ],
        "README's list of the existing files a lab edits"
    );
    for file in &files {
        let text = fs::read_to_string(repo().join(file)).expect("listed file exists");
        for lab in LABS {
            let mentioned = match *file {
                "core/src/labs/mod.rs" => text.contains(&format!("= \"{lab}\";")),
                "docs/CLAIMS.md" => {
                    presets::for_lab(lab).all(|p| text.contains(&format!("{}.json", p.id)))
                }
                "docs/MODEL.md" => text.to_lowercase().contains(&format!("## {lab} lab")),
                _ => text.contains(&format!("| `labs::{lab}` |")),
            };
            assert!(mentioned, "{file} does not name the {lab} lab");
        }
    }
}

/// The pipeline and cost pages open on their labs' default parameters; those are their first
/// presets, so every lab's page opens on its first preset (the others ask
/// `presets::default_for`).
#[test]
fn the_pipeline_and_cost_pages_open_on_their_first_preset() {
    let first = |lab: &str| presets::default_for(lab).unwrap().scenario().unwrap();
    assert_eq!(
        first("pipeline"),
        Scenario::Pipeline(PipelineParams::default())
    );
    assert_eq!(first("cost"), Scenario::Cost(CostParams::default()));
}

/// Spans between backticks in a line, with the byte offset of each span's opening backtick.
fn code_spans(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut rest = line;
    let mut base = 0;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        out.push((base + open, &rest[open + 1..open + 1 + len]));
        let next = open + len + 2;
        base += next;
        rest = &rest[next..];
    }
    out
}

/// True for text shaped like a preset id of one of `labs`: `<lab>-` then lower-case letters,
/// digits, dots and dashes.
fn looks_like_a_preset(text: &str, labs: &BTreeSet<&str>) -> bool {
    text.split_once('-').is_some_and(|(lab, rest)| {
        labs.contains(lab)
            && !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
    })
}

#[test]
fn claims_md_links_every_preset_from_a_row_and_names_only_presets() {
    let path = repo().join("docs/CLAIMS.md");
    let text = fs::read_to_string(&path).expect("docs/CLAIMS.md exists");
    let labs: BTreeSet<&str> = all().iter().map(|p| p.lab).collect();
    let mut linked_from_rows = BTreeSet::new();
    let mut errors = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        // Every link to a preset file: its text is the id in backticks, the file is registered.
        let mut from = 0;
        while let Some(at) = line[from..].find(LINK_TARGET) {
            let at = from + at;
            let target = &line[at + LINK_TARGET.len()..];
            let stem = target.split(')').next().unwrap_or("");
            let id = stem.strip_suffix(".json").unwrap_or(stem);
            let label_ok = line[..at].ends_with(&format!("[`{id}`"));
            if presets::find(id).is_none() {
                errors.push(format!("line {n}: links `{stem}`, which is no preset"));
            } else if !label_ok {
                errors.push(format!(
                    "line {n}: a link to {id}.json should read [`{id}`](../static/presets/{id}.json)"
                ));
            } else if line.starts_with('|') {
                linked_from_rows.insert(id.to_string());
            }
            from = at + LINK_TARGET.len();
        }
        // Every preset-shaped name in backticks is a preset and is written as a link.
        for (at, span) in code_spans(line) {
            if !looks_like_a_preset(span, &labs) {
                continue;
            }
            let linked = line[..at].ends_with('[')
                && line[at + span.len() + 2..].starts_with(&format!("{LINK_TARGET}{span}.json)"));
            if presets::find(span).is_none() {
                errors.push(format!("line {n}: names `{span}`, which is no preset"));
            } else if !linked {
                errors.push(format!(
                    "line {n}: `{span}` should be a link, [`{span}`](../static/presets/{span}.json)"
                ));
            }
        }
    }
    for p in all() {
        if !linked_from_rows.contains(p.id) {
            errors.push(format!("preset {} is linked from no table row", p.id));
        }
    }
    assert!(
        errors.is_empty(),
        "{}:\n{}",
        path.display(),
        errors.join("\n")
    );
}

#[test]
fn code_spans_and_preset_shapes() {
    assert_eq!(
        code_spans("a `x` b `y-z` `open"),
        vec![(2, "x"), (8, "y-z")]
    );
    let labs: BTreeSet<&str> = ["pipeline", "fairness"].into_iter().collect();
    assert!(looks_like_a_preset("pipeline-zb-h1", &labs));
    assert!(looks_like_a_preset("fairness-slow-gpu-1.5x", &labs));
    assert!(!looks_like_a_preset("pipeline-log ../x", &labs));
    assert!(!looks_like_a_preset("pipeline-", &labs));
    assert!(!looks_like_a_preset("agentic-qwen3", &labs));
    assert!(!looks_like_a_preset("tests/claims/pipeline-a.json", &labs));
}

#[test]
fn each_labs_presets_file_lists_only_its_own_presets() {
    for (lab, presets) in LABS.iter().zip(LAB_PRESETS) {
        for p in presets {
            assert_eq!(
                p.lab, *lab,
                "preset {} is listed in the {lab} lab's presets.rs",
                p.id
            );
        }
    }
}
