//! Cost models: how long a compute kernel or a collective takes on a [`crate::hw`] profile, and
//! how much a running collective slows compute on the same GPU.
//!
//! - Compute: a roofline of a size-dependent FLOP efficiency and a size-dependent HBM
//!   efficiency, plus the kernel launch ([`CostModel::compute_ns`]).
//! - Collectives: the alpha-beta model with NCCL's own latencies and Calculon's bandwidth
//!   efficiencies, ring within a node and hierarchical across nodes
//!   ([`CostModel::collective_ns`]).
//! - Contention: Calculon's processor usage of the link a collective uses
//!   ([`CostModel::compute_slowdown`]).
//!
//! Every formula names its source in its doc comment; `docs/MODEL.md` ("Hardware and cost
//! models") has the same formulas with the measured-vs-model table of
//! `core/tests/vidur_fit.rs`.
//!
//! All times are `f64` nanoseconds; the engine rounds them once (`crate::units`). Inputs that are
//! negative, zero or not finite count as zero work (zero time): callers validate their inputs.

pub mod vidur;

use serde::{Deserialize, Serialize};

use crate::hw::{Calibration, GpuKind, GpuProfile, LinkProfile, Topology};

crate::kinds! {
    /// Element data type of a kernel.
    pub enum Dtype as "dtype" {
        /// bfloat16.
        Bf16 = "bf16";
        /// IEEE half precision.
        Fp16 = "fp16";
        /// IEEE single precision.
        Fp32 = "fp32";
    }
}

impl Dtype {
    /// Bytes per element.
    #[must_use]
    pub fn bytes(self) -> u32 {
        match self {
            Dtype::Bf16 | Dtype::Fp16 => 2,
            Dtype::Fp32 => 4,
        }
    }
}

/// What bounds a compute kernel, and so which efficiency curve applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComputeKind {
    /// A matrix multiplication on the tensor cores.
    Gemm,
    /// Fused attention (FlashAttention-style) on the tensor cores.
    Attention,
    /// Norms, softmax, pointwise ops: HBM-bound, FLOPs on the CUDA cores.
    MemoryBound,
}

/// The work of one compute kernel.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComputeWork {
    /// Which efficiency curve applies.
    pub kind: ComputeKind,
    /// Floating-point operations (a multiply-add counts 2).
    pub flops: f64,
    /// Bytes read from and written to HBM.
    pub bytes: f64,
}

crate::kinds! {
    /// A collective communication operation (NCCL's names).
    pub enum CollectiveKind as "collective" {
        /// Every rank ends with the sum of every rank's buffer.
        AllReduce = "all-reduce";
        /// Every rank ends with the concatenation of every rank's shard.
        AllGather = "all-gather";
        /// Every rank ends with its shard of the sum.
        ReduceScatter = "reduce-scatter";
        /// Every rank sends a distinct shard to every other rank.
        AllToAll = "all-to-all";
        /// One rank sends a buffer to one other rank.
        SendRecv = "send-recv";
    }
}

impl CollectiveKind {
    /// Latency steps of the ring algorithm on `p` ranks: 2(p−1) for AllReduce (a
    /// reduce-scatter then an all-gather), p−1 for AllGather, ReduceScatter and AllToAll, 1 for
    /// a send/receive (Thakur, Rabenseifner, Gropp, "Optimization of Collective Communication
    /// Operations in MPICH", IJHPCA 2005; `nsteps` in NCCL `src/graph/tuning.cc`).
    #[must_use]
    pub fn ring_steps(self, p: u32) -> f64 {
        let p = f64::from(p.max(1));
        match self {
            CollectiveKind::AllReduce => 2.0 * (p - 1.0),
            CollectiveKind::AllGather
            | CollectiveKind::ReduceScatter
            | CollectiveKind::AllToAll => p - 1.0,
            CollectiveKind::SendRecv => 1.0,
        }
    }

