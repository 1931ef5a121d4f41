//! The variants lab: INFaaS's selection rules as its artifact states them (accuracy bins,
//! the result cap, the latency rule, slack, the not-running penalty, the loose-SLO CPU rule,
//! the blacklist thresholds), the baselines' picks, and the claims on the presets.

use bubblelab_core::labs::variants::params::{App, Hardware, VariantsParams};
use bubblelab_core::labs::variants::policies::infaas::{
    accuracy_bin, candidates, latency_ms, Choice, Infaas,
};
use bubblelab_core::labs::variants::policies::{InstanceView, MachineView, Route, Selector, Views};
use bubblelab_core::labs::variants::sim::BlacklistRule;
use bubblelab_core::{presets, run, Scenario};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

fn index(params: &VariantsParams, name: &str) -> usize {
    params
        .variants
        .iter()
        .position(|v| v.name == name)
        .expect(name)
}

fn names(params: &VariantsParams, list: &[usize]) -> Vec<String> {
    list.iter()
        .map(|&i| params.variants[i].name.clone())
        .collect()
}

fn app(min_accuracy_pct: f64, slo_ms: f64) -> App {
    App {
        name: "q".into(),
        min_accuracy_pct,
        slo_ms,
        qps: 1.0,
        burst_qps: 1.0,
    }
}

fn running(variant: usize, qps: f64, blacklisted: bool) -> InstanceView {
    InstanceView {
        variant,
        machine: 0,
        qps,
        blacklisted,
        ready: true,
    }
}

#[test]
fn accuracy_bins_take_a_boundary_into_the_lower_bin() {
    // Bins {0, 50, 70, 75, 78, 100}: the first whose closed bounds hold the value.
    assert_eq!(accuracy_bin(0.0), 0);
    assert_eq!(accuracy_bin(70.0), 1);
    assert_eq!(accuracy_bin(70.1), 2);
    assert_eq!(accuracy_bin(75.0), 2);
    assert_eq!(accuracy_bin(78.0), 3);
    assert_eq!(accuracy_bin(78.1), 4);
    assert_eq!(accuracy_bin(100.0), 4);
}

#[test]
fn candidates_come_from_the_first_non_empty_bin_in_ascending_accuracy() {
    let p = VariantsParams::default();
    // Floor 72 %: bin 70–75 holds MobileNetV2 (71.3, below the floor) and ResNet50 (74.9).
    assert_eq!(
        names(&p, &candidates(&p.variants, 72.0, 300.0)),
        ["resnet50-cpu", "resnet50-gpu"]
    );
    // Floor 76 %, SLO 20 ms: 0.15 · 20 / 0.6 = 5 results of the six in bin 75–78.
    assert_eq!(
        names(&p, &candidates(&p.variants, 76.0, 20.0)),
        [
            "resnet101_v2-cpu",
            "resnet101_v2-gpu",
            "inception_v3-cpu",
            "inception_v3-gpu",
            "resnet152_v2-cpu"
        ]
    );
    // At least three: SLO 8 ms gives 2, raised to 3.
    assert_eq!(candidates(&p.variants, 76.0, 8.0).len(), 3);
    // The cap goes through an 8-bit integer: 500 wraps to −12, and a negative count is all.
    assert_eq!(candidates(&p.variants, 76.0, 2000.0).len(), 6);
    // 260 wraps to 4.
    assert_eq!(candidates(&p.variants, 76.0, 1040.0).len(), 4);
}

