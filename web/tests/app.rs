//! The playground in headless Chromium (wasm-bindgen-test): the pages render, a broken link
//! explains itself, and the Report computed in the browser equals the native golden file byte
//! for byte.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use std::time::Duration;

use bubblelab_core::Scenario;
use bubblelab_web::App;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// Mounts the app at `hash` in a fresh element and waits (polling, bounded) until `ready`
/// holds for its HTML. Returns the HTML.
async fn render_at(hash: &str, ready: impl Fn(&str) -> bool) -> String {
    let window = gloo::utils::window();
    let _ = window.history().unwrap().replace_state_with_url(
        &wasm_bindgen::JsValue::NULL,
        "",
        Some(hash),
    );
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let handle = yew::Renderer::<App>::with_root(root.clone()).render();
    let mut html = String::new();
    for _ in 0..200 {
        yew::platform::time::sleep(Duration::from_millis(10)).await;
        html = root.inner_html();
        if ready(&html) {
            break;
        }
    }
    handle.destroy();
    root.remove();
    html
}

#[wasm_bindgen_test]
async fn every_lab_of_the_core_has_a_route_a_link_and_a_card() {
    use bubblelab_core::scenario::LABS;
    use bubblelab_web::app::Route;
    for lab in LABS {
        assert!(
            matches!(Route::from_fragment(&format!("#/{lab}?s=x")), Route::Lab { lab: l, payload: Some(p), pinned: None } if l == lab && p == "x"),
            "{lab} has no route"
        );
    }
    let html = render_at("#/", |h| h.contains("lab-card")).await;
    for lab in LABS {
        assert!(
            html.contains(&format!("href=\"#/{lab}\"")),
            "no link to {lab}"
        );
        assert!(
            html.contains(&format!("data-lab=\"{lab}\"")),
            "no card for {lab}"
        );
    }
}

/// Checks a generic lab page's HTML: the card's title, a control per row of the lab's field
/// table, and the first metric of its first preset's Report.
fn assert_generic_page(lab: &str, html: &str) {
    let card = bubblelab_core::labs::LAB_CARDS[bubblelab_core::scenario::LABS
        .iter()
        .position(|l| *l == lab)
        .unwrap()];
    assert!(html.contains(&format!("id=\"lab-{lab}\"")), "{html}");
    assert!(html.contains(card.title), "the card's title: {html}");
    for field in Scenario::fields_of(lab) {
        let id = bubblelab_web::components::fields::field_id(lab, field.path);
        let prefix = field.path.rsplit('.').next().unwrap_or(field.path);
        assert!(
            html.contains(&format!("id=\"{id}\"")) || html.contains(&format!("id=\"{prefix}-")),
            "{lab}: no control for {}: {html}",
            field.path
        );
    }
}

/// Fields set so that a lab's first preset runs in seconds in a debug build's page (the page
/// runs labs inline in these tests, on the main thread): the tuning lab trains MLPs, the
/// elastic lab searches every minute of a week.
const QUICK: &[(&str, &[(&str, &str)])] = &[
    (
        "tuning",
        &[("experiment.steps", "3"), ("experiment.seeds", "1")],
    ),
    (
        "elastic",
        &[("pollux.population", "4"), ("pollux.generations", "2")],
    ),
];

/// Lab `lab`'s first preset, quickened where [`QUICK`] says.
fn quick_scenario(lab: &str) -> Scenario {
    let preset = Scenario::for_lab(lab).unwrap();
    let sets = QUICK
        .iter()
        .find(|(l, _)| *l == lab)
        .map_or(&[][..], |(_, s)| s);
    preset.with_fields(sets).unwrap()
}

/// The first metric of `scenario`'s Report, as the Report view marks it.
fn first_metric_of(scenario: &Scenario) -> String {
    let report = bubblelab_core::run(scenario).unwrap();
    let m = &report.metrics[0];
    format!("data-metric=\"{}\" data-value=\"{}\"", m.key, m.value)
}

/// The first metric of lab `lab`'s first preset, as the Report view marks it.
fn first_metric(lab: &str) -> String {
    first_metric_of(&Scenario::for_lab(lab).unwrap())
}

