//! What the CUDA executor launches for each node, as plain data (no CUDA call here, so all of
//! it is tested on machines without a GPU): GEMM shapes and dtypes, the streaming kernel's
//! source and launch configuration, the emulated collective's copy volume, the per-stream
//! scratch a plan needs.

use bubblelab_core::cost::{ComputeKind, ComputeWork, Dtype};
use bubblelab_core::graph::{Graph, NodeKind, Op};
use petgraph::stable_graph::NodeIndex;

use crate::exec::Plan;

/// NVRTC source of the executor's kernels.
///
/// - `stream_copy`: copies `n16` 16-byte words from `src` to `dst` with a grid-stride loop; a
///   memory-bound node of B HBM bytes copies B/2 bytes (half read, half written).
/// - `empty`: does nothing; back-to-back launches of it measure the launch overhead.
/// - `delay`: one thread spins on the global timer for `ns` nanoseconds; it holds the streams
///   back while the host issues a whole plan ([`issue_head_start_ns`]).
pub const KERNEL_SOURCE: &str = r#"
extern "C" __global__ void stream_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                       unsigned long long n16) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n16; i += stride) {
        dst[i] = src[i];
    }
}
extern "C" __global__ void empty() {}
extern "C" __global__ void delay(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"#;

/// Host time allowed per node to issue a plan (events, waits, allocation, launch), ns.
pub const ISSUE_NS_PER_NODE: u64 = 50_000;

/// How long the streams are held back before a run's epoch so that the host has issued the
/// whole plan before the first op starts (a host that issues slower than the GPU runs would
/// otherwise add gaps the simulator does not model): [`ISSUE_NS_PER_NODE`] per node, between
/// 1 ms and 200 ms.
#[must_use]
pub fn issue_head_start_ns(nodes: usize) -> u64 {
    (nodes as u64)
        .saturating_mul(ISSUE_NS_PER_NODE)
        .clamp(1_000_000, 200_000_000)
}

/// Threads per block of `stream_copy`.
pub const STREAM_THREADS_PER_BLOCK: u32 = 256;
/// Resident blocks per SM the grid is capped at (a grid-stride loop covers the rest).
pub const STREAM_BLOCKS_PER_SM: u32 = 8;

/// How one `stream_copy` launch covers a copy of `bytes` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamLaunch {
    /// 16-byte words copied (the bytes rounded up to whole words).
    pub words16: u64,
    /// Blocks in the grid: enough for one word per thread, at most
    /// [`STREAM_BLOCKS_PER_SM`] per SM, at least 1.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
}

/// The launch of `stream_copy` for `bytes` bytes on a device with `sm_count` SMs; `None` for
/// no bytes (no kernel).
#[must_use]
pub fn stream_launch(bytes: u64, sm_count: u32) -> Option<StreamLaunch> {
    if bytes == 0 {
        return None;
    }
    let words16 = bytes.div_ceil(16);
    let wanted = words16.div_ceil(u64::from(STREAM_THREADS_PER_BLOCK));
    let cap = u64::from(sm_count.max(1)) * u64::from(STREAM_BLOCKS_PER_SM);
    Some(StreamLaunch {
        words16,
        blocks: u32::try_from(wanted.min(cap)).unwrap_or(u32::MAX).max(1),
        threads: STREAM_THREADS_PER_BLOCK,
    })
}

/// Bytes a memory-bound node copies: half its HBM bytes (the other half is the writes), rounded
/// down to whole bytes.
#[must_use]
pub fn memory_bound_copy_bytes(work: &ComputeWork) -> u64 {
    if work.bytes.is_finite() && work.bytes > 0.0 {
        (work.bytes / 2.0) as u64
    } else {
        0
    }
}

/// Bytes the single-GPU emulation of a collective copies: its bus volume,
/// bus_factor(p)·n (the per-rank traffic of the NCCL-tests convention).
#[must_use]
pub fn collective_copy_bytes(graph: &Graph, n: NodeIndex) -> u64 {
    match graph.dag[n].kind {
        NodeKind::CollectiveStart { kind, group, bytes } => {
            let ranks = graph.groups.get(group).map_or(1, |g| g.ranks.max(1));
            (bytes as f64 * kind.bus_factor(ranks)) as u64
        }
        _ => 0,
    }
}

/// The element type of the graph's GEMMs: bf16 when its shaped tensors hold 2 bytes per
/// element, fp32 when 4 (and when no tensor carries a shape, as in hand-built plans).
#[must_use]
pub fn graph_dtype(graph: &Graph) -> Dtype {
    for t in &graph.tensors {
        let Some([s, b, f]) = t.shape else { continue };
        let elements = s.saturating_mul(b).saturating_mul(f);
        if elements == 0 {
            continue;
        }
        if t.bytes == 2 * elements {
            return Dtype::Bf16;
        }
        if t.bytes == 4 * elements {
            return Dtype::Fp32;
        }
    }
    Dtype::Fp32
}

