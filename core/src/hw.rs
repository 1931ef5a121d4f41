//! Hardware profiles: GPUs, the links between them, how they are put together in a node, and a
//! calibrated profile that replaces the analytical numbers with measured curves.
//!
//! Every constant below is a public figure (vendor datasheet) or a figure from a public model
//! (NCCL's own tuning model, Calculon), cited in its doc comment. `docs/MODEL.md` ("Hardware and
//! cost models") collects them in one table.
//!
//! Units are in the names: `*_flops_per_s` (FLOP/s), `*_bytes_per_s` (bytes/s, 1 GB/s =
//! 10^9 bytes/s), `*_bytes` (bytes), `*_ns` (nanoseconds).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::cost::{CollectiveKind, Dtype};
use crate::scenario::ScenarioError;

/// One GPU model's headline numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuProfile {
    /// Display name, e.g. `H100 SXM`.
    pub name: String,
    /// Dense (no sparsity) BF16 tensor-core peak, FLOP/s.
    pub peak_bf16_flops_per_s: f64,
    /// Dense FP16 tensor-core peak, FLOP/s.
    pub peak_fp16_flops_per_s: f64,
    /// FP32 peak on the CUDA cores (not TF32 tensor cores), FLOP/s.
    pub peak_fp32_flops_per_s: f64,
    /// HBM capacity, bytes (datasheet gigabytes, 10^9 bytes each).
    pub hbm_bytes: u64,
    /// HBM bandwidth, bytes/s.
    pub hbm_bytes_per_s: f64,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Time added to every kernel (compute or collective) for its launch, ns.
    ///
    /// Our model: a few microseconds per host launch is the order NVIDIA's "Getting Started with
    /// CUDA Graphs" (NVIDIA Technical Blog, 2019) measures for back-to-back short kernels; we
    /// use 4 µs on every GPU. A calibrated profile may not change it (its curves are device
    /// times; the launch is added on top).
    pub launch_overhead_ns: f64,
}

impl GpuProfile {
    /// Peak FLOP/s for `dtype`: the dense tensor-core peak for BF16/FP16, the CUDA-core peak for
    /// FP32.
    #[must_use]
    pub fn peak_flops_per_s(&self, dtype: Dtype) -> f64 {
        match dtype {
            Dtype::Bf16 => self.peak_bf16_flops_per_s,
            Dtype::Fp16 => self.peak_fp16_flops_per_s,
            Dtype::Fp32 => self.peak_fp32_flops_per_s,
        }
    }
}

/// Kernel launch overhead used by every built-in GPU profile, ns (see
/// [`GpuProfile::launch_overhead_ns`]).
pub const LAUNCH_OVERHEAD_NS: f64 = 4_000.0;

crate::kinds! {
    /// The built-in GPUs.
    pub enum GpuKind as "GPU" {
        /// NVIDIA A100 80GB SXM4.
        A100 = "a100", "A100 80GB SXM";
        /// NVIDIA H100 SXM5 (80 GB HBM3).
        H100 = "h100", "H100 SXM";
        /// NVIDIA H200 SXM (141 GB HBM3e).
        H200 = "h200", "H200 SXM";
    }
}