/// Every lab opens the generic page from its card, its field table (each row has its
/// control, the table's own or the lab's parts') and the scenario of its link.
#[wasm_bindgen_test]
async fn every_lab_gets_the_generic_page() {
    for lab in bubblelab_core::scenario::LABS {
        let scenario = quick_scenario(lab);
        let metric = first_metric_of(&scenario);
        let hash = format!("#/{lab}?s={}", bubblelab_core::share::encode(&scenario));
        let html = render_at(&hash, |h| h.contains(&metric)).await;
        assert_generic_page(lab, &html);
        assert!(
            html.contains(&metric),
            "{lab}: the page's Report is its link's: {html}"
        );
    }
}

/// The generic page serves a lab without its parts just as well (the migration lab).
#[wasm_bindgen_test]
async fn the_generic_page_serves_any_lab() {
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let props = bubblelab_web::app::GenericLabProps {
        lab: "migration",
        payload: None,
        parts: None,
    };
    let handle =
        yew::Renderer::<bubblelab_web::app::GenericLab>::with_root_and_props(root.clone(), props)
            .render();
    let metric = first_metric("migration");
    let mut html = String::new();
    for _ in 0..500 {
        yew::platform::time::sleep(Duration::from_millis(10)).await;
        html = root.inner_html();
        if html.contains(&metric) {
            break;
        }
    }
    handle.destroy();
    root.remove();
    assert_generic_page("migration", &html);
    assert!(html.contains(&metric), "{html}");
}

/// A lab page with a form of its own offers every other number of its field table under
/// "More parameters" (the migration page features 24 of them).
#[wasm_bindgen_test]
async fn a_lab_page_offers_every_number_of_its_field_table() {
    let html = render_at("#/migration", |h| h.contains("id=\"more-fields\"")).await;
    for id in [
        "field-optimizer_fraction",
        "field-drain_s",
        "field-dedup_identical_fraction",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no {id}: {html}");
    }
    assert_eq!(
        html.matches("id=\"field-gpus\"").count(),
        1,
        "a field the page features is not repeated"
    );
    // Two rows ending in `replay_s` get their whole paths as ids; no id repeats.
    let ids: Vec<&str> = html
        .split("id=\"field-")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(
        ids.contains(&"systems-pos-replay_s") && ids.contains(&"systems-flowgpu-replay_s"),
        "{ids:?}"
    );
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "repeated ids among {ids:?}");
}

#[wasm_bindgen_test]
async fn home_shows_the_pipeline_card() {
    let html = render_at("#/", |h| h.contains("lab-card")).await;
    assert!(html.contains("id=\"home\""), "{html}");
    assert!(html.contains("data-lab=\"pipeline\""), "{html}");
}

#[wasm_bindgen_test]
async fn pipeline_lab_shows_the_known_bubble_ratio() {
    let html = render_at("#/pipeline", |h| {
        h.contains("data-metric=\"1f1b.bubble_ratio\"")
    })
    .await;
    assert!(html.contains("id=\"lab-pipeline\""), "{html}");
    // Default scenario p=4, m=8: (p−1)/(m+p−1) = 3/11.
    let expected = format!(
        "data-metric=\"1f1b.bubble_ratio\" data-value=\"{}\"",
        3.0f64 / 11.0
    );
    assert!(html.contains(&expected), "missing {expected}");
    assert!(html.contains("<canvas"), "timeline canvas missing");
    // Text alternatives: the canvas is a labelled, focusable image; each timeline and chart
    // has a table. 1F1B's stage 0 at F = B = W = 1 ms, m = 8: 8 ms forward, 16 ms backward,
    // 9 ms idle.
    assert!(
        html.contains("role=\"img\" aria-label=\"Timeline 1F1B: 4 lanes over 33.0 ms."),
        "{html}"
    );
    assert!(html.contains("tabindex=\"0\""), "timeline not focusable");
    assert!(
        html.contains(
            "<th scope=\"row\">stage 0</th><td>8.0 ms</td><td>16.0 ms</td><td>9.0 ms</td>"
        ),
        "{html}"
    );
    assert!(
        html.contains("Peak activation memory per stage (GiB): each curve's points"),
        "{html}"
    );
}

#[wasm_bindgen_test]
async fn a_tampered_link_explains_itself_and_shows_the_default() {
    // The default scenario's Report comes from the worker, after the banner.
    let html = render_at("#/pipeline?s=AAAAAAAA", |h| {
        h.contains("link-error") && h.contains("data-metric=\"1f1b.bubble_ratio\"")
    })
    .await;
    assert!(html.contains("id=\"link-error\""), "{html}");
    assert!(html.contains("does not decompress"), "{html}");
    assert!(
        html.contains("data-metric=\"1f1b.bubble_ratio\""),
        "default scenario missing"
    );
}

