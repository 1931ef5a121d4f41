//! Known answers of the elastic lab: the goodput model, the artifact's job simulation, and the
//! three policies' limits (no policy gives more GPUs than a node has or a job may use).
#![allow(clippy::unwrap_used)]

use bubblelab_core::labs::elastic::apps::{app, GradStats, APPS_NAMES};
use bubblelab_core::labs::elastic::sim::{placement_of, simulate, Job, Round, Scheduler, NS_PER_S};
use bubblelab_core::labs::elastic::workload::parse_workload;
use bubblelab_core::labs::elastic::{
    jobs_for, ElasticJob, ElasticParams, ElasticPolicy, PolluxSpec,
};

#[test]
fn efficiency_is_one_at_the_initial_batch_and_falls_above_it() {
    let g = GradStats { sqr: 2.0, var: 6.0 };
    assert!((g.efficiency(128.0, 128.0) - 1.0).abs() < 1e-12);
    // φ = M₀·var/sqr = 384: E(B) = (φ + M₀)/(φ + B).
    let want = (384.0 + 128.0) / (384.0 + 512.0);
    assert!((g.efficiency(512.0, 128.0) - want).abs() < 1e-12);
    assert!(g.efficiency(1024.0, 128.0) < g.efficiency(512.0, 128.0));
}

#[test]
fn the_chosen_batch_size_is_always_valid() {
    for name in APPS_NAMES {
        let a = app(name).unwrap();
        let grad = a.grad_stats(f64::from(a.init_batch_size), 0);
        for r in 1..=64u32 {
            for n in [1, 2, 4] {
                if n > r {
                    continue;
                }
                let c = a.optimize(grad, n, r);
                if c.goodput > 0.0 {
                    assert!(
                        (a.min_local_bsz..=a.max_local_bsz).contains(&c.atomic_bsz),
                        "{name} r={r}: b={}",
                        c.atomic_bsz
                    );
                    let total = r * c.atomic_bsz * (c.accum_steps + 1);
                    assert!(total >= a.init_batch_size, "{name} r={r}: B={total}");
                }
            }
        }
    }
}

#[test]
fn placements_group_runs_of_one_node() {
    assert_eq!(placement_of(&[0, 0, 1, 1, 1, 3]), vec![2, 3, 1]);
    assert_eq!(placement_of(&[]), Vec::<u32>::new());
}

/// Runs one job alone on one GPU at M₀: no efficiency loss, one start, so its JCT is the
/// first tick, the restart pause, and its isolated time (each epoch boundary rounded to a
/// whole second).
#[test]
fn a_lone_job_pays_the_first_tick_and_one_restart() {
    let a = app("cifar10").unwrap();
    let job = Job::new(a, 0, 1, Some(a.init_batch_size));
    struct One;
    impl Scheduler for One {
        fn optimize(&mut self, round: &Round<'_>, _: &[Vec<u32>]) -> Vec<Vec<u32>> {
            round.active.iter().map(|_| vec![0]).collect()
        }
    }
    let run = simulate(
        vec![job],
        1,
        4,
        60 * NS_PER_S,
        30 * NS_PER_S,
        &[],
        &mut One,
        &mut |_, _| {},
    );
    let done = run.jobs[0].completion_ns.unwrap() / NS_PER_S;
    let b = f64::from(a.init_batch_size);
    let step_s = a.perf.iteration_time_s(1, 1, b, 0);
    let isolated = a.completion_progress() * step_s;
    let want = 60.0 + 30.0 + isolated;
    assert!(
        (done as f64 - want).abs() <= f64::from(a.max_epochs),
        "JCT {done} s against {want:.0} s"
    );
    assert_eq!(run.jobs[0].num_restarts, Some(0));
}

/// Checks every round's answer against the cluster and the policy's limits.
struct Checked {
    inner: Box<dyn Scheduler>,
    policy: ElasticPolicy,
    rounds: u32,
}

impl Scheduler for Checked {
    fn optimize(&mut self, round: &Round<'_>, prev: &[Vec<u32>]) -> Vec<Vec<u32>> {
        let out = self.inner.optimize(round, prev);
        assert_eq!(out.len(), round.active.len());
        let mut used = vec![0u32; round.nodes as usize];
        for (k, alloc) in out.iter().enumerate() {
            let job = &round.jobs[round.active[k]];
            for &n in alloc {
                assert!(n < round.nodes, "node {n} of {}", round.nodes);
                used[n as usize] += 1;
            }
            let r = alloc.len() as u32;
            match self.policy {
                ElasticPolicy::Tiresias => assert!(r == 0 || r == job.tuned_replicas),
                ElasticPolicy::Optimus => {
                    assert!(r <= job.target_batch.unwrap() / job.app.min_local_bsz);
                }
                ElasticPolicy::Pollux => {
                    let cap = if job.app.name == "ncf" {
                        1
                    } else {
                        (2 * job.max_profiled_replicas).clamp(1, 64)
                    };
                    assert!(r <= cap, "{r} GPUs for a job capped at {cap}");
                }
            }
        }
        for (n, &u) in used.iter().enumerate() {
            assert!(u <= round.gpus_per_node, "node {n} holds {u} GPUs");
        }
        self.rounds += 1;
        out
    }
}

