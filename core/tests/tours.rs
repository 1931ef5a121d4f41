//! Tours: every shipped tour reads, every lab has one, every step's run gives the answer its
//! explanation states, and bad tour files get errors naming the field.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::scenario::LABS;
use bubblelab_core::share;
use bubblelab_core::tour::{self, Answer, Guess, Measured, Tour};

#[test]
fn every_lab_has_a_tour_of_three_predictions_or_more() {
    for lab in LABS {
        let tours: Vec<Tour> = tour::all()
            .map(|t| t.tour().unwrap_or_else(|e| panic!("{}: {e}", t.id)))
            .filter(|t| t.lab == lab)
            .collect();
        assert!(!tours.is_empty(), "no tour of the {lab} lab");
        for t in tours {
            assert!(t.steps.len() >= 3, "{}: {} steps", t.title, t.steps.len());
        }
    }
    for t in tour::all() {
        assert!(
            t.id.starts_with(&t.tour().unwrap().lab),
            "{}: id names its lab first",
            t.id
        );
    }
}

#[test]
fn every_explanation_states_its_answer() {
    for t in tour::all() {
        for (i, step) in t.tour().unwrap().steps.iter().enumerate() {
            let explanation = step.explanation();
            assert!(!explanation.contains("{expect}"), "{} step {i}", t.id);
            let stated = match &step.answer {
                Answer::Number { expect, .. } => format!("{expect}"),
                Answer::Choice { expect, .. } => expect.clone(),
            };
            assert!(
                explanation.contains(&stated),
                "{} step {i}: the explanation does not state {stated}",
                t.id
            );
        }
    }
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "every step of every tour; seconds in an optimised build: cargo test --profile bench -p bubblelab-core --test tours"
)]
fn every_step_gives_the_answer_its_explanation_states() {
    let mut wrong = Vec::new();
    for t in tour::all() {
        let tour = t.tour().unwrap();
        for (i, step) in tour.steps.iter().enumerate() {
            let report = bubblelab_core::run(&step.scenario)
                .unwrap_or_else(|e| panic!("{} step {i}: {e}", t.id));
            if let Err(e) = tour.check_step(i, &report) {
                wrong.push(format!("{}: {e}", t.id));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

const SMALL: &str = r#"{
  "version": 1,
  "title": "GPipe's bubble",
  "lab": "pipeline",
  "summary": "One question.",
  "steps": [
    {
      "title": "m = 4",
      "preset": "pipeline-gpipe-vs-1f1b",
      "set": ["micro_batches=4"],
      "question": "GPipe's bubble ratio?",
      "answer": {"metric": "gpipe.bubble_ratio", "expect": 0.4286, "tolerance": 0.01},
      "explanation": "3/7 = {expect}."
    },
    {
      "title": "Memory",
      "set": ["micro_batches=16"],
      "question": "Less memory?",
      "answer": {"choose": "smallest", "options": [
        {"label": "GPipe", "metric": "gpipe.peak_activation_bytes"},
        {"label": "1F1B", "metric": "1f1b.peak_activation_bytes"}], "expect": "1F1B"},
      "explanation": "{expect} holds at most p."
    }
  ]
}"#;

#[test]
fn a_step_is_judged_against_the_run() {
    let tour = Tour::from_json(SMALL).unwrap();
    assert_eq!(tour.steps[0].explanation(), "3/7 = 0.4286.");
    // Step 1 edits step 0's scenario.
    assert_eq!(
        tour.steps[1].scenario,
        tour.steps[0]
            .scenario
            .with_fields(&[("micro_batches", "16")])
            .unwrap()
    );
    let report = bubblelab_core::run(&tour.steps[0].scenario).unwrap();
    let measured = tour.check_step(0, &report).unwrap();
    let Measured::Number { value, ref unit } = measured else {
        panic!("{measured:?}")
    };
    assert!((value - 3.0 / 7.0).abs() < 1e-12);
    assert_eq!(unit, "ratio");
    assert!(tour.steps[0].judge(&Guess::Number(0.43), &measured));
    assert!(!tour.steps[0].judge(&Guess::Number(0.5), &measured));
    // At m = 4 both hold four micro-batches: a tie, which a shipped step may not have, and
    // where either answer is right.
    let e = tour.check_step(1, &report).unwrap_err().to_string();
    assert!(
        e.starts_with("steps[1].answer.options: `GPipe` and `1F1B` tie at"),
        "{e}"
    );
    let measured = tour.steps[1].measure(1, &report).unwrap();
    assert!(tour.steps[1].judge(&Guess::Choice("1F1B".into()), &measured));
    assert!(tour.steps[1].judge(&Guess::Choice("GPipe".into()), &measured));
    let at_16 = bubblelab_core::run(&tour.steps[1].scenario).unwrap();
    let measured = tour.check_step(1, &at_16).unwrap();
    assert!(tour.steps[1].judge(&Guess::Choice("1F1B".into()), &measured));
    assert!(!tour.steps[1].judge(&Guess::Choice("GPipe".into()), &measured));
    // A stated answer the run does not give is caught, naming the field.
    let lie = SMALL.replace("\"expect\": 0.4286", "\"expect\": 0.5");
    let tour = Tour::from_json(&lie).unwrap();
    let e = tour.check_step(0, &report).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "steps[0].answer.expect: the explanation states 0.5000, the run gives 0.4286 (a stated answer may be off by 0.0050 at most)"
        ),
        "{e}"
    );
    // Within the learner's tolerance (0.01) but not the run's value as written: caught too.
    let rounded = SMALL.replace("\"expect\": 0.4286", "\"expect\": 0.435");
    let e = Tour::from_json(&rounded)
        .unwrap()
        .check_step(0, &report)
        .unwrap_err()
        .to_string();
    assert!(e.contains("states 0.4350, the run gives 0.4286"), "{e}");
    let lie = SMALL.replace("\"expect\": \"1F1B\"", "\"expect\": \"GPipe\"");
    let e = Tour::from_json(&lie)
        .unwrap()
        .check_step(1, &at_16)
        .unwrap_err()
        .to_string();
    assert!(e.contains("names `GPipe`, the run gives `1F1B`"), "{e}");
    let unknown = SMALL.replace("gpipe.bubble_ratio", "gpipe.bubble");
    let e = Tour::from_json(&unknown)
        .unwrap()
        .check_step(0, &report)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "steps[0].answer.metric: the run's Report has no metric `gpipe.bubble`"
    );
}

