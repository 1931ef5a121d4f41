//! Multi-process launch on loopback: several real `bubblelab doctor` processes, given the
//! variables torchrun, Slurm or Open MPI would set, meet at MASTER_ADDR:MASTER_PORT and agree on
//! rank 0's payload; a rank that never comes is a named timeout within the bound.

mod common;

use std::io::Read as _;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Run;

/// Every variable the launcher parser reads: cleared so that the test's own environment (a CI
/// job under Slurm, say) does not leak in.
const LAUNCHER_VARS: [&str; 15] = [
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_JOB_NODELIST",
    "SLURM_NODELIST",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "TORCHELASTIC_USE_AGENT_STORE",
    "BUBBLELAB_RENDEZVOUS_PORT",
];

/// Ports handed to the tests of this process so far.
static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());

/// A port free now and never handed to another test of this process (they run in parallel).
fn free_port() -> String {
    let mut given = GIVEN.lock().expect("lock");
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("address")
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port.to_string();
        }
    }
}

fn doctor(vars: &[(&str, String)], timeout_s: &str) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bubblelab"));
    cmd.args(["doctor", "--rendezvous-timeout-s", timeout_s])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for v in LAUNCHER_VARS {
        cmd.env_remove(v);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.spawn().expect("the bubblelab binary starts")
}

