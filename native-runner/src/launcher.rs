//! Rank and world size from the launcher's environment: torchrun (`RANK`, `WORLD_SIZE`,
//! `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`), Slurm (`SLURM_PROCID`, `SLURM_NTASKS`,
//! `SLURM_LOCALID`) and Open MPI (`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`,
//! `OMPI_COMM_WORLD_LOCAL_RANK`). torchrun's variables win over Slurm's, Slurm's over Open MPI's
//! (torchrun inside `srun` sets both). The rendezvous address is `MASTER_ADDR:MASTER_PORT`;
//! under Slurm `MASTER_ADDR` defaults to the first host of `SLURM_JOB_NODELIST` (what
//! `scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1` prints, the usual sbatch recipe).
//! `BUBBLELAB_RENDEZVOUS_PORT` replaces `MASTER_PORT`; under torchrun with
//! `TORCHELASTIC_USE_AGENT_STORE=True` the agent's TCPStore already listens at `MASTER_PORT`, so
//! the rendezvous takes `MASTER_PORT + 1`. Read by `bubblelab doctor` and the rendezvous in
//! `dist`.

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
    /// Rendezvous address for the NCCL unique id, where given or derived.
    pub master: Option<Master>,
}

/// Where rank 0 listens for the rendezvous.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Master {
    /// Host name or address of rank 0 (`MASTER_ADDR`).
    pub addr: String,
    /// TCP port of the rendezvous.
    pub port: u16,
    /// Where `addr` came from: `MASTER_ADDR`, or `SLURM_JOB_NODELIST` (its first host).
    pub addr_from: &'static str,
    /// Where `port` came from: `MASTER_PORT`, `BUBBLELAB_RENDEZVOUS_PORT`, or `MASTER_PORT + 1`
    /// (torchrun's agent store holds `MASTER_PORT`).
    pub port_from: &'static str,
}

impl Launcher {
    /// The launcher's name as a user knows it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Torchrun => "torchrun",
            Launcher::Slurm => "Slurm",
            Launcher::OpenMpi => "Open MPI",
            Launcher::Single => "none",
        }
    }
}

impl RankInfo {
    /// The rendezvous address, or why there is none: each launcher gets its own advice.
    ///
    /// # Errors
    /// `MASTER_ADDR`/`MASTER_PORT` missing where the world has more than one rank.
    pub fn master(&self) -> Result<&Master, String> {
        if let Some(m) = &self.master {
            return Ok(m);
        }
        let advice = match self.launcher {
            Launcher::Torchrun => {
                "torchrun sets MASTER_ADDR and MASTER_PORT itself; set both when another launcher \
                 sets RANK and WORLD_SIZE"
            }
            Launcher::Slurm => {
                "Slurm gives no port: export MASTER_PORT (e.g. 29500) before srun; MASTER_ADDR \
                 defaults to the first host of SLURM_JOB_NODELIST"
            }
            Launcher::OpenMpi => {
                "mpirun gives no rendezvous address: pass -x MASTER_ADDR=<host of rank 0> \
                 -x MASTER_PORT=29500"
            }
            Launcher::Single => "set MASTER_ADDR and MASTER_PORT",
        };
        Err(format!(
            "{} ranks need a rendezvous address, but MASTER_ADDR and MASTER_PORT are not both \
             set: {advice}",
            self.world_size
        ))
    }
}