#[test]
fn the_latency_rule_uses_the_batch_on_cpu_and_thirty_two_on_gpu_and_skips_fast_variants_for_loose_slos(
) {
    let p = VariantsParams::default();
    let cpu = &p.variants[index(&p, "resnet152_v2-cpu")];
    let gpu = &p.variants[index(&p, "resnet152_v2-gpu")];
    // CPU: slope · batch; 107.5 ms at 32 items, 3.36 ms at one.
    assert!((latency_ms(cpu, 32, 300.0).unwrap() - 107.5).abs() < 1e-9);
    assert!(
        latency_ms(cpu, 1, 300.0).is_none(),
        "faster than 100 ms under a loose SLO"
    );
    // GPU: always min(32, max batch) = 32 items, whatever the query's batch.
    assert!((latency_ms(gpu, 1, 50.0).unwrap() - 6.6).abs() < 1e-9);
    assert!(
        latency_ms(gpu, 1, 300.0).is_none(),
        "a GPU variant is skipped for a loose SLO"
    );
    assert!(latency_ms(cpu, 32, 100.0).is_none(), "over the SLO");
}

#[test]
fn with_nothing_running_the_first_fitting_variant_of_the_smallest_max_batch_is_started() {
    let p = VariantsParams::default();
    let mut infaas = Infaas::default();
    // Floor 76 %, SLO 50 ms: resnet101_v2-cpu (72.7 ms) misses the SLO but lowers the best
    // max batch to 128; resnet101_v2-gpu (32) fits and is the only smaller batch.
    let choice = infaas.choose(&app(76.0, 50.0), 32, &p.variants, &[]);
    assert_eq!(
        choice,
        Some(Choice {
            variant: index(&p, "resnet101_v2-gpu"),
            running: false
        })
    );
}

#[test]
fn a_loose_slo_with_nothing_running_starts_the_cheapest_cpu_variant() {
    let p = VariantsParams::default();
    let mut infaas = Infaas::default();
    let choice = infaas.choose(&app(76.0, 300.0), 32, &p.variants, &[]);
    assert_eq!(
        choice,
        Some(Choice {
            variant: index(&p, "resnet152_v2-cpu"),
            running: false
        })
    );
}

#[test]
fn among_running_variants_the_least_slack_wins_and_any_running_one_beats_a_load() {
    let p = VariantsParams::default();
    let (fast, slow) = (index(&p, "resnet101_v2-gpu"), index(&p, "inception_v3-gpu"));
    let mut infaas = Infaas::default();
    let views = [running(fast, 10.0, false), running(slow, 10.0, false)];
    // Slack: 50 − 5.4 vs 50 − 6.9; the slower variant leaves less.
    let choice = infaas.choose(&app(76.0, 50.0), 32, &p.variants, &views);
    assert_eq!(
        choice,
        Some(Choice {
            variant: slow,
            running: true
        })
    );
    // Only the CPU variant running (42.2 ms fits 50 ms): it wins over starting any GPU
    // variant, whose score carries the 1000 ms penalty.
    let cpu = index(&p, "inception_v3-cpu");
    let mut fresh = Infaas::default();
    let choice = fresh.choose(
        &app(76.0, 50.0),
        32,
        &p.variants,
        &[running(cpu, 1.0, false)],
    );
    assert_eq!(
        choice,
        Some(Choice {
            variant: cpu,
            running: true
        })
    );
}

#[test]
fn a_blacklisted_gpu_variant_is_started_anew_and_a_blacklisted_cpu_variant_is_skipped() {
    let p = VariantsParams::default();
    let gpu = index(&p, "resnet101_v2-gpu");
    let mut infaas = Infaas::default();
    let choice = infaas.choose(
        &app(76.0, 50.0),
        32,
        &p.variants,
        &[running(gpu, 300.0, true)],
    );
    assert_eq!(
        choice,
        Some(Choice {
            variant: gpu,
            running: false
        })
    );
    let machines = [
        MachineView {
            hardware: Hardware::Gpu,
            utilisation: 1.0,
        },
        MachineView {
            hardware: Hardware::Gpu,
            utilisation: 0.0,
        },
    ];
    let instances = [running(gpu, 300.0, true)];
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let route = Infaas::default().route(
        0,
        &app(76.0, 50.0),
        32,
        &p.variants,
        Views {
            now_ns: 0,
            instances: &instances,
            machines: &machines,
        },
        &mut rng,
    );
    assert!(
        matches!(route, Route::Load { variant, .. } if variant == gpu),
        "{route:?}"
    );
    // The only CPU variant that fits a loose SLO is blacklisted: nothing else qualifies.
    let cpu = index(&p, "resnet152_v2-cpu");
    let mut loose = Infaas::default();
    assert_eq!(
        loose.choose(
            &app(76.0, 300.0),
            32,
            &p.variants,
            &[running(cpu, 20.0, true)]
        ),
        None
    );
}