impl GpuKind {
    /// The GPU's datasheet numbers.
    ///
    /// Sources:
    /// - A100 80GB SXM: NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOP/s dense
    ///   BF16/FP16, 19.5 TFLOP/s FP32, 80 GB HBM2e at 2,039 GB/s; 108 SMs (NVIDIA A100 Tensor
    ///   Core GPU Architecture whitepaper, 2020).
    /// - H100 SXM: NVIDIA H100 Tensor Core GPU datasheet (2023): 989 TFLOP/s dense BF16/FP16
    ///   (1,979 with sparsity), 67 TFLOP/s FP32, 80 GB HBM3 at 3.35 TB/s; 132 SMs (NVIDIA H100
    ///   Tensor Core GPU Architecture whitepaper, 2022).
    /// - H200 SXM: NVIDIA H200 datasheet (2024): the H100's compute (989 TFLOP/s dense BF16,
    ///   67 TFLOP/s FP32, 132 SMs) with 141 GB HBM3e at 4.8 TB/s.
    #[must_use]
    pub fn profile(self) -> GpuProfile {
        let (name, bf16, fp32, hbm_gb, hbm_bytes_per_s, sm_count) = match self {
            GpuKind::A100 => ("A100 80GB SXM", 312e12, 19.5e12, 80, 2.039e12, 108),
            GpuKind::H100 => ("H100 SXM", 989e12, 67e12, 80, 3.35e12, 132),
            GpuKind::H200 => ("H200 SXM", 989e12, 67e12, 141, 4.8e12, 132),
        };
        GpuProfile {
            name: name.into(),
            peak_bf16_flops_per_s: bf16,
            peak_fp16_flops_per_s: bf16,
            peak_fp32_flops_per_s: fp32,
            hbm_bytes: hbm_gb * 1_000_000_000,
            hbm_bytes_per_s,
            sm_count,
            launch_overhead_ns: LAUNCH_OVERHEAD_NS,
        }
    }

    /// This GPU's NVLink generation.
    #[must_use]
    pub fn nvlink(self) -> LinkKind {
        match self {
            GpuKind::A100 => LinkKind::NvlinkA100,
            GpuKind::H100 | GpuKind::H200 => LinkKind::NvlinkH100,
        }
    }
}

/// One link type as one GPU sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkProfile {
    /// Display name, e.g. `NVLink 4 (H100)`.
    pub name: String,
    /// Line rate per direction per GPU, bytes/s.
    pub bytes_per_s: f64,
    /// Latency of one step of a ring collective (one hop to the next rank), ns. For the built-in
    /// links this is NCCL's own per-step latency for the ring algorithm and Simple protocol
    /// (`hwLat` in NCCL `src/graph/tuning.cc`).
    pub latency_ns: f64,
    /// Fraction by which compute on the same GPU slows while a collective over this link runs
    /// (collective kernels occupy SMs and HBM bandwidth). Calculon (Isaev et al., SC'23; its
    /// system files `a100_80g.json`, `h100_80g_nvl8.json`, field `processor_usage`) charges
    /// 0.15 for NVLink and 0.02 for InfiniBand.
    pub compute_slowdown: f64,
    /// Share of [`bytes_per_s`](Self::bytes_per_s) that reducing and gathering collectives
    /// (AllReduce, ReduceScatter, AllGather, AllToAll) reach as bus bandwidth for large
    /// messages. Calculon's system files give NVLink `"efficiency": 0.6` and InfiniBand `0.9`.
    pub collective_efficiency: f64,
    /// Share of [`bytes_per_s`](Self::bytes_per_s) that a point-to-point send/receive reaches
    /// for large messages. NVLink: NCCL models SM80 NVLink at 20 GB/s per 25 GB/s link (0.8;
    /// `SM80_NVLINK_BW` in NCCL `src/graph/topo.h`), and its maintainer puts the NVLink protocol
    /// overhead at ~20 % ("450 GB/s is the line rate … NCCL can get an effective NVLink
    /// bandwidth of 370 GB/s", NVIDIA/nccl-tests issue #212). Network links: Calculon's 0.9.
    pub p2p_efficiency: f64,
}

crate::kinds! {
    /// The built-in links.
    pub enum LinkKind as "link" {
        /// NVLink 3 through NVSwitch, as on DGX/HGX A100: 12 links × 25 GB/s per direction.
        NvlinkA100 = "nvlink-a100", "NVLink 3 (A100), 300 GB/s per direction";
        /// NVLink 4 through NVSwitch, as on DGX/HGX H100 and H200: 18 links × 25 GB/s per direction.
        NvlinkH100 = "nvlink-h100", "NVLink 4 (H100/H200), 450 GB/s per direction";
        /// InfiniBand HDR, one 200 Gb/s NIC per GPU (DGX A100).
        InfinibandHdr = "infiniband-hdr", "InfiniBand HDR, 25 GB/s per GPU";
        /// InfiniBand NDR, one 400 Gb/s NIC per GPU (DGX H100/H200).
        InfinibandNdr = "infiniband-ndr", "InfiniBand NDR, 50 GB/s per GPU";
        /// PCIe 4.0 x16.
        Pcie4 = "pcie4", "PCIe 4.0 x16, 31.5 GB/s";
        /// PCIe 5.0 x16.
        Pcie5 = "pcie5", "PCIe 5.0 x16, 63 GB/s";
    }
}