/// The first host of a Slurm host list, as `scontrol show hostnames` would print it first:
/// `gpu[07-09,12],login1` gives `gpu07`, `rack[1-2]-n[01-04]` gives `rack1-n01`.
///
/// # Errors
/// An empty list, an unclosed `[`, or a range that does not start with digits.
pub fn first_slurm_host(list: &str) -> Result<String, String> {
    let mut host = String::new();
    let mut chars = list.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            ',' => break,
            '[' => {
                let mut range = String::new();
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == ']' {
                        closed = true;
                        break;
                    }
                    range.push(c);
                }
                let first = range.split([',', '-']).next().unwrap_or("");
                if !closed || first.is_empty() || !first.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!(
                        "expected a host list like `gpu[01-04,07]`, got `{list}`"
                    ));
                }
                host.push_str(first);
            }
            c => host.push(c),
        }
    }
    if host.is_empty() {
        return Err(format!(
            "expected a host list like `gpu[01-04,07]`, got `{list}`"
        ));
    }
    Ok(host)
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
/// A variable that is not a number, a rank not below the world size, a bad port, a rank
/// given without its world size, `MASTER_ADDR` without `MASTER_PORT`, or a Slurm host list
/// that cannot be read; the message names the variable.
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
    let mut info = RankInfo {
        launcher: Launcher::Single,
        rank: 0,
        world_size: 1,
        local_rank: 0,
        master: None,
    };
    for (launcher, rank_key, size_key, local_key) in sets {
        let rank = number(get, rank_key)?;
        let size = number(get, size_key)?;
        match (rank, size) {
            (None, None) => {}
            (Some(_), None) => return Err(format!("{rank_key} is set but {size_key} is not")),
            (None, Some(_)) => return Err(format!("{size_key} is set but {rank_key} is not")),
            (Some(rank), Some(world_size)) => {
                if world_size == 0 || rank >= world_size {
                    return Err(format!(
                        "{rank_key}={rank} must be below {size_key}={world_size}"
                    ));
                }
                info = RankInfo {
                    launcher,
                    rank,
                    world_size,
                    local_rank: number(get, local_key)?.unwrap_or(0),
                    master: None,
                };
                break;
            }
        }
    }
    let port_of = |key: &'static str| -> Result<Option<u16>, String> {
        get(key)
            .map(|port| {
                port.trim()
                    .parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| format!("{key}: expected a port 1-65535, got `{port}`"))
            })
            .transpose()
    };
    let agent_store = info.launcher == Launcher::Torchrun
        && get("TORCHELASTIC_USE_AGENT_STORE").as_deref() == Some("True");
    let port = match (
        port_of("BUBBLELAB_RENDEZVOUS_PORT")?,
        port_of("MASTER_PORT")?,
    ) {
        (Some(p), _) => Some((p, "BUBBLELAB_RENDEZVOUS_PORT")),
        (None, Some(p)) if agent_store => Some((
            p.checked_add(1).ok_or(
                "MASTER_PORT: 65535 leaves no port above it for the rendezvous (torchrun's \
                 agent store holds MASTER_PORT); set BUBBLELAB_RENDEZVOUS_PORT",
            )?,
            "MASTER_PORT + 1",
        )),
        (None, Some(p)) => Some((p, "MASTER_PORT")),
        (None, None) => None,
    };
    let addr = match get("MASTER_ADDR") {
        Some(addr) => Some((addr.trim().to_string(), "MASTER_ADDR")),
        None if info.launcher == Launcher::Slurm => {
            match get("SLURM_JOB_NODELIST").or_else(|| get("SLURM_NODELIST")) {
                Some(list) => Some((
                    first_slurm_host(&list).map_err(|e| format!("SLURM_JOB_NODELIST: {e}"))?,
                    "SLURM_JOB_NODELIST",
                )),
                None => None,
            }
        }
        None => None,
    };
    info.master = match (addr, port) {
        (Some((addr, addr_from)), Some((port, port_from))) => Some(Master {
            addr,
            port,
            addr_from,
            port_from,
        }),
        (Some((_, "MASTER_ADDR")), None) => {
            return Err("MASTER_ADDR is set but MASTER_PORT is not".into())
        }
        _ => None,
    };
    Ok(info)
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
        assert_eq!(
            r.master,
            Some(Master {
                addr: "10.0.0.1".into(),
                port: 29500,
                addr_from: "MASTER_ADDR",
                port_from: "MASTER_PORT"
            })
        );
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

    #[test]
    fn slurm_master_from_the_node_list() {
        let r = with(&[
            ("SLURM_PROCID", "2"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_LOCALID", "2"),
            ("SLURM_JOB_NODELIST", "gpu[07-09,12],login1"),
            ("MASTER_PORT", "29500"),
        ])
        .unwrap();
        let m = r.master().unwrap();
        assert_eq!((m.addr.as_str(), m.port), ("gpu07", 29500));
        assert_eq!(m.addr_from, "SLURM_JOB_NODELIST");
        // MASTER_ADDR wins over the node list.
        let r = with(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_JOB_NODELIST", "gpu[07-09]"),
            ("MASTER_ADDR", "10.1.2.3"),
            ("MASTER_PORT", "29500"),
        ])
        .unwrap();
        assert_eq!(r.master().unwrap().addr, "10.1.2.3");
        // No port: the message says what to export.
        let r = with(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_JOB_NODELIST", "gpu[07-09]"),
        ])
        .unwrap();
        let e = r.master().unwrap_err();
        assert!(e.contains("export MASTER_PORT"), "{e}");
        assert!(with(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_JOB_NODELIST", "gpu[07-"),
            ("MASTER_PORT", "1"),
        ])
        .unwrap_err()
        .starts_with("SLURM_JOB_NODELIST: "));
    }

    #[test]
    fn open_mpi_needs_an_address() {
        let r = with(&[("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "4")]).unwrap();
        assert!(r.master().unwrap_err().contains("-x MASTER_ADDR="));
        // The node list is Slurm's: Open MPI does not read it.
        let r = with(&[
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("SLURM_JOB_NODELIST", "gpu1"),
            ("MASTER_PORT", "29500"),
        ])
        .unwrap();
        assert!(r.master.is_none());
    }

    #[test]
    fn first_host_of_slurm_lists() {
        assert_eq!(first_slurm_host("node1").unwrap(), "node1");
        assert_eq!(first_slurm_host("node1,node2").unwrap(), "node1");
        assert_eq!(first_slurm_host("gpu[007-010]").unwrap(), "gpu007");
        assert_eq!(first_slurm_host("rack[1-2]-n[01-04]").unwrap(), "rack1-n01");
        assert_eq!(first_slurm_host("gpu[3,5-6]x,y").unwrap(), "gpu3x");
        for bad in ["", "gpu[", "gpu[]", "gpu[a-b]", ",gpu1"] {
            assert!(first_slurm_host(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn torchrun_agent_store_moves_the_port() {
        let base = [
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "h"),
            ("MASTER_PORT", "29500"),
        ];
        let m = |extra: &[(&str, &str)]| {
            let mut v = base.to_vec();
            v.extend_from_slice(extra);
            with(&v).map(|r| r.master.map(|m| (m.port, m.port_from)))
        };
        assert_eq!(m(&[]), Ok(Some((29500, "MASTER_PORT"))));
        assert_eq!(
            m(&[("TORCHELASTIC_USE_AGENT_STORE", "True")]),
            Ok(Some((29501, "MASTER_PORT + 1")))
        );
        assert_eq!(
            m(&[("TORCHELASTIC_USE_AGENT_STORE", "False")]),
            Ok(Some((29500, "MASTER_PORT")))
        );
        assert_eq!(
            m(&[
                ("TORCHELASTIC_USE_AGENT_STORE", "True"),
                ("BUBBLELAB_RENDEZVOUS_PORT", "31000")
            ]),
            Ok(Some((31000, "BUBBLELAB_RENDEZVOUS_PORT")))
        );
        assert!(with(&[
            ("RANK", "0"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "h"),
            ("MASTER_PORT", "65535"),
            ("TORCHELASTIC_USE_AGENT_STORE", "True"),
        ])
        .unwrap_err()
        .contains("BUBBLELAB_RENDEZVOUS_PORT"));
        // Slurm: the rendezvous port alone is enough.
        let r = with(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_JOB_NODELIST", "gpu1"),
            ("BUBBLELAB_RENDEZVOUS_PORT", "31000"),
        ])
        .unwrap();
        assert_eq!(r.master().unwrap().port, 31000);
    }
}