/// Largest GEMM side the executor accepts, elements (cuBLAS takes `int` sizes; a graph asking
/// for more is not a graph of one GPU).
pub const MAX_GEMM_SIDE: u64 = 1 << 20;

/// A GEMM C(m×n) = A(m×k)·B(k×n).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmShape {
    /// Rows of A and C.
    pub m: u64,
    /// Columns of B and C.
    pub n: u64,
    /// The reduced dimension.
    pub k: u64,
}

impl GemmShape {
    /// Elements of A, B and C.
    #[must_use]
    pub fn elements(self) -> (u64, u64, u64) {
        (self.m * self.k, self.k * self.n, self.m * self.n)
    }
}

/// The GEMM a compute node runs: for a `Linear` node whose output has a shape
/// `[sequence, batch, features]`, m = sequence·batch tokens, n = features and
/// k = F/(2·m·n) (F its FLOPs); otherwise (backward GEMMs, attention, hand-built plans) the
/// near-cube m = n = ⌊∛(F/2)⌋, k = F/(2·m·n). `None` for a node with fewer than 2 FLOPs.
#[must_use]
pub fn gemm_shape(graph: &Graph, n: NodeIndex) -> Option<GemmShape> {
    let node = &graph.dag[n];
    let NodeKind::Compute(w) = &node.kind else {
        return None;
    };
    if w.kind == ComputeKind::MemoryBound || !(w.flops.is_finite() && w.flops >= 2.0) {
        return None;
    }
    let shaped = match (&node.op, node.outputs.as_slice()) {
        (Some(Op::Linear), [out]) => graph.tensors.get(*out).and_then(|t| t.shape),
        _ => None,
    };
    let (m, cols) = match shaped {
        Some([s, b, f]) if s * b > 0 && f > 0 => (s * b, f),
        _ => {
            let side = ((w.flops / 2.0).cbrt().floor() as u64).max(1);
            (side, side)
        }
    };
    let k = (w.flops / (2.0 * m as f64 * cols as f64)).round() as u64;
    Some(GemmShape {
        m: m.min(MAX_GEMM_SIDE),
        n: cols.min(MAX_GEMM_SIDE),
        k: k.clamp(1, MAX_GEMM_SIDE),
    })
}

/// Scratch bytes one stream of a plan needs: GEMM operands A, B, C of its largest GEMMs (in
/// `dtype`), and source and destination of its largest copy (rounded up to 16-byte words).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scratch {
    /// Bytes of A.
    pub a_bytes: u64,
    /// Bytes of B.
    pub b_bytes: u64,
    /// Bytes of C.
    pub c_bytes: u64,
    /// Bytes of each of the copy's source and destination.
    pub copy_bytes: u64,
}

impl Scratch {
    /// All of it, bytes.
    #[must_use]
    pub fn total(self) -> u64 {
        self.a_bytes + self.b_bytes + self.c_bytes + 2 * self.copy_bytes
    }
}