/// NCCL's per-step ring latency over NVLink, Simple protocol, ns (`hwLat[NVLINK][RING][SIMPLE]
/// = 3.4` µs, NCCL `src/graph/tuning.cc`).
pub const NCCL_NVLINK_STEP_NS: f64 = 3_400.0;
/// NCCL's per-step ring latency over PCIe, Simple protocol, ns (`hwLat[PCI][RING][SIMPLE] = 5.7`
/// µs, NCCL `src/graph/tuning.cc`).
pub const NCCL_PCI_STEP_NS: f64 = 5_700.0;
/// NCCL's per-step ring latency over the network, Simple protocol, ns (`hwLat[NET][RING][SIMPLE]
/// = 14` µs, NCCL `src/graph/tuning.cc`).
pub const NCCL_NET_STEP_NS: f64 = 14_000.0;

impl LinkKind {
    /// The link's numbers.
    ///
    /// Bandwidth per direction per GPU:
    /// - NVLink A100: 600 GB/s bidirectional per GPU (NVIDIA A100 datasheet) → 300 GB/s.
    /// - NVLink H100/H200: 900 GB/s bidirectional per GPU (NVIDIA H100 datasheet) → 450 GB/s.
    /// - InfiniBand HDR: 200 Gb/s per port (NVIDIA ConnectX-6 / DGX A100 user guide: eight
    ///   200 Gb/s NICs, one per GPU) → 25 GB/s.
    /// - InfiniBand NDR: 400 Gb/s per port (NVIDIA ConnectX-7 / DGX H100 user guide: eight
    ///   400 Gb/s NICs, one per GPU) → 50 GB/s.
    /// - PCIe 4.0 x16: 16 GT/s × 16 lanes × 128/130 encoding ≈ 31.5 GB/s (PCI-SIG); PCIe 5.0
    ///   x16: 32 GT/s → ≈ 63 GB/s.
    ///
    /// Latency per ring step: NCCL's `hwLat` for the ring algorithm, Simple protocol
    /// ([`NCCL_NVLINK_STEP_NS`], [`NCCL_NET_STEP_NS`], [`NCCL_PCI_STEP_NS`]).
    ///
    /// Compute slowdown and efficiencies: see the fields of [`LinkProfile`]. PCIe has no public
    /// Calculon figure: our model reuses the NVLink efficiencies (NCCL drives both with the same
    /// SM copy loops) and the InfiniBand slowdown, because a collective's SM and HBM load scales
    /// with the bytes/s it moves and PCIe moves InfiniBand-like rates.
    #[must_use]
    pub fn profile(self) -> LinkProfile {
        let (
            name,
            bytes_per_s,
            latency_ns,
            compute_slowdown,
            collective_efficiency,
            p2p_efficiency,
        ) = match self {
            LinkKind::NvlinkA100 => (
                "NVLink 3 (A100)",
                300e9,
                NCCL_NVLINK_STEP_NS,
                0.15,
                0.6,
                0.8,
            ),
            LinkKind::NvlinkH100 => (
                "NVLink 4 (H100/H200)",
                450e9,
                NCCL_NVLINK_STEP_NS,
                0.15,
                0.6,
                370.0 / 450.0,
            ),
            LinkKind::InfinibandHdr => ("InfiniBand HDR", 25e9, NCCL_NET_STEP_NS, 0.02, 0.9, 0.9),
            LinkKind::InfinibandNdr => ("InfiniBand NDR", 50e9, NCCL_NET_STEP_NS, 0.02, 0.9, 0.9),
            LinkKind::Pcie4 => ("PCIe 4.0 x16", 31.5e9, NCCL_PCI_STEP_NS, 0.02, 0.6, 0.8),
            LinkKind::Pcie5 => ("PCIe 5.0 x16", 63e9, NCCL_PCI_STEP_NS, 0.02, 0.6, 0.8),
        };
        LinkProfile {
            name: name.into(),
            bytes_per_s,
            latency_ns,
            compute_slowdown,
            collective_efficiency,
            p2p_efficiency,
        }
    }
}