#[wasm_bindgen_test]
fn browser_report_equals_native_golden_bytes() {
    let scenario = bubblelab_core::Scenario::from_json(include_str!(
        "../../tests/scenarios/pipeline-all.json"
    ))
    .unwrap();
    let report = bubblelab_core::run(&scenario).unwrap();
    let golden = include_str!("../../tests/golden/pipeline-all.report.json");
    assert!(
        format!("{}\n", report.to_json_pretty()) == golden,
        "Chromium report differs from the native golden file"
    );
}

#[wasm_bindgen_test]
async fn cost_explorer_and_trace_view_render() {
    let html = render_at("#/cost", |h| h.contains("data-metric=\"collective_us\"")).await;
    assert!(html.contains("id=\"lab-cost\""), "{html}");
    assert!(html.contains("data-metric=\"busbw_gb_per_s\""), "{html}");
    let html = render_at("#/trace", |h| h.contains("upload-kineto")).await;
    assert!(html.contains("id=\"trace-view\""), "{html}");
}

#[wasm_bindgen_test]
fn a_form_keeps_typed_text_and_puts_each_error_under_its_field() {
    use bubblelab_core::labs::agentic::AgenticParams;
    use bubblelab_core::Scenario;
    use bubblelab_web::components::params_form::Form;

    let mut form = Form::new(
        "agentic",
        &Scenario::Agentic(AgenticParams::default()),
        None,
    );
    // A half-typed number stays on screen and is named under its own field.
    assert!(!form.edit_number("synthetic.agents", "12x".into()));
    assert_eq!(form.text("synthetic.agents"), "12x");
    assert!(form.field_error("synthetic.agents").is_some());
    assert_eq!(form.other_error(["synthetic.agents"]), None);
    assert!(form.other_error(["engine.kv_blocks"]).is_some());
    // A number is set, and the core's verdict on it lands under the field.
    assert!(form.edit_number("synthetic.agents", "0".into()));
    assert!(form.scenario().is_none());
    let error = form.error.clone().expect("0 agents is refused");
    assert_eq!(error.path(), Some("agentic.synthetic.agents"));
    assert!(form.field_error("synthetic.agents").is_some());
    // An element's error path uses brackets (`controllers[1].cap`); the form's path is dotted.
    form.error = Some(bubblelab_core::ScenarioError::field(
        "agentic.controllers[1].cap",
        "expected at least 1",
    ));
    assert!(form.field_error("controllers.1.cap").is_some());
    assert!(form.field_error("controllers").is_none());
    assert_eq!(form.other_error(["controllers.1.cap"]), None);
    form.error = Some(bubblelab_core::ScenarioError::field(
        "agentic.controllers[1]",
        "listed twice",
    ));
    assert!(form.field_error("controllers").is_some());
}

#[wasm_bindgen_test]
fn a_run_finishing_after_a_bad_edit_keeps_the_edits_error() {
    use bubblelab_core::labs::agentic::AgenticParams;
    use bubblelab_core::{Report, Scenario};
    use bubblelab_web::components::params_form::Form;
    use bubblelab_web::worker::Output;

    let mut form = Form::new(
        "agentic",
        &Scenario::Agentic(AgenticParams::default()),
        None,
    );
    let scenario = form.scenario().unwrap();
    form.ask(scenario, false);
    let pending = (*form.pending.clone().unwrap()).clone();
    // While that run is in flight the user types a value the core refuses: no new run.
    assert!(form.edit_number("synthetic.agents", "0".into()));
    assert!(form.scenario().is_none());
    assert!(form.field_error("synthetic.agents").is_some());
    // The earlier run's Report arrives and is shown; the newer edit's error stays.
    let shown = form.finish(&pending, Ok(Output::Report(Report::default())), true);
    assert!(shown.is_some());
    assert!(form.field_error("synthetic.agents").is_some());
}

/// What the page gets back from its worker: `handle`'s output, through the reply's JSON.
fn through_the_worker(
    job: bubblelab_web::worker::Job,
    scenario: Option<String>,
    files: Vec<(&str, &str, Vec<u8>)>,
) -> Result<bubblelab_web::worker::Output, bubblelab_web::worker::Failure> {
    piece_through_the_worker(job, scenario, files, None)
}