    /// Bytes each rank moves over its link per message byte on `p` ranks, which is also the
    /// NCCL-tests factor from algorithm bandwidth to bus bandwidth: 2(p−1)/p for AllReduce,
    /// (p−1)/p for AllGather, ReduceScatter and AllToAll, 1 for send/receive (NVIDIA
    /// nccl-tests `doc/PERFORMANCE.md`, "Bus bandwidth").
    #[must_use]
    pub fn bus_factor(self, p: u32) -> f64 {
        let p = f64::from(p.max(1));
        match self {
            CollectiveKind::AllReduce => 2.0 * (p - 1.0) / p,
            CollectiveKind::AllGather
            | CollectiveKind::ReduceScatter
            | CollectiveKind::AllToAll => (p - 1.0) / p,
            CollectiveKind::SendRecv => 1.0,
        }
    }
}

/// The ranks a collective runs on. The group spans nodes when `ranks > ranks_per_node`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// Ranks (GPUs) in the group.
    pub ranks: u32,
    /// Ranks of the group on each node (clamped to 1..=ranks by the cost model).
    pub ranks_per_node: u32,
}

impl Group {
    /// A group of `ranks` ranks, `ranks_per_node` of them on each node.
    #[must_use]
    pub fn new(ranks: u32, ranks_per_node: u32) -> Group {
        Group {
            ranks,
            ranks_per_node,
        }
    }

    /// Ranks per node, clamped to 1..=ranks.
    #[must_use]
    pub fn per_node(self) -> u32 {
        self.ranks_per_node.clamp(1, self.ranks.max(1))
    }

    /// Nodes the group spans: ⌈ranks / ranks_per_node⌉.
    #[must_use]
    pub fn nodes(self) -> u32 {
        self.ranks.max(1).div_ceil(self.per_node())
    }

    /// Whether the group crosses the inter-node link.
    #[must_use]
    pub fn spans_nodes(self) -> bool {
        self.nodes() > 1
    }
}

/// NCCL's base latency of one ring collective (Simple protocol), ns: `baseLat[RING][SIMPLE] =
/// 8.4` µs in NCCL `src/graph/tuning.cc`. Added once per collective call, not to send/receive
/// (NCCL's point-to-point path does not use this table).
pub const NCCL_BASE_LATENCY_NS: f64 = 8_400.0;

/// Largest share of peak a large GEMM reaches: 0.95, Calculon's `matrix.gflops_efficiency` for
/// GEMMs of ≥ 128 GFLOP (Calculon system files `a100_80g.json`, `h100_80g_nvl8.json`).
pub const GEMM_EFFICIENCY_MAX: f64 = 0.95;

/// GEMM FLOPs at which the efficiency reaches half of [`GEMM_EFFICIENCY_MAX`]. Derived, not
/// tuned: the saturating curve e(F) = 0.95·F/(F + F½) is put through Calculon's point "0.6 at
/// 1 GFLOP", so F½ = (0.95/0.6 − 1)·10^9 ≈ 0.58 GFLOP; it then gives 0.92 at 16 GFLOP
/// (Calculon: 0.9) and 0.95 at 128 GFLOP (Calculon: 0.95).
pub const GEMM_HALF_EFFICIENCY_FLOPS: f64 = (GEMM_EFFICIENCY_MAX / 0.6 - 1.0) * 1e9;

/// Largest share of peak fused attention reaches: 0.6. FlashAttention-2 (Dao, 2023, abstract)
/// reaches "50-73% of the theoretical maximum FLOPs/s on A100"; our model takes 0.6, inside
/// that range, with the GEMM curve's half-efficiency size.
pub const ATTENTION_EFFICIENCY_MAX: f64 = 0.6;

/// Largest share of HBM bandwidth a memory-bound kernel reaches: 0.9, Calculon's
/// `mem1.MB_efficiency` for ≥ 100 MB (Calculon system files).
pub const MEMORY_EFFICIENCY_MAX: f64 = 0.9;