/// GPUs per node and the two link levels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// GPUs in one node (all connected by `intra`).
    pub gpus_per_node: u32,
    /// The link between GPUs of one node.
    pub intra: LinkProfile,
    /// The link between nodes, per GPU (one NIC per GPU).
    pub inter: LinkProfile,
}

impl Topology {
    /// A DGX-style node of this GPU: 8 GPUs on the GPU's NVLink/NVSwitch, one InfiniBand NIC per
    /// GPU (HDR on A100, NDR on H100/H200), as in the DGX A100 and DGX H100 user guides.
    #[must_use]
    pub fn dgx(gpu: GpuKind) -> Topology {
        let inter = match gpu {
            GpuKind::A100 => LinkKind::InfinibandHdr,
            GpuKind::H100 | GpuKind::H200 => LinkKind::InfinibandNdr,
        };
        Topology {
            gpus_per_node: 8,
            intra: gpu.nvlink().profile(),
            inter: inter.profile(),
        }
    }
}

/// The calibrated-profile format version this build reads.
pub const CALIBRATION_VERSION: u32 = 1;

/// Most points one calibrated curve may hold (the format is meant for a few dozen).
pub const MAX_CALIBRATION_POINTS: usize = 4096;

/// Measured curves that replace the analytical numbers of a [`crate::cost::CostModel`].
///
/// Written by the GPU runner, read by the page and the CLI. JSON shape (every list optional):
///
/// ```json
/// {"version": 1, "device": "NVIDIA H100 80GB HBM3",
///  "gemm": [{"dtype": "bf16", "flops": 2.1e9, "flops_per_s": 4.1e14}],
///  "memory": [{"bytes": 1.0e6, "bytes_per_s": 1.2e12}],
///  "collectives": [{"kind": "all-reduce", "ranks": 8, "ranks_per_node": 8,
///                   "points": [{"bytes": 1048576, "bus_bytes_per_s": 4.0e10}]}]}
/// ```
///
/// Each curve is a list of measured (size, rate) points in increasing size. The cost model turns
/// each point into a time and interpolates time linearly in size between points (our model:
/// piecewise-linear time keeps time monotone in size whenever the points are, which
/// [`Calibration::validate`] checks); below the first point the first rate applies (GEMM,
/// memory) or the first time (collectives: a smaller message is never charged less than the
/// smallest measured one); above the last point the last rate applies to the extra size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Format version; must be [`CALIBRATION_VERSION`].
    pub version: u32,
    /// The measured device as the runner saw it (free text).
    pub device: String,
    /// Achieved GEMM throughput by GEMM size, per dtype.
    #[serde(default)]
    pub gemm: Vec<GemmPoint>,
    /// Achieved HBM bandwidth of memory-bound kernels by bytes moved.
    #[serde(default)]
    pub memory: Vec<MemoryPoint>,
    /// Measured collective bus bandwidth by message size, per (kind, ranks, ranks per node).
    #[serde(default)]
    pub collectives: Vec<CollectiveCurve>,
    /// Measured launch (dispatch) overhead of one kernel, ns; replaces
    /// [`GpuProfile::launch_overhead_ns`] when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_overhead_ns: Option<f64>,
    /// Measured fraction by which compute slows while a collective runs beside it on the
    /// device (time with / time alone − 1); replaces the links' `compute_slowdown`
    /// (Calculon's `processor_usage`, [`LinkProfile::compute_slowdown`]) when present. The CPU
    /// runner measures its GEMM beside its collective emulation (a copy on another thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm_compute_slowdown: Option<f64>,
    /// Measured fraction by which one GEMM slows for each other processor of the device running
    /// a GEMM at the same time (the CPU's cores sharing caches, memory bandwidth and clock):
    /// the contention of [`crate::engine::Processors`] when streams take turns on the device's
    /// processors. Absent for devices whose streams do not share processors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_compute_slowdown: Option<f64>,
}

