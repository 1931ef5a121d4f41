//! NCCL through cudarc: presence checks (cudarc panics when a library is missing), unique ids,
//! one communicator per group of ranks, and the bus-bandwidth microbenchmark in nccl-tests'
//! conventions.

use bubblelab_core::cost::CollectiveKind;
use bubblelab_core::hw::BusBwPoint;
use cudarc::driver::CudaContext;
use cudarc::nccl::{Comm, Id, ReduceOp};

/// Bytes of one NCCL unique id (`NCCL_UNIQUE_ID_BYTES`).
pub const NCCL_ID_BYTES: usize = 128;

#[allow(unsafe_code)]
fn nccl_library_present() -> bool {
    // SAFETY: `is_culib_present` only tries `libloading::Library::new` on libnccl's names and
    // drops what it opened; loading a library runs its initialisers, which is what using NCCL
    // means. Checked first because cudarc panics when a library it calls is missing.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// The device of the rank with this local rank among `visible` devices: device `local_rank`,
/// or the only device when the launcher gave each rank one GPU (`srun --gpus-per-task=1`,
/// `CUDA_VISIBLE_DEVICES` set per rank).
///
/// # Errors
/// A local rank beyond the visible devices.
pub fn device_for(local_rank: u32, visible: u32) -> Result<u32, String> {
    match visible {
        0 => Err("the driver reports no device".into()),
        1 => Ok(0),
        n if local_rank < n => Ok(local_rank),
        n => Err(format!(
            "local rank {local_rank} has no device: the driver reports {n} (one rank per GPU \
             needs at most {n} ranks per node)"
        )),
    }
}

/// Whether NCCL can run on this rank: the CUDA driver and libnccl load and there is a device
/// for `local_rank` ([`device_for`]); returns its ordinal.
///
/// # Errors
/// What is missing, in one phrase.
pub fn nccl_usable(local_rank: u32) -> Result<u32, String> {
    if !crate::exec::cuda::driver_present() {
        return Err("no CUDA driver (libcuda not found)".into());
    }
    if !nccl_library_present() {
        return Err("no NCCL library (libnccl not found)".into());
    }
    let count = CudaContext::device_count().map_err(|e| format!("CUDA driver: {e:?}"))?;
    device_for(local_rank, u32::try_from(count).unwrap_or(0))
}

/// Checks communicator groups: each non-empty, its ranks distinct and below `world_size`.
///
/// # Errors
/// Names the group (`groups[i]`) and the rank at fault.
pub fn check_groups(groups: &[Vec<u32>], world_size: u32) -> Result<(), String> {
    for (i, g) in groups.iter().enumerate() {
        if g.is_empty() {
            return Err(format!("groups[{i}]: a group needs at least one rank"));
        }
        for (j, &r) in g.iter().enumerate() {
            if r >= world_size {
                return Err(format!(
                    "groups[{i}][{j}]: rank {r} is not below the world size {world_size}"
                ));
            }
            if g[..j].contains(&r) {
                return Err(format!("groups[{i}][{j}]: rank {r} appears twice"));
            }
        }
    }
    Ok(())
}

/// Rank 0: one fresh NCCL unique id per group, concatenated ([`NCCL_ID_BYTES`] each). Call
/// only after [`nccl_usable`] succeeded.
///
/// # Errors
/// NCCL's own error.
pub fn nccl_unique_ids(groups: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(groups * NCCL_ID_BYTES);
    for _ in 0..groups {
        let id = Id::new().map_err(|e| format!("ncclGetUniqueId failed: {:?}", e.0))?;
        out.extend(id.internal().iter().map(|c| c.to_ne_bytes()[0]));
    }
    Ok(out)
}

/// One NCCL communicator and the global ranks it joins, in communicator-rank order.
#[derive(Debug)]
pub struct GroupComm {
    /// Global ranks of the group; this rank's communicator rank is its index here.
    pub ranks: Vec<u32>,
    /// The communicator, on its own stream of this rank's device.
    pub comm: Comm,
}

/// Creates this rank's communicators on the device of `local_rank` ([`device_for`]): one for each group that contains
/// `rank`, in list order (every rank walks the list in the same order, so the blocking
/// `ncclCommInitRank` calls cannot wait on each other in a cycle). `ids` holds one unique id
/// per group, as [`nccl_unique_ids`] made them on rank 0.
///
/// # Errors
/// Too few id bytes, no device, or NCCL's error naming the group.
pub fn nccl_communicators(
    rank: u32,
    local_rank: u32,
    groups: &[Vec<u32>],
    ids: &[u8],
) -> Result<Vec<GroupComm>, String> {
    if ids.len() != groups.len() * NCCL_ID_BYTES {
        return Err(format!(
            "expected {} bytes of NCCL ids for {} groups, got {}",
            groups.len() * NCCL_ID_BYTES,
            groups.len(),
            ids.len()
        ));
    }
    let device = nccl_usable(local_rank)?;
    let ctx = CudaContext::new(device as usize).map_err(|e| format!("device {device}: {e:?}"))?;
    let mut comms = Vec::new();
    for (i, (g, id)) in groups
        .iter()
        .zip(ids.chunks_exact(NCCL_ID_BYTES))
        .enumerate()
    {
        let Some(me) = g.iter().position(|&r| r == rank) else {
            continue;
        };
        let mut internal = [0 as std::ffi::c_char; NCCL_ID_BYTES];
        for (c, &b) in internal.iter_mut().zip(id) {
            *c = std::ffi::c_char::from_ne_bytes([b]);
        }
        // ncclCommInitRank takes the device that is current on this thread.
        let stream = ctx
            .bind_to_thread()
            .and_then(|()| ctx.new_stream())
            .map_err(|e| format!("device {device}: new stream: {e:?}"))?;
        let comm = Comm::from_rank(stream, me, g.len(), Id::uninit(internal)).map_err(|e| {
            format!(
                "groups[{i}]: ncclCommInitRank (rank {me} of {}) failed: {:?}",
                g.len(),
                e.0
            )
        })?;
        comms.push(GroupComm {
            ranks: g.clone(),
            comm,
        });
    }
    Ok(comms)
}

/// Element counts (f32) and the nccl-tests message size of one collective: `(send count,
/// receive count, size in bytes)`. `bytes` is the message size in nccl-tests' convention
/// (AllGather: the output; the others: one rank's input), rounded down to a multiple of
/// 4·`ranks` so that every rank's share is whole.
///
/// # Errors
/// A kind the benchmark does not run, fewer than 2 ranks, or a size below 4·`ranks` bytes.
pub fn collective_counts(
    kind: CollectiveKind,
    bytes: u64,
    ranks: u32,
) -> Result<(usize, usize, u64), String> {
    if ranks < 2 {
        return Err(format!(
            "a bus-bandwidth benchmark needs at least 2 ranks, the communicator has {ranks}"
        ));
    }
    let n = ranks as usize;
    let total = usize::try_from(bytes / 4).unwrap_or(usize::MAX) / n * n;
    if total == 0 {
        return Err(format!(
            "message size {bytes} bytes is below 4 bytes per rank ({} bytes)",
            4 * u64::from(ranks)
        ));
    }
    let counts = match kind {
        CollectiveKind::AllReduce => (total, total),
        CollectiveKind::AllGather => (total / n, total),
        CollectiveKind::ReduceScatter => (total, total / n),
        CollectiveKind::AllToAll => (total, total),
        CollectiveKind::SendRecv => {
            return Err("send-recv is not a collective this benchmark runs".into())
        }
    };
    Ok((counts.0, counts.1, total as u64 * 4))
}

/// nccl-tests' bus bandwidth, bytes/s: algorithm bandwidth (`size_bytes` / time) times
/// [`CollectiveKind::bus_factor`] (2(n−1)/n for AllReduce, (n−1)/n for AllGather,
/// ReduceScatter and AllToAll; nccl-tests `doc/PERFORMANCE.md`).
#[must_use]
pub fn bus_bytes_per_s(kind: CollectiveKind, size_bytes: u64, ranks: u32, seconds: f64) -> f64 {
    size_bytes as f64 / seconds * kind.bus_factor(ranks)
}

/// Measures `kind` on `comm` at each message size (nccl-tests' convention, see
/// [`collective_counts`]): f32 data, `warmup_iters` untimed runs, then `timed_iters` runs back to
/// back between two CUDA events on the communicator's stream. Every rank of the communicator
/// must call this with the same arguments, like any collective.
///
/// # Errors
/// Bad sizes or iterations, or the driver's or NCCL's error.
pub fn nccl_bus_bandwidth(
    comm: &Comm,
    kind: CollectiveKind,
    sizes_bytes: &[u64],
    warmup_iters: u32,
    timed_iters: u32,
) -> Result<Vec<BusBwPoint>, String> {
    if timed_iters == 0 {
        return Err("timed_iters: must be ≥ 1".into());
    }
    let ranks = u32::try_from(comm.world_size()).unwrap_or(u32::MAX);
    let plans = sizes_bytes
        .iter()
        .map(|&b| collective_counts(kind, b, ranks))
        .collect::<Result<Vec<_>, _>>()?;
    let max = |f: fn(&(usize, usize, u64)) -> usize| plans.iter().map(f).max().unwrap_or(0);
    let stream = comm.stream();
    let drv = |what: &'static str| move |e: cudarc::driver::DriverError| format!("{what}: {e:?}");
    comm.context().bind_to_thread().map_err(drv("device"))?;
    let send = stream
        .alloc_zeros::<f32>(max(|p| p.0).max(1))
        .map_err(drv("send buffer"))?;
    let mut recv = stream
        .alloc_zeros::<f32>(max(|p| p.1).max(1))
        .map_err(drv("receive buffer"))?;
    let mut points = Vec::with_capacity(plans.len());
    for &(send_count, recv_count, size_bytes) in &plans {
        let mut once = || -> Result<(), String> {
            let s = send.slice(..send_count);
            let mut r = recv.slice_mut(..recv_count);
            run_collective(comm, kind, &s, &mut r)
        };
        for _ in 0..warmup_iters {
            once()?;
        }
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = stream.record_event(flags).map_err(drv("start event"))?;
        for _ in 0..timed_iters {
            once()?;
        }
        let end = stream.record_event(flags).map_err(drv("end event"))?;
        let ms = start.elapsed_ms(&end).map_err(drv("event timing"))?;
        let seconds = f64::from(ms) / 1e3 / f64::from(timed_iters);
        points.push(BusBwPoint {
            bytes: size_bytes as f64,
            bus_bytes_per_s: bus_bytes_per_s(kind, size_bytes, ranks, seconds),
        });
    }
    Ok(points)
}

/// Enqueues one collective on the communicator's stream.
fn run_collective(
    comm: &Comm,
    kind: CollectiveKind,
    send: &cudarc::driver::CudaView<'_, f32>,
    recv: &mut cudarc::driver::CudaViewMut<'_, f32>,
) -> Result<(), String> {
    let nccl = |e: cudarc::nccl::result::NcclError| format!("{}: NCCL error {:?}", kind.id(), e.0);
    match kind {
        CollectiveKind::AllReduce => comm.all_reduce(send, recv, &ReduceOp::Sum).map(drop),
        CollectiveKind::AllGather => comm.all_gather(send, recv).map(drop),
        CollectiveKind::ReduceScatter => comm.reduce_scatter(send, recv, &ReduceOp::Sum).map(drop),
        CollectiveKind::AllToAll => {
            // NCCL has no AllToAll call: nccl-tests runs one send and one receive of count/n
            // elements per peer inside a group.
            let n = comm.world_size();
            let share = send.len() / n;
            cudarc::nccl::group_start().map_err(nccl)?;
            let mut queued = Ok(());
            for peer in 0..n {
                let lo = peer * share;
                let peer_i32 = i32::try_from(peer).unwrap_or(i32::MAX);
                queued = comm
                    .send(&send.slice(lo..lo + share), peer_i32)
                    .and_then(|()| {
                        comm.recv(&mut recv.slice_mut(lo..lo + share), peer_i32)
                            .map(drop)
                    });
                if queued.is_err() {
                    break;
                }
            }
            let ended = cudarc::nccl::group_end().map(drop);
            queued.and(ended)
        }
        CollectiveKind::SendRecv => return Err("send-recv is not benchmarked".into()),
    }
    .map_err(nccl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_nccl_tests() {
        let mib = 1 << 20;
        // AllReduce: in and out are one rank's whole buffer.
        assert_eq!(
            collective_counts(CollectiveKind::AllReduce, mib, 8),
            Ok((262_144, 262_144, mib))
        );
        // AllGather: the size is the output; each rank sends 1/n of it.
        assert_eq!(
            collective_counts(CollectiveKind::AllGather, mib, 8),
            Ok((32_768, 262_144, mib))
        );
        // ReduceScatter: the size is one rank's input; each rank keeps 1/n.
        assert_eq!(
            collective_counts(CollectiveKind::ReduceScatter, mib, 8),
            Ok((262_144, 32_768, mib))
        );
        assert_eq!(
            collective_counts(CollectiveKind::AllToAll, mib, 8),
            Ok((262_144, 262_144, mib))
        );
        // 1000 bytes on 3 ranks: 250 floats, rounded down to 249 so that shares are whole.
        assert_eq!(
            collective_counts(CollectiveKind::AllGather, 1000, 3),
            Ok((83, 249, 996))
        );
        assert!(collective_counts(CollectiveKind::AllReduce, mib, 1)
            .unwrap_err()
            .contains("at least 2 ranks"));
        assert!(collective_counts(CollectiveKind::AllReduce, 7, 2)
            .unwrap_err()
            .contains("below 4 bytes per rank"));
        assert!(collective_counts(CollectiveKind::SendRecv, mib, 2).is_err());
    }

    #[test]
    fn bus_bandwidth_factors() {
        // 1 GB in 1 s on 8 ranks: algbw 1e9; busbw 2·7/8 of it for AllReduce, 7/8 otherwise.
        let ar = bus_bytes_per_s(CollectiveKind::AllReduce, 1_000_000_000, 8, 1.0);
        assert!((ar - 1.75e9).abs() < 1.0, "{ar}");
        for kind in [
            CollectiveKind::AllGather,
            CollectiveKind::ReduceScatter,
            CollectiveKind::AllToAll,
        ] {
            let b = bus_bytes_per_s(kind, 1_000_000_000, 8, 0.5);
            assert!((b - 1.75e9).abs() < 1.0, "{kind:?} {b}");
        }
    }

    #[test]
    fn groups_are_checked() {
        assert_eq!(
            check_groups(&[vec![0, 1], vec![2, 3], vec![0, 2]], 4),
            Ok(())
        );
        assert_eq!(
            check_groups(&[vec![0], vec![]], 4).unwrap_err(),
            "groups[1]: a group needs at least one rank"
        );
        assert_eq!(
            check_groups(&[vec![0, 4]], 4).unwrap_err(),
            "groups[0][1]: rank 4 is not below the world size 4"
        );
        assert_eq!(
            check_groups(&[vec![1, 2, 1]], 4).unwrap_err(),
            "groups[0][2]: rank 1 appears twice"
        );
    }

    #[test]
    fn one_device_per_rank() {
        assert_eq!(device_for(3, 8), Ok(3));
        assert_eq!(device_for(3, 1), Ok(0));
        assert!(device_for(8, 8)
            .unwrap_err()
            .contains("local rank 8 has no device"));
        assert!(device_for(0, 0).is_err());
    }

    #[test]
    fn absence_is_an_error_not_a_panic() {
        if !crate::exec::cuda::driver_present() {
            assert_eq!(
                nccl_usable(0).unwrap_err(),
                "no CUDA driver (libcuda not found)"
            );
            // Ids of the right length still meet the missing driver by name.
            let e = nccl_communicators(0, 0, &[vec![0, 1]], &[0; NCCL_ID_BYTES]).unwrap_err();
            assert!(e.contains("no CUDA driver"), "{e}");
        }
        let e = nccl_communicators(0, 0, &[vec![0, 1]], &[0; 5]).unwrap_err();
        assert_eq!(e, "expected 128 bytes of NCCL ids for 1 groups, got 5");
    }
}