#[test]
fn bad_tour_files_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "\"version\": 1",
            "\"version\": 2",
            "version: this build reads tour version 1, got 2",
        ),
        (
            "\"lab\": \"pipeline\"",
            "\"lab\": \"pipes\"",
            "lab: unknown lab `pipes`",
        ),
        (
            "\"micro_batches=4\"",
            "\"micro_batches=0\"",
            "steps[0].set[0]: pipeline.micro_batches",
        ),
        (
            "\"micro_batches=4\"",
            "\"micro_batches\"",
            "steps[0].set[0]: expected PATH=VALUE",
        ),
        (
            "\"pipeline-gpipe-vs-1f1b\"",
            "\"cost-allreduce-h100\"",
            "steps[0].preset: `cost-allreduce-h100` is a preset of the cost lab",
        ),
        (
            "\"pipeline-gpipe-vs-1f1b\"",
            "\"nope\"",
            "steps[0].preset: no preset `nope`",
        ),
        (
            "\"tolerance\": 0.01",
            "\"tolerance\": -1",
            "steps[0].answer.tolerance: must be a finite number ≥ 0",
        ),
        (
            "\"tolerance\": 0.01",
            "\"tol\": 0.01",
            "steps[0].answer.tol: unknown field `tol`",
        ),
        (
            "\"expect\": 0.4286",
            "\"expect\": \"x\"",
            "steps[0].answer.expect: a metric answer states a number",
        ),
        (
            "\"smallest\"",
            "\"least\"",
            "steps[1].answer.choose: expected `largest` or `smallest`, got `least`",
        ),
        (
            "\"expect\": \"1F1B\"",
            "\"expect\": \"2F2B\"",
            "steps[1].answer.expect: `2F2B` is not one of the options' labels",
        ),
        (
            "\"question\": \"Less memory?\"",
            "\"question\": \" \"",
            "steps[1].question: must not be empty",
        ),
        (
            "\"title\": \"m = 4\",",
            "",
            "steps[0]: missing field `title`",
        ),
        (
            "\"preset\": \"pipeline-gpipe-vs-1f1b\",",
            "",
            "steps[0].preset: the first step needs a `preset` or a `scenario`",
        ),
        (
            "\"preset\": \"pipeline-gpipe-vs-1f1b\",",
            "\"scenario\": {\"version\": 1, \"lab\": \"pipeline\", \"params\": {\"stages\": 0}},",
            "steps[0].scenario.pipeline.stages:",
        ),
        (
            "\"preset\": \"pipeline-gpipe-vs-1f1b\",",
            "\"scenario\": {\"version\": 1, \"lab\": \"cost\"},",
            "steps[0].scenario.lab: the tour is of the pipeline lab, this scenario of cost",
        ),
    ];
    for (from, to, want) in cases {
        assert!(SMALL.contains(from), "{from}");
        let text = SMALL.replacen(from, to, 1);
        let e = Tour::from_json(&text).unwrap_err().to_string();
        assert!(e.starts_with(want), "{from} → {to}: got {e}, want {want}…");
    }
    let e = Tour::from_json("{\"version\": 1,").unwrap_err().to_string();
    assert!(e.starts_with("not valid JSON at line 1"), "{e}");
}

#[test]
fn a_tour_link_carries_the_teachers_file() {
    let fragment = share::tour_fragment(SMALL);
    let route = share::parse_fragment(&fragment);
    assert_eq!(route.lab, "tours");
    let (text, tour) = share::decode_tour(&route.tour.unwrap()).unwrap();
    assert_eq!(text, SMALL);
    assert_eq!(tour.steps.len(), 2);
    let broken = share::encode_tour(&SMALL.replace("\"version\": 1", "\"version\": 7"));
    let e = share::decode_tour(&broken).unwrap_err().to_string();
    assert_eq!(
        e,
        "the link's tour is invalid: version: this build reads tour version 1, got 7"
    );
    assert!(tour::find("pipeline-bubbles").is_some());
}
