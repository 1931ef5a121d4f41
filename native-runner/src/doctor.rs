//! `bubblelab doctor`: what this machine offers the GPU commands.

use clap::Args;

use crate::error::Failure;
use crate::exec::cuda::{probe, CudaProbe};

/// Arguments of `bubblelab doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Under a launcher (world size > 1 in the environment): how long this rank waits for the
    /// others at MASTER_ADDR:MASTER_PORT before it gives up, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    rendezvous_timeout_s: f64,
}

/// Prints the CUDA driver version, devices, NCCL and cuBLAS availability and what each GPU
/// command will do; one line and exit 0 without CUDA. Under a launcher, then meets the other
/// ranks (`dist::doctor`).
///
/// # Errors
/// A closed stdout; under a launcher, a bad environment or a failed rendezvous.
pub fn doctor(args: &DoctorArgs) -> Result<(), Failure> {
    let timeout = crate::dist::timeout_from_s(args.rendezvous_timeout_s)?;
    let text = match probe() {
        Err(e) => format!(
            "{e}: GPU commands (calibrate/validate --device cuda) will refuse to run; --device cpu works.\n"
        ),
        Ok(p) => {
            let mut t = format!("CUDA driver {}\n", p.driver_version);
            for d in &p.devices {
                t.push_str(&format!(
                    "device {}: {}, {:.1} GiB, {} SMs, compute capability {}.{}\n",
                    d.ordinal,
                    d.name,
                    d.memory_bytes as f64 / (1u64 << 30) as f64,
                    d.sm_count,
                    d.compute_capability.0,
                    d.compute_capability.1
                ));
            }
            if p.devices.is_empty() {
                t.push_str("no device: GPU commands will refuse to run\n");
            }
            let found = |present: bool| if present { "loadable" } else { "not found" };
            t.push_str(&format!(
                "cuBLAS: {}; NVRTC: {}; NCCL: {}\n",
                found(p.cublas),
                found(p.nvrtc),
                found(p.nccl)
            ));
            t.push_str(&cuda_commands(&p));
            t
        }
    };
    crate::files::write_stdout(&text)?;
    crate::dist::doctor(timeout)
}

/// What `calibrate` and `validate --device cuda` will do on this machine.
fn cuda_commands(p: &CudaProbe) -> String {
    let missing: Vec<&str> = [
        (p.devices.is_empty(), "a device"),
        (!p.cublas, "cuBLAS"),
        (!p.nvrtc, "NVRTC"),
    ]
    .iter()
    .filter(|(m, _)| *m)
    .map(|(_, what)| *what)
    .collect();
    if missing.is_empty() {
        let emulated = if p.devices.len() > 1 {
            format!(
                "emulated on device 0 by copy-engine transfers (no NCCL yet, although {} devices are here)",
                p.devices.len()
            )
        } else {
            "emulated by copy-engine transfers".to_string()
        };
        format!(
            "calibrate --device cuda, validate --device cuda: run the CUDA executor on device 0 (cuBLAS GEMMs, NVRTC kernels, one stream per plan stream; collectives {emulated})\n"
        )
    } else {
        format!(
            "calibrate --device cuda, validate --device cuda: refuse (missing {}); --device cpu runs the CPU executor\n",
            missing.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::cuda::DeviceInfo;

    fn probe_with(devices: usize, cublas: bool, nvrtc: bool) -> CudaProbe {
        CudaProbe {
            driver_version: "12.8".into(),
            devices: (0..devices)
                .map(|ordinal| DeviceInfo {
                    ordinal,
                    name: "NVIDIA H200".into(),
                    memory_bytes: 141 << 30,
                    sm_count: 132,
                    compute_capability: (9, 0),
                })
                .collect(),
            nccl: true,
            cublas,
            nvrtc,
        }
    }

    #[test]
    fn gpu_commands_run_only_with_a_device_cublas_and_nvrtc() {
        let one = cuda_commands(&probe_with(1, true, true));
        assert!(one.contains("run the CUDA executor on device 0"), "{one}");
        assert!(one.contains("emulated by copy-engine transfers"), "{one}");
        let eight = cuda_commands(&probe_with(8, true, true));
        assert!(eight.contains("no NCCL yet, although 8 devices"), "{eight}");
        let none = cuda_commands(&probe_with(0, false, true));
        assert!(none.contains("refuse (missing a device, cuBLAS)"), "{none}");
        let no_nvrtc = cuda_commands(&probe_with(1, true, false));
        assert!(no_nvrtc.contains("refuse (missing NVRTC)"), "{no_nvrtc}");
    }
}