/// Bytes at which a memory-bound kernel reaches half of [`MEMORY_EFFICIENCY_MAX`]. Derived
/// like [`GEMM_HALF_EFFICIENCY_FLOPS`]: the curve 0.9·B/(B + B½) through Calculon's "0.6 at
/// 1 MB" gives B½ = (0.9/0.6 − 1)·10^6 = 0.5 MB (and 0.86 at 10 MB, Calculon: 0.75).
pub const MEMORY_HALF_EFFICIENCY_BYTES: f64 = (MEMORY_EFFICIENCY_MAX / 0.6 - 1.0) * 1e6;

/// FLOPs of a GEMM C[m×n] = A[m×k]·B[k×n]: 2·m·n·k (a multiply and an add per term).
#[must_use]
pub fn gemm_flops(m: f64, n: f64, k: f64) -> f64 {
    2.0 * m * n * k
}

/// FLOPs of attention's two matrix products, QKᵀ and PV: 2 GEMMs of 2·sq·skv·d each per batch
/// and head, so 4·b·h·sq·skv·d; halved when causal (only the lower triangle is computed). This is
/// the count of the FlashAttention papers (Dao et al. 2022; Dao 2023, §4.1), which leave out the
/// softmax.
#[must_use]
pub fn attention_flops(
    batch: f64,
    heads: f64,
    seq_q: f64,
    seq_kv: f64,
    head_dim: f64,
    causal: bool,
) -> f64 {
    let full = 4.0 * batch * heads * seq_q * seq_kv * head_dim;
    if causal {
        full / 2.0
    } else {
        full
    }
}

/// Zero for negative, NaN or infinite inputs.
fn clean(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        0.0
    }
}

/// Time of `size` units on a measured curve of (size, rate) points, seconds: linear in size
/// between points, the first rate below the first point, the last rate for the part above the
/// last point (see [`Calibration`]). `points` is non-empty and validated.
fn curve_time_s(points: &[(f64, f64)], size: f64) -> f64 {
    let (x0, r0) = points[0];
    if size <= x0 {
        return size / r0;
    }
    for w in points.windows(2) {
        let ((xa, ra), (xb, rb)) = (w[0], w[1]);
        if size <= xb {
            let (ta, tb) = (xa / ra, xb / rb);
            return ta + (tb - ta) * (size - xa) / (xb - xa);
        }
    }
    let (xl, rl) = points[points.len() - 1];
    xl / rl + (size - xl) / rl
}

/// The cost model: a GPU, its node topology, the data type of the math, and optionally a
/// calibrated profile whose measured curves replace the analytical ones.
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// The GPU.
    pub gpu: GpuProfile,
    /// GPUs per node and the links inside and between nodes.
    pub topology: Topology,
    /// Data type of GEMMs and attention (selects the peak).
    pub dtype: Dtype,
    /// Measured curves, if any.
    pub calibration: Option<Calibration>,
}

impl CostModel {
    /// The analytical model of `gpu` in its DGX node ([`Topology::dgx`]), BF16 math.
    #[must_use]
    pub fn new(gpu: GpuKind) -> CostModel {
        CostModel {
            gpu: gpu.profile(),
            topology: Topology::dgx(gpu),
            dtype: Dtype::Bf16,
            calibration: None,
        }
    }

    /// This model with a calibrated profile.
    #[must_use]
    pub fn with_calibration(mut self, calibration: Calibration) -> CostModel {
        if let Some(l) = calibration.launch_overhead_ns {
            self.gpu.launch_overhead_ns = l;
        }
        if let Some(s) = calibration.comm_compute_slowdown {
            self.topology.intra.compute_slowdown = s;
            self.topology.inter.compute_slowdown = s;
        }
        self.calibration = Some(calibration);
        self
    }