/// The scratch each stream of `plan` needs.
#[must_use]
pub fn plan_scratch(plan: &Plan, dtype: Dtype) -> Vec<Scratch> {
    let e = u64::from(dtype.bytes());
    let mut out = vec![Scratch::default(); plan.streams.len()];
    for n in plan.graph.dag.node_indices() {
        let Some(s) = out.get_mut(plan.stream_of.get(n.index()).copied().unwrap_or(0)) else {
            continue;
        };
        if let Some(g) = gemm_shape(&plan.graph, n) {
            let (a, b, c) = g.elements();
            s.a_bytes = s.a_bytes.max(a * e);
            s.b_bytes = s.b_bytes.max(b * e);
            s.c_bytes = s.c_bytes.max(c * e);
        }
        let copy = match &plan.graph.dag[n].kind {
            NodeKind::Compute(w) if w.kind == ComputeKind::MemoryBound => {
                memory_bound_copy_bytes(w)
            }
            NodeKind::CollectiveStart { .. } => collective_copy_bytes(&plan.graph, n),
            _ => 0,
        };
        s.copy_bytes = s.copy_bytes.max(copy.div_ceil(16) * 16);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bubblelab_core::cost::CollectiveKind;

    fn work(kind: ComputeKind, flops: f64, bytes: f64) -> NodeKind {
        NodeKind::Compute(ComputeWork { kind, flops, bytes })
    }

    #[test]
    fn stream_launch_covers_every_word_and_caps_the_grid() {
        assert_eq!(stream_launch(0, 132), None);
        let one = stream_launch(1, 132).expect("launch");
        assert_eq!((one.words16, one.blocks, one.threads), (1, 1, 256));
        let small = stream_launch(256 * 16 * 3, 132).expect("launch");
        assert_eq!((small.words16, small.blocks), (768, 3));
        let big = stream_launch(1 << 30, 132).expect("launch");
        assert_eq!(big.words16, 1 << 26);
        assert_eq!(big.blocks, 132 * STREAM_BLOCKS_PER_SM);
        // A device reporting no SMs still gets one block.
        assert_eq!(stream_launch(1 << 20, 0).expect("launch").blocks, 8);
    }

    #[test]
    fn kernel_source_defines_every_named_kernel() {
        for name in ["stream_copy", "empty", "delay"] {
            assert!(
                KERNEL_SOURCE.contains(&format!("__global__ void {name}(")),
                "{name}"
            );
        }
    }

    #[test]
    fn head_start_grows_with_the_plan_within_bounds() {
        assert_eq!(issue_head_start_ns(0), 1_000_000);
        assert_eq!(issue_head_start_ns(99), 4_950_000);
        assert_eq!(issue_head_start_ns(1_000_000), 200_000_000);
    }

    #[test]
    fn dtype_follows_bytes_per_element_of_shaped_tensors() {
        let mut g = Graph::new();
        let x = g.add_input("x", 64, false);
        assert_eq!(graph_dtype(&g), Dtype::Fp32, "no shape: fp32");
        g.tensors[x].shape = Some([4, 2, 4]);
        assert_eq!(graph_dtype(&g), Dtype::Bf16);
        g.tensors[x].bytes = 128;
        assert_eq!(graph_dtype(&g), Dtype::Fp32);
        g.tensors[x].bytes = 96;
        assert_eq!(graph_dtype(&g), Dtype::Fp32, "neither: fp32");
    }

    #[test]
    fn linear_nodes_keep_their_shape_others_get_a_near_cube() {
        let mut g = Graph::new();
        let x = g.add_input("x", 2 * 512 * 1024, false);
        let flops = 2.0 * 512.0 * 3072.0 * 1024.0;
        let (lin, out) = g.add_node(
            "qkv",
            work(ComputeKind::Gemm, flops, 0.0),
            &[x],
            &[("qkv", 2 * 512 * 3072)],
        );
        g.dag[lin].op = Some(Op::Linear);
        g.tensors[out[0]].shape = Some([256, 2, 3072]);
        assert_eq!(
            gemm_shape(&g, lin),
            Some(GemmShape {
                m: 512,
                n: 3072,
                k: 1024
            })
        );
        let (att, _) = g.add_node(
            "attn",
            work(ComputeKind::Attention, 2.0 * 64.0 * 64.0 * 100.0, 0.0),
            &[x],
            &[("attn", 8)],
        );
        let s = gemm_shape(&g, att).expect("gemm");
        assert_eq!((s.m, s.n), (74, 74), "⌊∛409600⌋");
        assert_eq!(s.k, 75, "k = round(F / 2m²) = round(74.8)");
        let (mb, _) = g.add_node(
            "norm",
            work(ComputeKind::MemoryBound, 1e6, 4096.0),
            &[x],
            &[("norm", 8)],
        );
        assert_eq!(gemm_shape(&g, mb), None);
        assert_eq!(
            memory_bound_copy_bytes(&ComputeWork {
                kind: ComputeKind::MemoryBound,
                flops: 0.0,
                bytes: 4097.0
            }),
            2048
        );
    }

    #[test]
    fn scratch_is_per_stream_and_covers_the_largest_op() {
        let mut g = Graph::new();
        let tp = g.add_group("tp", 4, 4);
        let x = g.add_input("x", 1 << 20, false);
        let y = g.compute(
            "gemm",
            ComputeWork {
                kind: ComputeKind::Gemm,
                flops: 2.0 * 64.0 * 64.0 * 64.0,
                bytes: 0.0,
            },
            &[x],
            1 << 10,
        );
        let (start, _, _) = g.collective("ar", CollectiveKind::AllReduce, tp, 1000, y, 1000);
        assert_eq!(collective_copy_bytes(&g, start), 1500, "2(p-1)/p · n");
        let plan = Plan::simulator_streams("t", g);
        let s = plan_scratch(&plan, Dtype::Bf16);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].a_bytes, 64 * 64 * 2);
        assert_eq!(s[0].copy_bytes, 0);
        assert_eq!(s[1].a_bytes, 0);
        assert_eq!(s[1].copy_bytes, 1504, "rounded up to 16-byte words");
        assert_eq!(s[1].total(), 3008);
    }
}