/// [`through_the_worker`] for one piece of a split request (`Request::piece`).
fn piece_through_the_worker(
    job: bubblelab_web::worker::Job,
    scenario: Option<String>,
    files: Vec<(&str, &str, Vec<u8>)>,
    piece: Option<Vec<usize>>,
) -> Result<bubblelab_web::worker::Output, bubblelab_web::worker::Failure> {
    use bubblelab_web::worker::{serve, Input, Reply, Request};
    let request = Request {
        id: 7,
        job,
        scenario,
        inputs: files
            .iter()
            .map(|(slot, name, _)| Input {
                slot: (*slot).to_string(),
                name: (*name).to_string(),
            })
            .collect(),
        piece,
    };
    let files = files
        .into_iter()
        .map(|(_, name, bytes)| (name.to_string(), bytes))
        .collect();
    let mut steps = Vec::new();
    let outcome = serve::handle(&request, files, &mut |done, total| {
        steps.push((done, total));
    });
    let reply = match outcome {
        Ok(output) => Reply::Done {
            id: 7,
            output: Box::new(output),
        },
        Err(failure) => Reply::Failed { id: 7, failure },
    };
    // As the worker posts it and the page reads it.
    let bytes = bubblelab_web::worker::encode_reply(&reply).unwrap();
    let is_piece = matches!(&reply, Reply::Done { output, .. }
        if matches!(**output, bubblelab_web::worker::Output::FairnessPiece { .. }));
    assert_eq!(
        bytes.first() == Some(&0),
        is_piece,
        "a fairness piece goes as bincode behind a 0 byte, any other reply as JSON"
    );
    match bubblelab_web::worker::decode_reply(&bytes).unwrap() {
        Reply::Done { output, .. } => Ok(*output),
        Reply::Failed { failure, .. } => Err(failure),
        other => panic!("unexpected reply {other:?}"),
    }
}

#[wasm_bindgen_test]
fn the_worker_s_report_equals_the_native_golden_bytes_after_its_reply() {
    for (scenario, golden) in [
        (
            include_str!("../../tests/scenarios/pipeline-all.json"),
            include_str!("../../tests/golden/pipeline-all.report.json"),
        ),
        (
            include_str!("../../tests/scenarios/fairness-small.json"),
            include_str!("../../tests/golden/fairness-small.report.json"),
        ),
    ] {
        let job = bubblelab_web::worker::Job::Run;
        let report = match through_the_worker(job, Some(scenario.to_string()), Vec::new()) {
            Ok(bubblelab_web::worker::Output::Report(r)) => r,
            Ok(bubblelab_web::worker::Output::Fairness { report, runs, .. }) => {
                assert!(
                    !runs.is_empty(),
                    "the fairness reply carries every policy's run"
                );
                report
            }
            other => panic!("unexpected outcome {other:?}"),
        };
        assert!(
            format!("{}\n", report.to_json_pretty()) == golden,
            "the worker's Report differs from the native golden file"
        );
    }
}

#[wasm_bindgen_test]
fn the_fairness_run_in_pieces_joins_into_the_golden_report_and_the_whole_run_s_output() {
    use bubblelab_web::worker::{join, Job, Output};
    let text = include_str!("../../tests/scenarios/fairness-small.json");
    let golden = include_str!("../../tests/golden/fairness-small.report.json");
    let scenario = Scenario::from_json(text).unwrap();
    let Scenario::Fairness(p) = &scenario else {
        panic!("not a fairness scenario")
    };
    let n = p.policies.len();
    assert!(n >= 2);
    let piece = |i: usize| {
        piece_through_the_worker(Job::Run, Some(text.to_string()), Vec::new(), Some(vec![i]))
            .unwrap()
    };
    // One piece per policy, handed out last first (pieces come back in any order).
    let pieces: Vec<Output> = (0..n).rev().map(piece).collect();
    let Output::Fairness {
        report,
        runs,
        tenants,
    } = join(Job::Run, Some(&scenario), pieces).unwrap()
    else {
        panic!("the pieces join into a fairness output")
    };
    assert!(
        format!("{}\n", report.to_json_pretty()) == golden,
        "the Report joined from pieces differs from the native golden file"
    );
    let Ok(Output::Fairness {
        runs: whole_runs,
        tenants: whole_tenants,
        ..
    }) = through_the_worker(Job::Run, Some(text.to_string()), Vec::new())
    else {
        panic!("the whole run's output")
    };
    assert_eq!(
        runs, whole_runs,
        "the pieces' runs are the whole run's, in order"
    );
    assert_eq!(tenants, whole_tenants);
    // A piece missing is refused, not shown as a partial Report.
    let some: Vec<Output> = (1..n).map(piece).collect();
    assert!(join(Job::Run, Some(&scenario), some).is_err());
}