/// One measured GEMM: its FLOPs and the throughput it reached.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GemmPoint {
    /// Data type of the GEMM.
    pub dtype: Dtype,
    /// FLOPs of the GEMM (2·m·n·k).
    pub flops: f64,
    /// Achieved FLOP/s (FLOPs / kernel time).
    pub flops_per_s: f64,
}

/// One measured memory-bound kernel: bytes moved and the bandwidth reached.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryPoint {
    /// Bytes read plus written.
    pub bytes: f64,
    /// Achieved bytes/s.
    pub bytes_per_s: f64,
}

/// A measured collective curve for one group shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveCurve {
    /// Which collective.
    pub kind: CollectiveKind,
    /// Ranks in the group.
    pub ranks: u32,
    /// Ranks of the group per node.
    pub ranks_per_node: u32,
    /// Measured points in increasing message size.
    pub points: Vec<BusBwPoint>,
}

/// One measured collective: message size and bus bandwidth (NCCL-tests convention).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BusBwPoint {
    /// Message size, bytes (NCCL-tests convention: AllGather counts the output, the others the
    /// input of one rank).
    pub bytes: f64,
    /// Bus bandwidth, bytes/s (NCCL-tests `busbw`).
    pub bus_bytes_per_s: f64,
}

impl Calibration {
    /// Parses and validates a calibrated profile.
    ///
    /// # Errors
    /// [`ScenarioError::Syntax`] for text that is not JSON; [`ScenarioError::Field`] naming the
    /// field path (`calibration.collectives[0].points[3].bytes`) for anything else.
    pub fn from_json(text: &str) -> Result<Calibration, ScenarioError> {
        let calibration: Calibration = crate::scenario::document_from_json(text, |path| {
            if path == "." {
                String::from("calibration")
            } else {
                format!("calibration.{path}")
            }
        })?;
        calibration.validate()?;
        Ok(calibration)
    }