    /// Analytical GEMM efficiency (share of the dtype's peak) at `flops`:
    /// e(F) = [`GEMM_EFFICIENCY_MAX`]·F/(F + [`GEMM_HALF_EFFICIENCY_FLOPS`]).
    ///
    /// Source: the saturating (Hockney n½) form through Calculon's GEMM efficiency table (see the
    /// constants). The time F/(peak·e(F)) = (F + F½)/(peak·e_max) grows with F and its
    /// efficiency tends to e_max: small GEMMs are far from peak, large ones close to it.
    #[must_use]
    pub fn gemm_efficiency(&self, flops: f64) -> f64 {
        let f = clean(flops);
        GEMM_EFFICIENCY_MAX * f / (f + GEMM_HALF_EFFICIENCY_FLOPS)
    }

    /// Analytical HBM efficiency (share of `hbm_bytes_per_s`) at `bytes`:
    /// e(B) = [`MEMORY_EFFICIENCY_MAX`]·B/(B + [`MEMORY_HALF_EFFICIENCY_BYTES`]) (Calculon's
    /// memory efficiency table, see the constants).
    #[must_use]
    pub fn memory_efficiency(&self, bytes: f64) -> f64 {
        let b = clean(bytes);
        MEMORY_EFFICIENCY_MAX * b / (b + MEMORY_HALF_EFFICIENCY_BYTES)
    }

    /// Seconds of tensor-core math for `flops` of `kind` (GEMM or attention).
    fn matrix_time_s(&self, kind: ComputeKind, flops: f64) -> f64 {
        let peak = self.gpu.peak_flops_per_s(self.dtype);
        if kind == ComputeKind::Gemm {
            if let Some(points) = self.gemm_curve() {
                return curve_time_s(&points, flops);
            }
        }
        let e_max = if kind == ComputeKind::Attention {
            ATTENTION_EFFICIENCY_MAX
        } else {
            GEMM_EFFICIENCY_MAX
        };
        // F / (peak · e_max · F/(F + F½)) = (F + F½) / (peak · e_max).
        (flops + GEMM_HALF_EFFICIENCY_FLOPS) / (peak * e_max)
    }

    /// Seconds of HBM traffic for `bytes`.
    fn memory_time_s(&self, bytes: f64) -> f64 {
        if bytes <= 0.0 {
            return 0.0;
        }
        if let Some(c) = &self.calibration {
            if !c.memory.is_empty() {
                let points: alloc::vec::Vec<(f64, f64)> =
                    c.memory.iter().map(|p| (p.bytes, p.bytes_per_s)).collect();
                return curve_time_s(&points, bytes);
            }
        }
        (bytes + MEMORY_HALF_EFFICIENCY_BYTES) / (self.gpu.hbm_bytes_per_s * MEMORY_EFFICIENCY_MAX)
    }

    /// The calibrated GEMM points of this model's dtype, if any.
    fn gemm_curve(&self) -> Option<alloc::vec::Vec<(f64, f64)>> {
        let c = self.calibration.as_ref()?;
        let points: alloc::vec::Vec<(f64, f64)> = c
            .gemm
            .iter()
            .filter(|p| p.dtype == self.dtype)
            .map(|p| (p.flops, p.flops_per_s))
            .collect();
        (!points.is_empty()).then_some(points)
    }