#[test]
fn recently_chosen_variants_are_tried_first_so_applications_share_a_running_variant() {
    let p = VariantsParams::default();
    let xception = index(&p, "xception-gpu");
    let resnet101 = index(&p, "resnet101_v2-gpu");
    let mut infaas = Infaas::default();
    // Moderation (floor 79 %, 100 ms) starts Xception on a GPU.
    let views = [
        running(xception, 0.0, false),
        running(resnet101, 0.0, false),
    ];
    assert_eq!(
        infaas
            .choose(&app(79.0, 100.0), 32, &p.variants, &views)
            .map(|c| c.variant),
        Some(xception)
    );
    // A 76 % / 50 ms query takes the recent Xception, not the full search's least slack.
    assert_eq!(
        infaas
            .choose(&app(76.0, 50.0), 32, &p.variants, &views)
            .map(|c| c.variant),
        Some(xception)
    );
    assert_eq!(
        Infaas::default()
            .choose(&app(76.0, 50.0), 32, &p.variants, &views)
            .map(|c| c.variant),
        Some(resnet101)
    );
}

#[test]
fn the_blacklist_thresholds_are_the_artifacts() {
    let fast = BlacklistRule::of(Hardware::Gpu, 5.0);
    assert!((fast.latency - 3.0).abs() < 1e-12, "15 / 5 ms");
    assert_eq!(
        BlacklistRule::of(Hardware::Gpu, 2.0).latency,
        5.0,
        "capped at 5"
    );
    let slow = BlacklistRule::of(Hardware::Gpu, 12.0);
    assert_eq!(
        (slow.latency, slow.qps, slow.queue, slow.unset),
        (1.5, 0.3, 0.8, 1.25)
    );
    let cpu = BlacklistRule::of(Hardware::Cpu, 100.0);
    assert_eq!(
        (cpu.latency, cpu.qps, cpu.queue, cpu.unset),
        (4.0, 1.0, 1.1, 1.5)
    );
}

fn preset_report(id: &str) -> bubblelab_core::Report {
    let scenario = presets::find(id)
        .expect(id)
        .scenario()
        .expect("preset parses");
    run(&scenario).expect("preset runs")
}

#[test]
fn under_the_burst_infaas_misses_fewer_slos_than_a_fixed_variant_per_application() {
    let r = preset_report("variants-burst");
    let infaas = r.metric("infaas.violation_pct").unwrap();
    let cheapest = r.metric("fixed-cheapest.violation_pct").unwrap();
    let fastest = r.metric("fixed-fastest.violation_pct").unwrap();
    assert!(
        infaas < fastest && infaas < cheapest,
        "{infaas} vs {fastest}, {cheapest}"
    );
    assert_eq!(r.metric("infaas.failed"), Some(0.0));
}

#[test]
fn infaas_refuses_a_loose_slo_whose_first_bin_holds_only_fast_variants() {
    let r = preset_report("variants-loose-slo-bin");
    let Some(Scenario::Variants(p)) =
        presets::find("variants-loose-slo-bin").and_then(|p| p.scenario().ok())
    else {
        panic!("preset")
    };
    let served = r
        .tables
        .iter()
        .find(|t| t.key == "served")
        .expect("served table");
    let failed_rows: Vec<_> = served
        .rows
        .iter()
        .filter(|row| row[0].display() == "INFaaS" && row[2].display() == "— (failed)")
        .collect();
    assert_eq!(
        failed_rows.len(),
        1,
        "one application fails: {failed_rows:?}"
    );
    assert_eq!(failed_rows[0][1].display(), p.apps[0].name);
    assert_eq!(
        r.metric("infaas.failed"),
        failed_rows[0][3].display().parse::<f64>().ok()
    );
    assert_eq!(r.metric("fixed-cheapest.failed"), Some(0.0));
}

