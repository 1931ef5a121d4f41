//! Multi-process launch: ranks from the launcher (`crate::launcher`), a rendezvous over TCP at
//! `MASTER_ADDR:MASTER_PORT` that hands every rank the bytes rank 0 made ([`rendezvous`]), NCCL
//! communicators, one per group of ranks, on device `LOCAL_RANK` ([`nccl`]), and the multi-rank
//! part of `bubblelab doctor`.

pub mod nccl;
pub mod rendezvous;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cudarc::nccl::{Comm, ReduceOp};

use crate::calibrate::COLLECTIVES;
use crate::error::Failure;
use crate::launcher;
use nccl::{
    check_groups, nccl_bus_bandwidth, nccl_communicators, nccl_unique_ids, nccl_usable, GroupComm,
};
use rendezvous::{fingerprint, list_ranks, rendezvous, Endpoint};

/// What a rank holds once every rank met: rank 0's payload and, where NCCL runs on every
/// rank, this rank's communicators.
pub struct Meeting {
    /// Rank 0's payload: a flag byte, a 16-byte job token, then one NCCL unique id per group
    /// (flag 1) or the reason NCCL was skipped (flag 0). Identical on every rank.
    pub payload: Vec<u8>,
    /// The communicators, or why NCCL was not tried (the same reason on every rank).
    pub nccl: Result<Vec<GroupComm>, String>,
}

/// Bytes of the job token in a [`Meeting`]'s payload.
const TOKEN_BYTES: usize = 16;

/// A token that differs from job to job: rank 0's process id and the wall clock, ns.
fn job_token() -> [u8; TOKEN_BYTES] {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut t = [0u8; TOKEN_BYTES];
    t[..4].copy_from_slice(&std::process::id().to_be_bytes());
    t[4..].copy_from_slice(&ns.to_be_bytes()[4..]);
    t
}

/// Meets every rank and sets up NCCL where every rank can run it: each rank's hello says
/// whether NCCL runs there ([`nccl_usable`] on device `local_rank`); rank 0 makes one unique id
/// per group when all can (else it sends every rank's reason), the ids travel over the
/// rendezvous, and each rank creates its communicators ([`nccl_communicators`]). On a machine
/// without CUDA this is the CPU rendezvous alone.
///
/// # Errors
/// Bad groups, the rendezvous' error, a payload that is not rank 0's format, or NCCL's error
/// once the ids are there.
pub fn meet(ep: &Endpoint, local_rank: u32, groups: &[Vec<u32>]) -> Result<Meeting, String> {
    check_groups(groups, ep.world_size)?;
    let payload = rendezvous(ep, &readiness_hello(local_rank), |hellos| {
        let mut p = vec![0u8];
        p.extend_from_slice(&job_token());
        match all_ready(hellos) {
            Ok(()) => {
                p[0] = 1;
                p.extend(nccl_unique_ids(groups.len())?);
            }
            Err(reason) => p.extend_from_slice(reason.as_bytes()),
        }
        Ok(p)
    })
    .map_err(|e| format!("rendezvous at {}: {e}", ep.master()))?;
    let Some((&flag, rest)) = payload
        .split_first()
        .filter(|_| payload.len() > TOKEN_BYTES)
    else {
        return Err(format!(
            "rank 0's payload has {} bytes, expected at least {}",
            payload.len(),
            1 + TOKEN_BYTES
        ));
    };
    let rest = &rest[TOKEN_BYTES..];
    let nccl = if flag == 1 {
        Ok(nccl_communicators(ep.rank, local_rank, groups, rest)?)
    } else {
        Err(String::from_utf8_lossy(rest).into_owned())
    };
    Ok(Meeting { payload, nccl })
}

/// A hello saying whether NCCL can run here: byte 0 is 1 when it can, else the reason follows.
fn readiness_hello(local_rank: u32) -> Vec<u8> {
    match nccl_usable(local_rank) {
        Ok(_) => vec![1],
        Err(reason) => {
            let mut h = vec![0];
            h.extend_from_slice(reason.as_bytes());
            h
        }
    }
}

/// Rank 0: `Ok` when every hello says NCCL can run, else each reason with the ranks that gave
/// it (`no CUDA driver (libcuda not found) on ranks 0, 1`).
fn all_ready(hellos: &[Vec<u8>]) -> Result<(), String> {
    let mut reasons: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (rank, h) in (0u32..).zip(hellos) {
        if h.first() != Some(&1) {
            let mut reason = String::from_utf8_lossy(h.get(1..).unwrap_or_default()).into_owned();
            if reason.is_empty() {
                reason = "no reason given".into();
            }
            reasons.entry(reason).or_default().push(rank);
        }
    }
    if reasons.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = reasons
        .iter()
        .map(|(reason, ranks)| {
            let s = if ranks.len() == 1 { "" } else { "s" };
            format!("{reason} on rank{s} {}", list_ranks(ranks))
        })
        .collect();
    Err(parts.join("; "))
}

// ---------------------------------------------------------------------------------------------
// bubblelab doctor under a launcher
// ---------------------------------------------------------------------------------------------