#[wasm_bindgen_test]
fn the_trace_a_worker_keeps_never_stands_in_for_another_upload() {
    use bubblelab_web::worker::{Job, Output};
    let scenario = include_str!("../../tests/scenarios/fairness-small.json").to_string();
    let three = "job_id,num_gpu,submit_time,duration,user\n1,1,0,10,a\n2,2,5,20,b\n3,1,9,30,a\n";
    let two = "job_id,num_gpu,submit_time,duration,user\n1,1,0,10,a\n2,2,5,20,b\n";
    let jobs_of = |name: &str, text: &str| {
        let piece = piece_through_the_worker(
            Job::Run,
            Some(scenario.clone()),
            vec![("trace", name, text.as_bytes().to_vec())],
            Some(vec![0]),
        );
        match piece {
            Ok(Output::FairnessPiece { facts, .. }) => facts.jobs,
            other => panic!("expected a fairness piece, got {other:?}"),
        }
    };
    // The same name with other bytes, and the first file again: each read as it is.
    assert_eq!(jobs_of("t.csv", three), 3);
    assert_eq!(jobs_of("t.csv", three), 3);
    assert_eq!(jobs_of("t.csv", two), 2);
    assert_eq!(jobs_of("t.csv", three), 3);
}

#[wasm_bindgen_test]
fn the_worker_names_a_bad_upload_and_a_bad_field() {
    use bubblelab_web::worker::{Failure, Job};
    let fairness = include_str!("../../tests/scenarios/fairness-small.json").to_string();
    match through_the_worker(
        Job::Run,
        Some(fairness),
        vec![("trace", "bad.csv", b"no trace here".to_vec())],
    ) {
        Err(Failure::Upload(m)) => assert!(m.starts_with("bad.csv: "), "{m}"),
        other => panic!("expected an upload failure, got {other:?}"),
    }
    let defaults = Scenario::defaults("fairness").unwrap().to_json();
    match through_the_worker(
        Job::Read,
        Some(defaults.clone()),
        vec![("shares", "shares.csv", b"name,share\n1,2\n2,-1\n".to_vec())],
    ) {
        Err(Failure::Upload(m)) => assert!(m.contains("row 3, column `share`"), "{m}"),
        other => panic!("expected the share file's row, got {other:?}"),
    }
    // A good shares file comes back as the scenario's tenant weights, for the form and link.
    match through_the_worker(
        Job::Read,
        Some(defaults.clone()),
        vec![("shares", "shares.csv", b"name,share\na,2\nb,1\n".to_vec())],
    ) {
        Ok(bubblelab_web::worker::Output::Scenario(text)) => {
            let Ok(Scenario::Fairness(p)) = Scenario::from_json(&text) else {
                panic!("a fairness scenario back, got {text}")
            };
            let json = serde_json::to_string(&p.tenant_weights).unwrap();
            assert!(json.contains("\"name\":\"a\",\"share\":2.0"), "{json}");
        }
        other => panic!("expected the scenario with shares, got {other:?}"),
    }
    // A file in a slot the lab does not have is refused by name, before any file is read.
    match through_the_worker(
        Job::Run,
        Some(defaults),
        vec![("pods", "pods.csv", b"x".to_vec())],
    ) {
        Err(Failure::Upload(m)) => assert!(m.contains("unknown input `pods`"), "{m}"),
        other => panic!("expected the slot refused, got {other:?}"),
    }
    let zero_stages = include_str!("../../tests/scenarios/pipeline-all.json").replacen(
        "\"stages\": 4",
        "\"stages\": 0",
        1,
    );
    match through_the_worker(Job::Run, Some(zero_stages), Vec::new()) {
        Err(Failure::Scenario(e)) => assert_eq!(e.path(), Some("pipeline.stages"), "{e}"),
        other => panic!("expected a field error, got {other:?}"),
    }
}