#[test]
fn the_same_scenario_gives_the_same_report_and_bad_fields_are_named() {
    let a = preset_report("variants-burst");
    let b = preset_report("variants-burst");
    assert_eq!(a.to_json(), b.to_json());
    let mut p = VariantsParams::default();
    p.variants[3].slope_ms = f64::NAN;
    let e = Scenario::Variants(p).validate().unwrap_err().to_string();
    assert!(e.starts_with("variants.variants[3].slope_ms:"), "{e}");
    let mut p = VariantsParams::default();
    p.apps[1].name = p.apps[0].name.clone();
    let e = Scenario::Variants(p).validate().unwrap_err().to_string();
    assert!(e.starts_with("variants.apps[1].name:"), "{e}");
    let p = VariantsParams {
        burst_end_s: 1.0,
        ..VariantsParams::default()
    };
    let e = Scenario::Variants(p).validate().unwrap_err().to_string();
    assert!(e.starts_with("variants.burst_end_s:"), "{e}");
}

#[test]
fn an_instance_still_loading_is_not_running_yet() {
    let p = VariantsParams::default();
    let gpu = index(&p, "resnet101_v2-gpu");
    let loading = InstanceView {
        ready: false,
        ..running(gpu, 0.0, false)
    };
    // Registered only once loaded: the search scores it as not running.
    let choice = Infaas::default().choose(&app(76.0, 50.0), 32, &p.variants, &[loading]);
    assert_eq!(
        choice,
        Some(Choice {
            variant: gpu,
            running: false
        })
    );
}

#[test]
fn the_two_hundredth_query_within_a_second_blacklists_its_machine_for_two_seconds() {
    let p = VariantsParams::default();
    let gpu = index(&p, "resnet101_v2-gpu");
    let machines = [
        MachineView {
            hardware: Hardware::Gpu,
            utilisation: 0.5,
        },
        MachineView {
            hardware: Hardware::Gpu,
            utilisation: 0.0,
        },
    ];
    let instances = [running(gpu, 10.0, false)];
    let mut infaas = Infaas::default();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut route_at = |infaas: &mut Infaas, now_ns: u64| {
        let views = Views {
            now_ns,
            instances: &instances,
            machines: &machines,
        };
        infaas.route(0, &app(76.0, 50.0), 32, &p.variants, views, &mut rng)
    };
    for q in 0..200u64 {
        assert_eq!(
            route_at(&mut infaas, q * 1_000_000),
            Route::To(0),
            "query {q}"
        );
    }
    // Machine 0 is blacklisted: the running instance is skipped and the variant is started
    // on a machine (the not-running path ignores the blacklist).
    assert!(
        matches!(route_at(&mut infaas, 200_000_000), Route::Load { variant, .. } if variant == gpu)
    );
    // Two seconds after the 200th query the machine takes queries again.
    assert_eq!(route_at(&mut infaas, 2_300_000_000), Route::To(0));
}

#[test]
fn a_variants_hardware_must_agree_with_its_max_batch_and_its_accuracy_be_positive() {
    let mut p = VariantsParams::default();
    let gpu = index(&p, "resnet50-gpu");
    p.variants[gpu].max_batch = 64;
    let e = Scenario::Variants(p).validate().unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("variants.variants[{gpu}].max_batch:")),
        "{e}"
    );
    let mut p = VariantsParams::default();
    p.variants[0].accuracy_pct = 0.0;
    let e = Scenario::Variants(p).validate().unwrap_err().to_string();
    assert!(e.starts_with("variants.variants[0].accuracy_pct:"), "{e}");
}