/// Message sizes of the doctor's bus-bandwidth check, bytes (nccl-tests' convention).
const DOCTOR_BENCH_BYTES: [u64; 2] = [1 << 20, 64 << 20];

/// The multi-rank part of `bubblelab doctor`: with no launcher (or a world of one rank) it
/// prints nothing; otherwise this rank's place, then [`meet`] with every rank; where NCCL runs
/// on every rank, a communicator of all ranks, a one-float all-reduce check and the bus
/// bandwidth of the four collectives at 1 and 64 MiB.
///
/// # Errors
/// A bad launcher environment ([`Failure::Input`]); a failed rendezvous, communicator or
/// all-reduce ([`Failure::Other`]), naming the rank.
pub fn doctor(timeout: Duration) -> Result<(), Failure> {
    let info = launcher::from_env().map_err(Failure::Input)?;
    if info.world_size <= 1 {
        return Ok(());
    }
    let me = format!("rank {} of {}", info.rank, info.world_size);
    let ep = Endpoint::from_rank_info(&info, timeout)
        .map_err(|e| Failure::Input(format!("{me}: {e}")))?;
    crate::files::write_stdout(&format!(
        "launcher: {}; {me}, local rank {}; master {} (address from {}, port from {})\n",
        info.launcher.name(),
        info.local_rank,
        ep.master(),
        info.master.as_ref().map_or("", |m| m.addr_from),
        info.master.as_ref().map_or("", |m| m.port_from)
    ))?;
    let started = Instant::now();
    let world: Vec<u32> = (0..info.world_size).collect();
    let failed = |e: String| Failure::Other(format!("{me}: {e}"));
    let met = meet(&ep, info.local_rank, &[world]).map_err(failed)?;
    crate::files::write_stdout(&format!(
        "rendezvous: all {} ranks met in {:.0} ms; payload {} bytes, fingerprint {:016x}\n",
        info.world_size,
        started.elapsed().as_secs_f64() * 1e3,
        met.payload.len(),
        fingerprint(&met.payload)
    ))?;
    let comms = match met.nccl {
        Err(reason) => {
            return crate::files::write_stdout(&format!("NCCL: not tried: {reason}\n"));
        }
        Ok(comms) => comms,
    };
    let g = comms
        .first()
        .ok_or_else(|| failed("no communicator was created".into()))?;
    let sum = all_reduce_check(&g.comm, info.rank).map_err(failed)?;
    let n = f64::from(info.world_size);
    let expected = n * (n + 1.0) / 2.0;
    crate::files::write_stdout(&format!(
        "NCCL: communicator of ranks 0-{} on device {}; all-reduce of rank+1: {sum} (expected \
         {expected})\n",
        g.ranks.len() - 1,
        g.comm.ordinal()
    ))?;
    if (sum - expected).abs() > 0.5 {
        return Err(failed(format!(
            "NCCL all-reduce gave {sum}, expected {expected}"
        )));
    }
    for kind in COLLECTIVES {
        let points =
            nccl_bus_bandwidth(&g.comm, kind, &DOCTOR_BENCH_BYTES, 5, 20).map_err(failed)?;
        let shown: Vec<String> = points
            .iter()
            .map(|p| {
                format!(
                    "{} {:.1} GB/s",
                    crate::files::size_text(p.bytes as usize),
                    p.bus_bytes_per_s / 1e9
                )
            })
            .collect();
        crate::files::write_stdout(&format!(
            "NCCL {} bus bandwidth: {}\n",
            kind.id(),
            shown.join(", ")
        ))?;
    }
    Ok(())
}

/// Message sizes of the NCCL curves that `calibrate --device cuda` measures under a launcher,
/// bytes (64 KiB to 1 GiB, as nccl-tests sweeps them).
pub const CALIBRATE_NCCL_BYTES: [u64; 5] = [64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30];

/// Ranks of this job per node, from the launcher's variables (torchrun `LOCAL_WORLD_SIZE`,
/// Open MPI `OMPI_COMM_WORLD_LOCAL_SIZE`, Slurm `SLURM_NTASKS_PER_NODE`); the whole world
/// when none is set (one node).
fn ranks_per_node(world_size: u32) -> u32 {
    [
        "LOCAL_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
        "SLURM_NTASKS_PER_NODE",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.trim().parse::<u32>().ok())
    .filter(|&n| n >= 1)
    .map_or(world_size, |n| n.min(world_size))
}

/// This process's place under a launcher with more than one rank, or `None` (one process).
///
/// # Errors
/// A bad launcher environment ([`Failure::Input`]).
pub fn launched() -> Result<Option<launcher::RankInfo>, Failure> {
    let info = launcher::from_env().map_err(Failure::Input)?;
    Ok((info.world_size > 1).then_some(info))
}

