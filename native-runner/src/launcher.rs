//! Rank and world size from the launcher's environment: torchrun (`RANK`, `WORLD_SIZE`,
//! `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`), Slurm (`SLURM_PROCID`, `SLURM_NTASKS`,
//! `SLURM_LOCALID`) and Open MPI (`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`,
//! `OMPI_COMM_WORLD_LOCAL_RANK`). torchrun's variables win over Slurm's, Slurm's over Open MPI's
//! (torchrun inside `srun` sets both). Not wired to a command yet: the multi-GPU executor that
//! needs it is not built.
#![allow(dead_code)]

/// Who launched the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launcher {
    /// torchrun (or any launcher setting torch.distributed's variables).
    Torchrun,
    /// Slurm's srun.
    Slurm,
    /// Open MPI's mpirun.
    OpenMpi,
    /// No launcher variables: one process.
    Single,
}

/// This process's place in the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankInfo {
    /// Which launcher's variables were read.
    pub launcher: Launcher,
    /// Global rank, 0-based.
    pub rank: u32,
    /// Number of processes.
    pub world_size: u32,
    /// Rank on this node (selects the GPU).
    pub local_rank: u32,
    /// Rendezvous address for the NCCL unique id (`MASTER_ADDR:MASTER_PORT`), where given.
    pub master: Option<(String, u16)>,
}

fn number(get: &dyn Fn(&str) -> Option<String>, key: &str) -> Result<Option<u32>, String> {
    match get(key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<u32>()
            .map(Some)
            .map_err(|_| format!("{key}: expected a whole number ≥ 0, got `{v}`")),
    }
}

/// Reads the rank from variables looked up by `get` (the environment, or a map in tests).
///
/// # Errors
/// A variable that is not a number, a rank not below the world size, a bad port, or a rank
/// given without its world size; the message names the variable.
pub fn parse(get: &dyn Fn(&str) -> Option<String>) -> Result<RankInfo, String> {
    let sets = [
        (Launcher::Torchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK"),
        (
            Launcher::Slurm,
            "SLURM_PROCID",
            "SLURM_NTASKS",
            "SLURM_LOCALID",
        ),
        (
            Launcher::OpenMpi,
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
        ),
    ];
    let master = match (get("MASTER_ADDR"), get("MASTER_PORT")) {
        (Some(addr), Some(port)) => Some((
            addr,
            port.trim()
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| format!("MASTER_PORT: expected a port 1-65535, got `{port}`"))?,
        )),
        (Some(_), None) => return Err("MASTER_ADDR is set but MASTER_PORT is not".into()),
        _ => None,
    };
    for (launcher, rank_key, size_key, local_key) in sets {
        let rank = number(get, rank_key)?;
        let size = number(get, size_key)?;
        match (rank, size) {
            (None, None) => continue,
            (Some(_), None) => return Err(format!("{rank_key} is set but {size_key} is not")),
            (None, Some(_)) => return Err(format!("{size_key} is set but {rank_key} is not")),
            (Some(rank), Some(world_size)) => {
                if world_size == 0 || rank >= world_size {
                    return Err(format!(
                        "{rank_key}={rank} must be below {size_key}={world_size}"
                    ));
                }
                return Ok(RankInfo {
                    launcher,
                    rank,
                    world_size,
                    local_rank: number(get, local_key)?.unwrap_or(0),
                    master,
                });
            }
        }
    }
    Ok(RankInfo {
        launcher: Launcher::Single,
        rank: 0,
        world_size: 1,
        local_rank: 0,
        master,
    })
}

/// [`parse`] over the process environment.
///
/// # Errors
/// As [`parse`].
pub fn from_env() -> Result<RankInfo, String> {
    parse(&|k| std::env::var(k).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<RankInfo, String> {
        let map: std::collections::BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        parse(&|k| map.get(k).cloned())
    }

    #[test]
    fn torchrun() {
        let r = with(&[
            ("RANK", "3"),
            ("WORLD_SIZE", "8"),
            ("LOCAL_RANK", "3"),
            ("MASTER_ADDR", "10.0.0.1"),
            ("MASTER_PORT", "29500"),
        ])
        .unwrap();
        assert_eq!(r.launcher, Launcher::Torchrun);
        assert_eq!((r.rank, r.world_size, r.local_rank), (3, 8, 3));
        assert_eq!(r.master, Some(("10.0.0.1".into(), 29500)));
    }

    #[test]
    fn torchrun_wins_over_slurm_and_slurm_over_mpi() {
        let r = with(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "16"),
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
        ])
        .unwrap();
        assert_eq!((r.launcher, r.rank), (Launcher::Torchrun, 1));
        let r = with(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "16"),
            ("SLURM_LOCALID", "1"),
            ("OMPI_COMM_WORLD_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
        ])
        .unwrap();
        assert_eq!(
            (r.launcher, r.rank, r.world_size, r.local_rank),
            (Launcher::Slurm, 5, 16, 1)
        );
    }

    #[test]
    fn open_mpi_and_single() {
        let r = with(&[("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "4")]).unwrap();
        assert_eq!(
            (r.launcher, r.rank, r.world_size, r.local_rank),
            (Launcher::OpenMpi, 1, 4, 0)
        );
        let r = with(&[]).unwrap();
        assert_eq!((r.launcher, r.rank, r.world_size), (Launcher::Single, 0, 1));
    }

    #[test]
    fn bad_values_name_the_variable() {
        assert!(with(&[("RANK", "x"), ("WORLD_SIZE", "2")])
            .unwrap_err()
            .contains("RANK"));
        assert!(with(&[("RANK", "2"), ("WORLD_SIZE", "2")])
            .unwrap_err()
            .contains("below"));
        assert!(with(&[("RANK", "0")]).unwrap_err().contains("WORLD_SIZE"));
        assert!(with(&[("MASTER_ADDR", "a"), ("MASTER_PORT", "0")])
            .unwrap_err()
            .contains("MASTER_PORT"));
    }
}