    /// Duration of one compute kernel, ns.
    ///
    /// Roofline (Williams, Waterman, Patterson, "Roofline", CACM 2009) with size-dependent
    /// efficiencies, plus the launch:
    ///
    /// t = max(t_math, t_hbm) + launch_overhead_ns, where
    /// - GEMM: t_math = F / (peak(dtype)·e_gemm(F)) ([`gemm_efficiency`](Self::gemm_efficiency));
    /// - attention: the same with [`ATTENTION_EFFICIENCY_MAX`] in place of 0.95;
    /// - memory-bound: t_math = F / peak_fp32 (CUDA cores);
    /// - t_hbm = B / (hbm_bytes_per_s·e_mem(B)) ([`memory_efficiency`](Self::memory_efficiency)).
    ///
    /// With a calibrated profile, its GEMM curve (for this dtype) and memory curve replace
    /// e_gemm and e_mem. Work with no FLOPs and no bytes takes 0 (no kernel).
    #[must_use]
    pub fn compute_ns(&self, work: &ComputeWork) -> f64 {
        let flops = clean(work.flops);
        let bytes = clean(work.bytes);
        if flops == 0.0 && bytes == 0.0 {
            return 0.0;
        }
        let t_math = if flops == 0.0 {
            0.0
        } else {
            match work.kind {
                ComputeKind::Gemm | ComputeKind::Attention => self.matrix_time_s(work.kind, flops),
                ComputeKind::MemoryBound => flops / self.gpu.peak_fp32_flops_per_s,
            }
        };
        let t_hbm = self.memory_time_s(bytes);
        t_math.max(t_hbm) * 1e9 + self.gpu.launch_overhead_ns
    }

    /// Time of one ring phase of `kind` on `p` ranks over `link`, ns, without launch or base
    /// latency: steps(kind, p)·α + bus_factor(kind, p)·n/(β·η), where α is the link's per-step
    /// latency, β its line rate and η its collective (or, for send/receive, point-to-point)
    /// efficiency. This is the alpha-beta model of Thakur et al. (IJHPCA 2005) for the ring
    /// algorithm: P2P α + n/β; AllReduce 2(p−1)α + 2(p−1)/p·n/β; AllGather, ReduceScatter,
    /// AllToAll (p−1)α + (p−1)/p·n/β, with β the bandwidth NCCL reaches (Calculon's and NCCL's
    /// efficiencies, see [`LinkProfile`]).
    fn ring_phase_ns(kind: CollectiveKind, bytes: f64, p: u32, link: &LinkProfile) -> f64 {
        if p <= 1 || bytes <= 0.0 {
            return 0.0;
        }
        let eta = if kind == CollectiveKind::SendRecv {
            link.p2p_efficiency
        } else {
            link.collective_efficiency
        };
        kind.ring_steps(p) * link.latency_ns
            + kind.bus_factor(p) * bytes / (link.bytes_per_s * eta) * 1e9
    }

    /// Analytical device time of a collective, ns, without launch (see
    /// [`collective_ns`](Self::collective_ns)).
    fn analytical_collective_ns(&self, kind: CollectiveKind, n: f64, group: Group) -> f64 {
        let p = group.ranks;
        let r = group.per_node();
        let nodes = group.nodes();
        let intra = &self.topology.intra;
        let inter = &self.topology.inter;
        let base = if kind == CollectiveKind::SendRecv {
            0.0
        } else {
            NCCL_BASE_LATENCY_NS
        };
        if nodes <= 1 {
            return base + Self::ring_phase_ns(kind, n, p, intra);
        }
        let shard = n / f64::from(r);
        let body = match kind {
            CollectiveKind::AllReduce => {
                Self::ring_phase_ns(CollectiveKind::ReduceScatter, n, r, intra)
                    + Self::ring_phase_ns(CollectiveKind::AllReduce, shard, nodes, inter)
                    + Self::ring_phase_ns(CollectiveKind::AllGather, n, r, intra)
            }
            CollectiveKind::ReduceScatter => {
                Self::ring_phase_ns(CollectiveKind::ReduceScatter, n, r, intra)
                    + Self::ring_phase_ns(CollectiveKind::ReduceScatter, shard, nodes, inter)
            }
            CollectiveKind::AllGather => {
                Self::ring_phase_ns(CollectiveKind::AllGather, shard, nodes, inter)
                    + Self::ring_phase_ns(CollectiveKind::AllGather, n, r, intra)
            }
            CollectiveKind::AllToAll => {
                let pf = f64::from(p);
                let rf = f64::from(r);
                let latency = (rf - 1.0) * intra.latency_ns + (pf - rf) * inter.latency_ns;
                let intra_s =
                    (rf - 1.0) / pf * n / (intra.bytes_per_s * intra.collective_efficiency);
                let inter_s =
                    (pf - rf) / pf * n / (inter.bytes_per_s * inter.collective_efficiency);
                latency + intra_s.max(inter_s) * 1e9
            }
            CollectiveKind::SendRecv => {
                let link = if r >= 2 { intra } else { inter };
                Self::ring_phase_ns(CollectiveKind::SendRecv, n, 2, link)
            }
        };
        base + body
    }