#[wasm_bindgen_test]
fn the_cluster_view_holds_the_same_gpus_at_every_instant() {
    use bubblelab_core::labs::fairness::{occupancy_at, synthetic_trace};
    use bubblelab_core::scenario::KeepsRuns;
    use bubblelab_core::Scenario;
    use bubblelab_web::worker::ClusterRun;
    let Ok(Scenario::Fairness(p)) =
        Scenario::from_json(include_str!("../../tests/scenarios/fairness-small.json"))
    else {
        panic!("the fairness scenario parses");
    };
    let trace = synthetic_trace(&p).unwrap();
    let sim = p.simulate(&trace, &mut |_, _| {}).unwrap();
    let nodes = p.cluster.nodes as usize;
    for run in sim.runs.runs {
        let times: Vec<u64> = run
            .segments
            .iter()
            .flat_map(|s| [s.start_ns, s.end_ns, s.end_ns.saturating_sub(1)])
            .collect();
        let want: Vec<_> = times
            .iter()
            .map(|&t| occupancy_at(&run, nodes, t))
            .collect();
        let kept = ClusterRun::of(run);
        for (t, w) in times.iter().zip(want) {
            assert_eq!(kept.occupancy_at(nodes, *t), w, "{:?} at {t} ns", kept.kind);
        }
    }
}

#[wasm_bindgen_test]
fn share_samples_merge_to_the_mean_of_equal_buckets() {
    use bubblelab_core::labs::fairness::sim::Sample;
    use bubblelab_web::worker::merge_share_samples;
    let samples: Vec<Sample> = (0..10u32)
        .map(|i| Sample {
            t_ns: u64::from(i + 1) * 3_600_000_000_000,
            tenant_f: vec![None],
            queue_len: 0,
            busy_gpus: 0,
            fragmentation: 0.0,
            tenant_used_share: vec![f64::from(i) / 10.0],
            tenant_deserved_share: vec![0.5],
        })
        .collect();
    let kept = merge_share_samples(&samples, 20);
    assert_eq!(kept.len(), 10, "under the cap every bucket is kept");
    assert_eq!(kept[3].tenant_used_share, vec![0.3]);
    let merged = merge_share_samples(&samples, 3);
    // Groups of ⌈10 / 3⌉ = 4 buckets: each closes at its last bucket with the mean share.
    let times: Vec<u64> = merged.iter().map(|s| s.t_ns / 3_600_000_000_000).collect();
    assert_eq!(times, vec![4, 8, 10]);
    let used: Vec<f64> = merged.iter().map(|s| s.tenant_used_share[0]).collect();
    for (got, want) in used.iter().zip([0.15, 0.55, 0.85]) {
        assert!((got - want).abs() < 1e-12, "{used:?}");
    }
    assert!(merged.iter().all(|s| s.tenant_deserved_share == vec![0.5]));
}

#[wasm_bindgen_test]
fn time_axes_use_one_unit_and_round_steps() {
    use bubblelab_web::components::axis::{nice_step, ticks, value_ticks, TimeUnit};
    // A 39 ms iteration on ~8 ticks: 0, 5, …, 35 ms, never "0 ns … 5.000 ms".
    let step = nice_step(39e6, 7.8);
    assert_eq!(step, 5e6);
    let unit = TimeUnit::for_axis(39e6, step);
    let labels: Vec<String> = ticks(0.0, 39e6, step)
        .iter()
        .map(|&t| unit.format(t))
        .collect();
    assert_eq!(labels.first().map(String::as_str), Some("0 ms"));
    assert_eq!(labels.get(1).map(String::as_str), Some("5 ms"));
    assert_eq!(labels.last().map(String::as_str), Some("35 ms"));
    // 3.2 s at half-second steps: one decimal, in seconds.
    let unit = TimeUnit::for_axis(3.2e9, 5e8);
    assert_eq!(unit.format(0.0), "0.0 s");
    assert_eq!(unit.format(1.5e9), "1.5 s");
    // A value axis up to 4.725 GiB: 0, 1, 2, 3, 4 (not 1.181, 2.363, …).
    let got: Vec<String> = value_ticks(0.0, 4.725, 4.0)
        .into_iter()
        .map(|t| t.1)
        .collect();
    assert_eq!(got, ["0", "1", "2", "3", "4"]);
    let got: Vec<String> = value_ticks(0.0, 0.242, 4.0)
        .into_iter()
        .map(|t| t.1)
        .collect();
    assert_eq!(got, ["0.00", "0.05", "0.10", "0.15", "0.20"]);
}