/// Waits for every child, killing all and failing the test past `bound`.
fn finish(mut children: Vec<Child>, bound: Duration) -> Vec<Run> {
    let started = Instant::now();
    let mut codes: Vec<Option<Option<i32>>> = vec![None; children.len()];
    while codes.iter().any(Option::is_none) {
        for (c, code) in children.iter_mut().zip(codes.iter_mut()) {
            if code.is_none() {
                if let Some(status) = c.try_wait().expect("wait") {
                    *code = Some(status.code());
                }
            }
        }
        if started.elapsed() > bound {
            for c in &mut children {
                let _ = c.kill();
            }
            panic!("the ranks did not finish within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    children
        .iter_mut()
        .zip(codes)
        .map(|(c, code)| {
            let mut stdout = String::new();
            let mut stderr = String::new();
            c.stdout
                .take()
                .expect("piped")
                .read_to_string(&mut stdout)
                .expect("stdout");
            c.stderr
                .take()
                .expect("piped")
                .read_to_string(&mut stderr)
                .expect("stderr");
            Run {
                code: code.flatten(),
                stdout,
                stderr,
            }
        })
        .collect()
}

/// The fingerprint on a rank's `rendezvous:` line.
fn fingerprint(run: &Run) -> &str {
    run.stdout
        .lines()
        .find_map(|l| l.split("fingerprint ").nth(1))
        .unwrap_or_else(|| panic!("no fingerprint in:\n{}", run.stdout))
}

/// All ranks exit 0, met, and print the same payload fingerprint; NCCL is either tried or
/// skipped with the same reason on every rank.
fn assert_met(runs: &[Run], world: usize, launcher_line: &str) {
    for (rank, run) in runs.iter().enumerate() {
        assert_eq!(run.code, Some(0), "rank {rank}: {}", run.stderr);
        assert!(
            run.stdout
                .contains(&format!("{launcher_line}; rank {rank} of {world}")),
            "rank {rank}: {}",
            run.stdout
        );
        assert!(
            run.stdout.contains(&format!("all {world} ranks met")),
            "rank {rank}: {}",
            run.stdout
        );
        assert_eq!(fingerprint(run), fingerprint(&runs[0]), "rank {rank}");
        let nccl = |r: &Run| {
            r.stdout
                .lines()
                .find(|l| l.starts_with("NCCL"))
                .map(str::to_string)
        };
        assert_eq!(nccl(run), nccl(&runs[0]), "rank {rank}");
    }
}

#[test]
fn torchrun_ranks_meet_on_loopback() {
    let port = free_port();
    let world = 4;
    let children = (0..world)
        .map(|r| {
            doctor(
                &[
                    ("RANK", r.to_string()),
                    ("WORLD_SIZE", world.to_string()),
                    ("LOCAL_RANK", r.to_string()),
                    ("MASTER_ADDR", "127.0.0.1".into()),
                    ("MASTER_PORT", port.clone()),
                ],
                "30",
            )
        })
        .collect();
    let runs = finish(children, Duration::from_mins(1));
    assert_met(&runs, world, "launcher: torchrun");
    for (r, run) in runs.iter().enumerate() {
        assert!(
            run.stdout.contains(&format!(
                "local rank {r}; master 127.0.0.1:{port} (address from MASTER_ADDR, port from MASTER_PORT)"
            )),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn under_torchrun_agent_store_the_rendezvous_takes_the_next_port() {
    // torchrun's agent (TORCHELASTIC_USE_AGENT_STORE=True) serves its TCPStore at MASTER_PORT:
    // hold that port as the agent would, and find a MASTER_PORT whose next port is free.
    let (agent, port) = loop {
        let port: u16 = free_port().parse().expect("a port");
        let Ok(agent) = TcpListener::bind(("127.0.0.1", port)) else {
            continue;
        };
        let Some(next) = port.checked_add(1) else {
            continue;
        };
        let mut given = GIVEN.lock().expect("lock");
        if !given.contains(&next) && TcpListener::bind(("0.0.0.0", next)).is_ok() {
            given.push(next);
            break (agent, port);
        }
    };
    let world = 2;
    let children = (0..world)
        .map(|r| {
            doctor(
                &[
                    ("RANK", r.to_string()),
                    ("WORLD_SIZE", world.to_string()),
                    ("MASTER_ADDR", "127.0.0.1".into()),
                    ("MASTER_PORT", port.to_string()),
                    ("TORCHELASTIC_USE_AGENT_STORE", "True".into()),
                ],
                "30",
            )
        })
        .collect();
    let runs = finish(children, Duration::from_mins(1));
    drop(agent);
    assert_met(&runs, world, "launcher: torchrun");
    assert!(
        runs[0].stdout.contains(&format!(
            "master 127.0.0.1:{} (address from MASTER_ADDR, port from MASTER_PORT + 1)",
            port + 1
        )),
        "{}",
        runs[0].stdout
    );
}

#[test]
fn slurm_ranks_meet_at_the_first_node() {
    let port = free_port();
    let world = 3;
    let children = (0..world)
        .map(|r| {
            doctor(
                &[
                    ("SLURM_PROCID", r.to_string()),
                    ("SLURM_NTASKS", world.to_string()),
                    ("SLURM_LOCALID", r.to_string()),
                    ("SLURM_JOB_NODELIST", "localhost".into()),
                    ("MASTER_PORT", port.clone()),
                ],
                "30",
            )
        })
        .collect();
    let runs = finish(children, Duration::from_mins(1));
    assert_met(&runs, world, "launcher: Slurm");
    assert!(
        runs[1].stdout.contains(&format!(
            "master localhost:{port} (address from SLURM_JOB_NODELIST, port from MASTER_PORT)"
        )),
        "{}",
        runs[1].stdout
    );
}

#[test]
fn open_mpi_ranks_meet() {
    let port = free_port();
    let world = 2;
    let children = (0..world)
        .map(|r| {
            doctor(
                &[
                    ("OMPI_COMM_WORLD_RANK", r.to_string()),
                    ("OMPI_COMM_WORLD_SIZE", world.to_string()),
                    ("OMPI_COMM_WORLD_LOCAL_RANK", r.to_string()),
                    ("MASTER_ADDR", "127.0.0.1".into()),
                    ("MASTER_PORT", port.clone()),
                ],
                "30",
            )
        })
        .collect();
    let runs = finish(children, Duration::from_mins(1));
    assert_met(&runs, world, "launcher: Open MPI");
}

#[test]
fn a_rank_that_never_comes_is_a_timeout_within_the_bound() {
    let port = free_port();
    let vars = |r: u32| {
        vec![
            ("RANK", r.to_string()),
            ("WORLD_SIZE", "3".to_string()),
            ("MASTER_ADDR", "127.0.0.1".to_string()),
            ("MASTER_PORT", port.clone()),
        ]
    };
    let started = Instant::now();
    let runs = finish(
        vec![doctor(&vars(0), "2"), doctor(&vars(1), "2")],
        Duration::from_secs(30),
    );
    // The 2 s timeout plus process start-up on a loaded machine.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    for run in &runs {
        assert_eq!(run.code, Some(1), "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
    assert!(
        runs[0]
            .stderr
            .contains("error: rank 0 of 3: rendezvous at 127.0.0.1:")
            && runs[0]
                .stderr
                .contains("timed out after 2 s waiting for rank 2 to join (2 of 3 ranks arrived)"),
        "{}",
        runs[0].stderr
    );
    // Rank 1 hears rank 0's reason, or reaches its own deadline first and says what it awaited.
    assert!(
        runs[1].stderr.contains("waiting for rank 2 to join")
            || runs[1]
                .stderr
                .contains("timed out after 2 s awaiting the payload (rank 0 sends it once all 3 ranks joined)"),
        "{}",
        runs[1].stderr
    );
}

#[test]
fn a_launcher_without_an_address_is_bad_input() {
    let run = &finish(
        vec![doctor(
            &[
                ("SLURM_PROCID", "0".into()),
                ("SLURM_NTASKS", "2".into()),
                ("SLURM_JOB_NODELIST", "gpu[01-02]".into()),
            ],
            "5",
        )],
        Duration::from_secs(30),
    )[0];
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("export MASTER_PORT"), "{}", run.stderr);
    let run = &finish(
        vec![doctor(
            &[("RANK", "0".into()), ("WORLD_SIZE", "x".into())],
            "5",
        )],
        Duration::from_secs(30),
    )[0];
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("WORLD_SIZE: expected a whole number"),
        "{}",
        run.stderr
    );
    let run = &finish(vec![doctor(&[], "0")], Duration::from_secs(30))[0];
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("--rendezvous-timeout-s"),
        "{}",
        run.stderr
    );
}

#[test]
fn without_a_launcher_doctor_meets_no_one() {
    let run = &finish(vec![doctor(&[], "5")], Duration::from_secs(30))[0];
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stdout.contains("launcher:"), "{}", run.stdout);
    assert!(!run.stdout.contains("rendezvous"), "{}", run.stdout);
}