    /// Checks the version, that every number is finite and positive, that sizes increase
    /// within each curve and that the implied time never decreases with size.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the first bad field.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if let Some(l) = self.launch_overhead_ns {
            if !l.is_finite() || l < 0.0 {
                return Err(ScenarioError::field(
                    "calibration.launch_overhead_ns",
                    format!("must be a finite number of ns ≥ 0, got {l}"),
                ));
            }
        }
        for (field, value) in [
            ("comm_compute_slowdown", self.comm_compute_slowdown),
            ("parallel_compute_slowdown", self.parallel_compute_slowdown),
        ] {
            if let Some(s) = value {
                if !(s.is_finite() && (0.0..=10.0).contains(&s)) {
                    return Err(ScenarioError::field(
                        format!("calibration.{field}"),
                        format!("must be a fraction in [0, 10] (0.15 = 15 % slower), got {s}"),
                    ));
                }
            }
        }
        if self.version != CALIBRATION_VERSION {
            return Err(ScenarioError::field(
                "calibration.version",
                format!(
                    "this build reads version {CALIBRATION_VERSION}, got {}",
                    self.version
                ),
            ));
        }
        for dtype in [Dtype::Bf16, Dtype::Fp16, Dtype::Fp32] {
            let points: Vec<(usize, f64, f64)> = self
                .gemm
                .iter()
                .enumerate()
                .filter(|(_, p)| p.dtype == dtype)
                .map(|(i, p)| (i, p.flops, p.flops_per_s))
                .collect();
            check_curve(&points, "gemm", "flops", "flops_per_s", |x, r| x / r)?;
        }
        let points: Vec<(usize, f64, f64)> = self
            .memory
            .iter()
            .enumerate()
            .map(|(i, p)| (i, p.bytes, p.bytes_per_s))
            .collect();
        check_curve(&points, "memory", "bytes", "bytes_per_s", |x, r| x / r)?;
        for (c, curve) in self.collectives.iter().enumerate() {
            let at = format!("collectives[{c}]");
            if curve.ranks < 2 {
                return Err(ScenarioError::field(
                    format!("calibration.{at}.ranks"),
                    format!("must be at least 2, got {}", curve.ranks),
                ));
            }
            if curve.ranks_per_node == 0 || curve.ranks_per_node > curve.ranks {
                return Err(ScenarioError::field(
                    format!("calibration.{at}.ranks_per_node"),
                    format!(
                        "must be between 1 and ranks ({}), got {}",
                        curve.ranks, curve.ranks_per_node
                    ),
                ));
            }
            if curve.points.is_empty() {
                return Err(ScenarioError::field(
                    format!("calibration.{at}.points"),
                    "must hold at least one point",
                ));
            }
            let points: Vec<(usize, f64, f64)> = curve
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (i, p.bytes, p.bus_bytes_per_s))
                .collect();
            check_curve(
                &points,
                &format!("{at}.points"),
                "bytes",
                "bus_bytes_per_s",
                |x, r| x / r,
            )?;
            if let Some(first) = self.collectives[..c].iter().position(|o| {
                o.kind == curve.kind
                    && o.ranks == curve.ranks
                    && o.ranks_per_node == curve.ranks_per_node
            }) {
                return Err(ScenarioError::field(
                    format!("calibration.{at}"),
                    format!("repeats the group of collectives[{first}]"),
                ));
            }
        }
        Ok(())
    }

    /// The measured curve for this collective and group shape, if the profile has one.
    #[must_use]
    pub fn collective_curve(
        &self,
        kind: CollectiveKind,
        ranks: u32,
        ranks_per_node: u32,
    ) -> Option<&CollectiveCurve> {
        self.collectives
            .iter()
            .find(|c| c.kind == kind && c.ranks == ranks && c.ranks_per_node == ranks_per_node)
    }
}

/// Checks one curve given as (index in its list, size, rate).
fn check_curve(
    points: &[(usize, f64, f64)],
    list: &str,
    size_name: &str,
    rate_name: &str,
    time: impl Fn(f64, f64) -> f64,
) -> Result<(), ScenarioError> {
    if points.len() > MAX_CALIBRATION_POINTS {
        return Err(ScenarioError::field(
            format!("calibration.{list}"),
            format!(
                "holds {} points, at most {MAX_CALIBRATION_POINTS} are read",
                points.len()
            ),
        ));
    }
    let mut previous: Option<(f64, f64)> = None;
    for &(i, size, rate) in points {
        let at = |field: &str| format!("calibration.{list}[{i}].{field}");
        if !(size.is_finite() && size > 0.0) {
            return Err(ScenarioError::field(
                at(size_name),
                format!("must be a positive finite number, got {size}"),
            ));
        }
        if !(rate.is_finite() && rate > 0.0) {
            return Err(ScenarioError::field(
                at(rate_name),
                format!("must be a positive finite number, got {rate}"),
            ));
        }
        let t = time(size, rate);
        if let Some((prev_size, prev_t)) = previous {
            if size <= prev_size {
                return Err(ScenarioError::field(
                    at(size_name),
                    format!("sizes must increase along the curve: {size} after {prev_size}"),
                ));
            }
            // Equal times written as size/rate pairs may come back one ulp apart: a relative
            // 1e-12 is rounding, not a shorter time.
            if t < prev_t * (1.0 - 1e-12) {
                return Err(ScenarioError::field(
                    at(rate_name),
                    format!("implies a shorter time ({t:.3e} s) than the smaller point before it ({prev_t:.3e} s)"),
                ));
            }
        }
        previous = Some((size, t));
    }
    Ok(())
}