fn small_params() -> ElasticParams {
    let jobs: Vec<ElasticJob> =
        parse_workload(bubblelab_core::labs::elastic::params::ARTIFACT_WORKLOADS[5])
            .unwrap()
            .into_iter()
            .take(24)
            .collect();
    ElasticParams {
        nodes: 4,
        workload: 0,
        jobs: jobs
            .into_iter()
            .map(|mut j| {
                j.replicas = j.replicas.min(16);
                j
            })
            .collect(),
        pollux: PolluxSpec {
            population: 16,
            generations: 6,
            seed: 3,
        },
        ..ElasticParams::default()
    }
}

#[test]
fn no_policy_exceeds_a_node_or_a_jobs_limit_and_every_job_finishes() {
    let params = small_params();
    params.validate().unwrap();
    for policy in ElasticPolicy::ALL {
        let jobs = jobs_for(&params, policy).unwrap();
        let mut checked = Checked {
            inner: policy.build(&params.pollux),
            policy,
            rounds: 0,
        };
        let run = simulate(
            jobs,
            params.nodes,
            4,
            60 * NS_PER_S,
            30 * NS_PER_S,
            &[],
            &mut checked,
            &mut |_, _| {},
        );
        assert!(checked.rounds > 0);
        assert!(
            run.jobs.iter().all(|j| j.completion_ns.is_some()),
            "{policy:?} left jobs unfinished"
        );
        for j in &run.jobs {
            assert!(j.completion_ns.unwrap() > j.submit_ns);
        }
    }
}

#[test]
fn pollux_runs_are_reproducible_by_seed() {
    let params = small_params();
    let jct = |p: &ElasticParams| -> Vec<u64> {
        let jobs = jobs_for(p, ElasticPolicy::Pollux).unwrap();
        let mut s = ElasticPolicy::Pollux.build(&p.pollux);
        let run = simulate(
            jobs,
            p.nodes,
            4,
            60 * NS_PER_S,
            30 * NS_PER_S,
            &[],
            s.as_mut(),
            &mut |_, _| {},
        );
        run.jobs.iter().map(|j| j.completion_ns.unwrap()).collect()
    };
    assert_eq!(jct(&params), jct(&params));
}

#[test]
fn workload_errors_name_the_line_and_column() {
    let head = "name,time,application,num_replicas,batch_size\n";
    let err = parse_workload(&format!("{head}a,1,gpt5,1,128\n"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("row 2") && err.contains("application") && err.contains("cifar10"),
        "{err}"
    );
    let err = parse_workload(&format!("{head}a,1,cifar10,1,64\n"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("batch_size") && err.contains("128"), "{err}");
    let err = parse_workload(&format!("{head}a,1,cifar10,0,128\n"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("num_replicas"), "{err}");
    let err = parse_workload("name,time\n").unwrap_err().to_string();
    assert!(err.contains("application"), "{err}");
    for k in 0..8 {
        let jobs =
            parse_workload(bubblelab_core::labs::elastic::params::ARTIFACT_WORKLOADS[k]).unwrap();
        assert_eq!(jobs.len(), 160);
    }
}

#[test]
fn bad_scenarios_name_the_field() {
    let p = ElasticParams {
        workload: 9,
        ..ElasticParams::default()
    };
    assert!(p
        .validate()
        .unwrap_err()
        .to_string()
        .contains("elastic.workload"));
    let p = ElasticParams {
        gpus_per_node: 8,
        ..ElasticParams::default()
    };
    assert!(p
        .validate()
        .unwrap_err()
        .to_string()
        .contains("elastic.gpus_per_node"));
    let p = ElasticParams {
        nodes: 1,
        ..ElasticParams::default()
    };
    let e = p.validate().unwrap_err().to_string();
    assert!(e.contains("replicas"), "{e}");
}

/// With the migration lab pricing a restart, a lone job pays that price once instead of the
/// artifact's 30 s, and Pollux's runs change accordingly.
#[test]
fn a_restart_priced_by_the_migration_lab_is_what_a_lone_job_pays() {
    use bubblelab_core::labs::migration::CheckpointOption;
    use bubblelab_core::labs::migration::PreemptionModel;
    let a = app("cifar10").unwrap();
    let mut params = ElasticParams {
        policies: vec![ElasticPolicy::Tiresias],
        nodes: 1,
        workload: 0,
        jobs: vec![ElasticJob {
            name: "lone".into(),
            submit_s: 0,
            app: "cifar10".into(),
            replicas: 1,
            batch_size: a.init_batch_size,
        }],
        ..ElasticParams::default()
    };
    let jct = |p: &ElasticParams| {
        let runs = bubblelab_core::labs::elastic::run_all(p, &mut |_, _| {}).unwrap();
        runs[0].run.jobs[0].completion_ns.unwrap() / NS_PER_S
    };
    let fixed = jct(&params);
    params.restart_cost = PreemptionModel::Migration {
        option: CheckpointOption::Framework,
        params: Box::default(),
    };
    params.validate().unwrap();
    let pause = params.restart_pause_s(1);
    assert!(
        pause > 30,
        "the migration lab's default job restarts in {pause} s"
    );
    let priced = jct(&params);
    // The same run, the pause longer by (pause − 30) s, give or take the epoch roundings.
    let diff = priced as i64 - fixed as i64 - (pause as i64 - 30);
    assert!(
        diff.abs() <= i64::from(a.max_epochs),
        "{fixed} → {priced}, pause {pause}"
    );
}