    /// Duration of one collective of `bytes` (NCCL-tests convention: AllGather counts the output
    /// buffer, the others the input buffer of one rank) on `group`, ns.
    ///
    /// - 1 rank, or no bytes: 0.
    /// - One node (ranks ≤ ranks_per_node): the ring alpha-beta model over the intra-node link
    ///   (see `ring_phase_ns` below), plus NCCL's base latency [`NCCL_BASE_LATENCY_NS`] (not
    ///   for send/receive), plus the GPU's launch overhead:
    ///   t = launch + base + steps·α + bus_factor·n/(β·η).
    /// - Across nodes (N = ⌈ranks/ranks_per_node⌉ > 1, r = ranks_per_node): hierarchical, as in
    ///   2D/hierarchical all-reduce (Jia et al., "Highly Scalable Deep Learning Training System
    ///   with Mixed-Precision", 2018; Horovod's hierarchical allreduce): AllReduce = intra
    ///   ReduceScatter(n) + inter AllReduce(n/r over N nodes, one NIC per GPU) + intra
    ///   AllGather(n); ReduceScatter = intra RS(n) + inter RS(n/r); AllGather = inter AG(n/r) +
    ///   intra AG(n). AllToAll (our model): every rank sends (r−1)/p of its buffer over NVLink
    ///   and (p−r)/p over its NIC at the same time, so t = (r−1)α_intra + (p−r)α_inter +
    ///   max(the two transfer times). A send/receive uses NVLink when ranks_per_node ≥ 2, else
    ///   the NIC.
    /// - With a calibrated curve for exactly this (kind, ranks, ranks_per_node), the measured
    ///   time (interpolated, see [`Calibration`]) replaces the analytical device time.
    ///
    /// The message-size efficiency curve is the alpha-beta model itself: the effective bus
    /// bandwidth bus_factor·n/t rises with n as β·η·n/(n + n½) with n½ = α_total·β·η/bus_factor
    /// (Hockney's n½, "The communication challenge for MPP", Parallel Computing 1994), so small
    /// messages get a small fraction of the link.
    #[must_use]
    pub fn collective_ns(&self, kind: CollectiveKind, bytes: f64, group: Group) -> f64 {
        let n = clean(bytes);
        if group.ranks <= 1 || n == 0.0 {
            return 0.0;
        }
        let device_ns = match self
            .calibration
            .as_ref()
            .and_then(|c| c.collective_curve(kind, group.ranks, group.per_node()))
        {
            Some(curve) => {
                let factor = kind.bus_factor(group.ranks);
                // time = factor·bytes/busbw, so each point is (bytes, busbw/factor) in "bytes per s".
                let points: alloc::vec::Vec<(f64, f64)> = curve
                    .points
                    .iter()
                    .map(|p| (p.bytes, p.bus_bytes_per_s / factor))
                    .collect();
                let first_s = points[0].0 / points[0].1;
                curve_time_s(&points, n).max(first_s) * 1e9
            }
            None => self.analytical_collective_ns(kind, n, group),
        };
        device_ns + self.gpu.launch_overhead_ns
    }

