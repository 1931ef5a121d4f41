//! `bubblelab doctor`: what this machine offers the GPU commands.

use clap::Args;

use crate::error::Failure;
use crate::exec::cuda::probe;

/// Arguments of `bubblelab doctor` (none).
#[derive(Debug, Args)]
pub struct DoctorArgs {}

/// Prints the CUDA driver version, devices, NCCL and cuBLAS availability and what each GPU
/// command will do; one line and exit 0 without CUDA.
///
/// # Errors
/// Only a closed stdout.
pub fn doctor(_args: &DoctorArgs) -> Result<(), Failure> {
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
            t.push_str(&format!(
                "cuBLAS: {}; NCCL: {}\n",
                if p.cublas { "loadable" } else { "not found" },
                if p.nccl { "loadable" } else { "not found" }
            ));
            t.push_str("calibrate --device cuda, validate --device cuda: refuse (this build has no CUDA executor yet); --device cpu runs the CPU executor\n");
            t
        }
    };
    crate::files::write_stdout(&text)
}