/// What `calibrate --device cuda` adds under a launcher: every rank meets, and the bus
/// bandwidth of AllReduce, AllGather, ReduceScatter and AllToAll over a communicator of all
/// ranks at [`CALIBRATE_NCCL_BYTES`] (nccl-tests' convention), as the profile's collective
/// curves. Every rank must call it.
///
/// # Errors
/// The rendezvous' error, NCCL not usable on some rank (with each rank's reason), or NCCL's
/// error, naming this rank.
pub fn nccl_calibration(
    info: &launcher::RankInfo,
    timeout: Duration,
) -> Result<Vec<bubblelab_core::hw::CollectiveCurve>, Failure> {
    let me = format!("rank {} of {}", info.rank, info.world_size);
    let failed = |e: String| Failure::Other(format!("{me}: {e}"));
    let ep = Endpoint::from_rank_info(info, timeout)
        .map_err(|e| Failure::Input(format!("{me}: {e}")))?;
    let world: Vec<u32> = (0..info.world_size).collect();
    let met = meet(&ep, info.local_rank, &[world]).map_err(failed)?;
    let comms = met
        .nccl
        .map_err(|reason| failed(format!("NCCL cannot run on every rank: {reason}")))?;
    let g = comms
        .first()
        .ok_or_else(|| failed("no communicator was created".into()))?;
    let mut curves = Vec::new();
    for kind in COLLECTIVES {
        let points =
            nccl_bus_bandwidth(&g.comm, kind, &CALIBRATE_NCCL_BYTES, 5, 20).map_err(failed)?;
        curves.push(bubblelab_core::hw::CollectiveCurve {
            kind,
            ranks: info.world_size,
            ranks_per_node: ranks_per_node(info.world_size),
            points,
        });
    }
    Ok(curves)
}

/// Sums rank+1 over the communicator (one f32).
fn all_reduce_check(comm: &Comm, rank: u32) -> Result<f64, String> {
    let stream = comm.stream();
    let drv = |e: cudarc::driver::DriverError| format!("CUDA: {e:?}");
    comm.context().bind_to_thread().map_err(drv)?;
    let mut buf = stream.clone_htod(&[rank as f32 + 1.0]).map_err(drv)?;
    comm.all_reduce_in_place(&mut buf, &ReduceOp::Sum)
        .map_err(|e| format!("ncclAllReduce failed: {:?}", e.0))?;
    let host = stream.clone_dtoh(&buf).map_err(drv)?;
    Ok(f64::from(host.first().copied().unwrap_or(f32::NAN)))
}

/// `--rendezvous-timeout-s` as a duration.
///
/// # Errors
/// Not a positive finite number of seconds (at most a day).
pub fn timeout_from_s(seconds: f64) -> Result<Duration, Failure> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(Failure::Input(format!(
            "--rendezvous-timeout-s: expected seconds in (0, 86400], got {seconds}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_is_gathered_by_reason() {
        assert_eq!(all_ready(&[vec![1], vec![1]]), Ok(()));
        let e = all_ready(&[
            b"\x00no CUDA driver".to_vec(),
            vec![1],
            b"\x00no CUDA driver".to_vec(),
            b"\x00local rank 3 has no device".to_vec(),
            vec![],
        ])
        .unwrap_err();
        assert_eq!(
            e,
            "local rank 3 has no device on rank 3; no CUDA driver on ranks 0, 2; no reason given \
             on rank 4"
        );
    }

    #[test]
    fn ranks_meet_and_share_one_payload() {
        let port = rendezvous::tests::free_port();
        let ranks: Vec<_> = (0..3u32)
            .map(|rank| {
                std::thread::spawn(move || {
                    let ep = Endpoint {
                        rank,
                        world_size: 3,
                        master_addr: "127.0.0.1".into(),
                        master_port: port,
                        timeout: Duration::from_secs(10),
                    };
                    // Communicators stay on their thread: keep the payload and the reason.
                    meet(&ep, rank, &[vec![0, 1, 2], vec![1, 2]]).map(|m| (m.payload, m.nccl.err()))
                })
            })
            .collect();
        let met: Vec<(Vec<u8>, Option<String>)> = ranks
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect();
        assert!(met[0].0.len() > 1 + TOKEN_BYTES);
        for (payload, reason) in &met {
            assert_eq!(payload, &met[0].0);
            if !crate::exec::cuda::driver_present() {
                let reason = reason.as_ref().unwrap();
                assert!(
                    reason.ends_with("no CUDA driver (libcuda not found) on ranks 0, 1, 2"),
                    "{reason}"
                );
            }
        }
    }

    #[test]
    fn bad_groups_fail_before_meeting() {
        let ep = Endpoint {
            rank: 0,
            world_size: 2,
            master_addr: "127.0.0.1".into(),
            master_port: 1,
            timeout: Duration::from_secs(1),
        };
        assert!(meet(&ep, 0, &[vec![0, 2]]).is_err_and(|e| e.starts_with("groups[0][1]")));
    }

    #[test]
    fn timeout_flag() {
        assert_eq!(timeout_from_s(2.5).unwrap(), Duration::from_millis(2500));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e9] {
            assert!(timeout_from_s(bad).is_err(), "{bad}");
        }
    }
}