    /// Duration of an AllReduce with the (double) binary tree algorithm, ns.
    ///
    /// Latency: 2·⌈log₂ p⌉ hops (reduce up the tree, broadcast down) of the link's per-step
    /// latency on one node; across nodes 2·(⌈log₂ r⌉·α_intra + ⌈log₂ N⌉·α_inter), as NCCL's tree
    /// model (`latencies[TREE]` in NCCL `src/graph/tuning.cc`; double binary trees: Sanders,
    /// Speck, Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan",
    /// Parallel Computing 2009). Bandwidth: each rank receives and sends the whole buffer once up
    /// and once down, 2·n/(β·η) (NCCL converts tree bus bandwidth to algorithm bandwidth with a
    /// factor 0.5); across nodes the inter-node tree carries n/r per GPU NIC after an intra-node
    /// reduce-scatter, and the intra-node phases cost 2(r−1)/r·n/(β·η). Plus base latency and
    /// launch as for [`collective_ns`](Self::collective_ns). 1 rank or no bytes: 0.
    #[must_use]
    pub fn tree_all_reduce_ns(&self, bytes: f64, group: Group) -> f64 {
        let n = clean(bytes);
        let p = group.ranks;
        if p <= 1 || n == 0.0 {
            return 0.0;
        }
        let intra = &self.topology.intra;
        let inter = &self.topology.inter;
        let log2_ceil = |x: u32| f64::from(x.max(1).next_power_of_two().trailing_zeros());
        let bw = |link: &LinkProfile| link.bytes_per_s * link.collective_efficiency;
        let nodes = group.nodes();
        let body_ns = if nodes <= 1 {
            2.0 * log2_ceil(p) * intra.latency_ns + 2.0 * n / bw(intra) * 1e9
        } else {
            let r = group.per_node();
            let rf = f64::from(r);
            2.0 * (log2_ceil(r) * intra.latency_ns + log2_ceil(nodes) * inter.latency_ns)
                + (2.0 * (rf - 1.0) / rf * n / bw(intra) + 2.0 * (n / rf) / bw(inter)) * 1e9
        };
        NCCL_BASE_LATENCY_NS + body_ns + self.gpu.launch_overhead_ns
    }

    /// Fraction by which compute on a GPU slows while a collective on `group` runs: the
    /// [`LinkProfile::compute_slowdown`] of the link it uses (Calculon's `processor_usage`: 0.15
    /// NVLink, 0.02 InfiniBand). A group on one node uses NVLink; a group across nodes with one
    /// rank per node uses only the NIC; a hierarchical group uses both, and our model charges
    /// the larger (its NVLink phases occupy SMs like any NVLink collective). 1 rank: 0.
    #[must_use]
    pub fn compute_slowdown(&self, group: Group) -> f64 {
        if group.ranks <= 1 {
            return 0.0;
        }
        let intra = self.topology.intra.compute_slowdown;
        let inter = self.topology.inter.compute_slowdown;
        if !group.spans_nodes() {
            intra
        } else if group.per_node() == 1 {
            inter
        } else {
            intra.max(inter)
        }
    }

    /// Algorithm bandwidth of a collective, bytes/s: bytes / [`collective_ns`](Self::collective_ns)
    /// (NVIDIA nccl-tests `doc/PERFORMANCE.md`, "algbw"). 0 when the time is 0.
    #[must_use]
    pub fn algorithm_bandwidth_bytes_per_s(
        &self,
        kind: CollectiveKind,
        bytes: f64,
        group: Group,
    ) -> f64 {
        let t = self.collective_ns(kind, bytes, group);
        if t > 0.0 {
            clean(bytes) / (t * 1e-9)
        } else {
            0.0
        }
    }

    /// Bus bandwidth of a collective, bytes/s: algorithm bandwidth × [`CollectiveKind::bus_factor`]
    /// (NVIDIA nccl-tests `doc/PERFORMANCE.md`, "busbw": the bandwidth each rank's link sees, so
    /// that it compares with the link's line rate whatever the rank count). 0 when the time is 0.
    #[must_use]
    pub fn bus_bandwidth_bytes_per_s(&self, kind: CollectiveKind, bytes: f64, group: Group) -> f64 {
        self.algorithm_bandwidth_bytes_per_s(kind, bytes, group) * kind.bus_factor(group.ranks)
    }
}
