//! Known answers of the hardware profiles and cost models (`bubblelab_core::hw`,
//! `bubblelab_core::cost`): the formulas at simple inputs, monotonicity, and the public figures.

#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::cost::{
    attention_flops, gemm_flops, CollectiveKind, ComputeKind, ComputeWork, CostModel, Dtype, Group,
    GEMM_EFFICIENCY_MAX, NCCL_BASE_LATENCY_NS,
};
use bubblelab_core::hw::{GpuKind, LinkKind, LinkProfile, Topology};

const KINDS: [CollectiveKind; 5] = CollectiveKind::ALL;

/// A model whose links have efficiency 1 and round numbers, so the closed forms are exact.
fn ideal_model() -> CostModel {
    let mut m = CostModel::new(GpuKind::H100);
    let link = |bytes_per_s: f64, latency_ns: f64, slowdown: f64| LinkProfile {
        name: "ideal".into(),
        bytes_per_s,
        latency_ns,
        compute_slowdown: slowdown,
        collective_efficiency: 1.0,
        p2p_efficiency: 1.0,
    };
    m.topology = Topology {
        gpus_per_node: 8,
        intra: link(100e9, 1_000.0, 0.15),
        inter: link(10e9, 5_000.0, 0.02),
    };
    m
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn one_rank_or_no_bytes_costs_nothing() {
    for gpu in GpuKind::ALL {
        let m = CostModel::new(gpu);
        for kind in KINDS {
            assert_eq!(
                m.collective_ns(kind, 1e9, Group::new(1, 1)),
                0.0,
                "{kind:?} on 1 rank"
            );
            assert_eq!(
                m.collective_ns(kind, 1e9, Group::new(1, 8)),
                0.0,
                "{kind:?} on 1 rank"
            );
            assert_eq!(
                m.collective_ns(kind, 0.0, Group::new(8, 8)),
                0.0,
                "{kind:?} of 0 bytes"
            );
            assert_eq!(m.collective_ns(kind, f64::NAN, Group::new(8, 8)), 0.0);
            assert_eq!(m.collective_ns(kind, -5.0, Group::new(8, 8)), 0.0);
            assert_eq!(
                m.bus_bandwidth_bytes_per_s(kind, 1e6, Group::new(1, 1)),
                0.0
            );
        }
        assert_eq!(m.tree_all_reduce_ns(1e9, Group::new(1, 1)), 0.0);
        assert_eq!(m.compute_slowdown(Group::new(1, 1)), 0.0);
        let empty = ComputeWork {
            kind: ComputeKind::Gemm,
            flops: 0.0,
            bytes: 0.0,
        };
        assert_eq!(m.compute_ns(&empty), 0.0);
    }
}

#[test]
fn p2p_is_alpha_plus_n_over_beta() {
    let m = ideal_model();
    let launch = m.gpu.launch_overhead_ns;
    let n = 64.0 * 1024.0 * 1024.0;
    // Same node: NVLink-like intra link; no NCCL base latency for point-to-point.
    let t = m.collective_ns(CollectiveKind::SendRecv, n, Group::new(2, 2));
    assert!(close(t, launch + 1_000.0 + n / 100e9 * 1e9), "{t}");
    // Across nodes: the NIC.
    let t = m.collective_ns(CollectiveKind::SendRecv, n, Group::new(2, 1));
    assert!(close(t, launch + 5_000.0 + n / 10e9 * 1e9), "{t}");
}

#[test]
fn ring_formulas_with_unit_efficiency() {
    let m = ideal_model();
    let launch = m.gpu.launch_overhead_ns;
    let (alpha, beta) = (1_000.0, 100e9);
    let n = 256.0 * 1024.0 * 1024.0;
    for p in [2u32, 3, 4, 8] {
        let pf = f64::from(p);
        let g = Group::new(p, 8);
        let ar = m.collective_ns(CollectiveKind::AllReduce, n, g);
        let want = launch
            + NCCL_BASE_LATENCY_NS
            + 2.0 * (pf - 1.0) * alpha
            + 2.0 * (pf - 1.0) / pf * n / beta * 1e9;
        assert!(close(ar, want), "ring AllReduce p={p}: {ar} vs {want}");
        for kind in [
            CollectiveKind::AllGather,
            CollectiveKind::ReduceScatter,
            CollectiveKind::AllToAll,
        ] {
            let t = m.collective_ns(kind, n, g);
            let want = launch
                + NCCL_BASE_LATENCY_NS
                + (pf - 1.0) * alpha
                + (pf - 1.0) / pf * n / beta * 1e9;
            assert!(close(t, want), "{kind:?} p={p}: {t} vs {want}");
        }
        // Bus bandwidth with unit efficiency tends to the line rate for large messages.
        let busbw = m.bus_bandwidth_bytes_per_s(CollectiveKind::AllReduce, 64.0 * n, g);
        assert!(busbw < beta && busbw > 0.99 * beta, "busbw {busbw}");
    }
}

#[test]
fn hierarchical_all_reduce_is_the_sum_of_its_phases() {
    let m = ideal_model();
    let launch = m.gpu.launch_overhead_ns;
    let n = 64.0 * 1024.0 * 1024.0;
    // 16 ranks, 8 per node: RS over 8 on NVLink, AR of n/8 over 2 nodes on the NIC, AG over 8.
    let t = m.collective_ns(CollectiveKind::AllReduce, n, Group::new(16, 8));
    let rs = 7.0 * 1_000.0 + 7.0 / 8.0 * n / 100e9 * 1e9;
    let ar = 2.0 * 5_000.0 + (n / 8.0) / 10e9 * 1e9;
    let want = launch + NCCL_BASE_LATENCY_NS + rs + ar + rs;
    assert!(close(t, want), "{t} vs {want}");
    // One rank per node: a flat ring over the NIC.
    let t = m.collective_ns(CollectiveKind::AllReduce, n, Group::new(4, 1));
    let want = launch + NCCL_BASE_LATENCY_NS + 6.0 * 5_000.0 + 1.5 * n / 10e9 * 1e9;
    assert!(close(t, want), "{t} vs {want}");
}

#[test]
fn tree_all_reduce_has_log2_latency_hops() {
    let m = ideal_model();
    let launch = m.gpu.launch_overhead_ns;
    let n = 1024.0;
    for (p, hops) in [(2u32, 1.0), (4, 2.0), (5, 3.0), (8, 3.0)] {
        let t = m.tree_all_reduce_ns(n, Group::new(p, 8));
        let want = launch + NCCL_BASE_LATENCY_NS + 2.0 * hops * 1_000.0 + 2.0 * n / 100e9 * 1e9;
        assert!(close(t, want), "tree p={p}: {t} vs {want}");
    }
    // For tiny messages on many ranks the tree beats the ring (log p against p hops).
    let g = Group::new(256, 8);
    let tree = m.tree_all_reduce_ns(1024.0, g);
    let ring = m.collective_ns(CollectiveKind::AllReduce, 1024.0, g);
    assert!(tree < ring, "tree {tree} ring {ring}");
}

#[test]
fn bigger_messages_never_take_less_time() {
    let groups = [
        Group::new(2, 2),
        Group::new(2, 1),
        Group::new(4, 4),
        Group::new(8, 8),
        Group::new(8, 4),
        Group::new(16, 8),
        Group::new(64, 8),
        Group::new(12, 8),
    ];
    for gpu in GpuKind::ALL {
        let m = CostModel::new(gpu);
        for kind in KINDS {
            for g in groups {
                let mut last = 0.0;
                let mut bytes = 1.0;
                while bytes < 1e12 {
                    let t = m.collective_ns(kind, bytes, g);
                    assert!(
                        t >= last,
                        "{gpu:?} {kind:?} {g:?}: {bytes} bytes take {t} < {last}"
                    );
                    assert!(t.is_finite() && t > 0.0);
                    last = t;
                    bytes *= 1.37;
                }
                let mut last = 0.0;
                let mut bytes = 1.0;
                while bytes < 1e12 {
                    let t = m.tree_all_reduce_ns(bytes, g);
                    assert!(t >= last, "tree {gpu:?} {g:?}: {bytes}");
                    last = t;
                    bytes *= 1.37;
                }
            }
        }
    }
}

#[test]
fn hierarchical_is_slower_than_one_node_for_the_same_ranks() {
    for gpu in GpuKind::ALL {
        let m = CostModel::new(gpu);
        for kind in KINDS {
            for bytes in [4096.0, 1e6, 64e6, 1e9] {
                let (p, across, inside) = if kind == CollectiveKind::SendRecv {
                    (2, 1, 2)
                } else {
                    (8, 4, 8)
                };
                let intra = m.collective_ns(kind, bytes, Group::new(p, inside));
                let hier = m.collective_ns(kind, bytes, Group::new(p, across));
                assert!(
                    hier > intra,
                    "{gpu:?} {kind:?} {bytes}: across nodes {hier} ≤ one node {intra}"
                );
            }
        }
    }
}

#[test]
fn large_all_reduce_reaches_the_cited_bus_bandwidth() {
    // Calculon's NVLink efficiency 0.6 of the line rate; NCCL's ~80 % for point-to-point.
    let m = CostModel::new(GpuKind::A100);
    let busbw = m.bus_bandwidth_bytes_per_s(CollectiveKind::AllReduce, 16e9, Group::new(8, 8));
    assert!(
        (busbw / 180e9 - 1.0).abs() < 0.01,
        "A100 AllReduce busbw {busbw}"
    );
    let p2p = m.bus_bandwidth_bytes_per_s(CollectiveKind::SendRecv, 16e9, Group::new(2, 2));
    assert!((p2p / 240e9 - 1.0).abs() < 0.01, "A100 send/recv {p2p}");
    let m = CostModel::new(GpuKind::H100);
    let busbw = m.bus_bandwidth_bytes_per_s(CollectiveKind::AllReduce, 16e9, Group::new(8, 8));
    assert!(
        (busbw / 270e9 - 1.0).abs() < 0.01,
        "H100 AllReduce busbw {busbw}"
    );
    // Across nodes on one NDR NIC per GPU at 0.9.
    let busbw = m.bus_bandwidth_bytes_per_s(CollectiveKind::AllReduce, 64e9, Group::new(2, 1));
    assert!(
        (busbw / 45e9 - 1.0).abs() < 0.01,
        "H100 2-node busbw {busbw}"
    );
    // Small messages get a small fraction of the link.
    let small = m.bus_bandwidth_bytes_per_s(CollectiveKind::AllReduce, 64e3, Group::new(8, 8));
    assert!(small < 0.05 * 450e9, "64 KB busbw {small}");
}

#[test]
fn gemm_time_is_monotone_and_approaches_peak() {
    for gpu in GpuKind::ALL {
        let m = CostModel::new(gpu);
        let peak = m.gpu.peak_bf16_flops_per_s;
        let mut last = 0.0;
        for e in 4..=15u32 {
            let n = f64::from(1u32 << e);
            let w = ComputeWork {
                kind: ComputeKind::Gemm,
                flops: gemm_flops(n, n, n),
                bytes: 2.0 * 3.0 * n * n,
            };
            let t = m.compute_ns(&w);
            assert!(t > last, "{gpu:?} GEMM {n}³ takes {t} ≤ {last}");
            last = t;
        }
        // 64³: far from peak; 16384³: within a few % of 0.95 × peak.
        let small = gemm_flops(64.0, 64.0, 64.0);
        let t = m.compute_ns(&ComputeWork {
            kind: ComputeKind::Gemm,
            flops: small,
            bytes: 3.0 * 2.0 * 64.0 * 64.0,
        });
        assert!(
            small / (t * 1e-9) < 0.01 * peak,
            "{gpu:?} small GEMM too fast"
        );
        let big = gemm_flops(16384.0, 16384.0, 16384.0);
        let t = m.compute_ns(&ComputeWork {
            kind: ComputeKind::Gemm,
            flops: big,
            bytes: 3.0 * 2.0 * 16384.0 * 16384.0,
        });
        let achieved = big / (t * 1e-9) / peak;
        assert!(
            achieved > 0.94 && achieved < GEMM_EFFICIENCY_MAX,
            "{gpu:?} large GEMM at {achieved} of peak"
        );
        // Efficiency curve passes through Calculon's points.
        assert!((m.gemm_efficiency(1e9) - 0.6).abs() < 1e-12);
        assert!((m.gemm_efficiency(16e9) - 0.9).abs() < 0.03);
        assert!((m.gemm_efficiency(128e9) - 0.95).abs() < 0.01);
    }
}

#[test]
fn roofline_takes_the_slower_of_math_and_memory() {
    let m = CostModel::new(GpuKind::H100);
    let launch = m.gpu.launch_overhead_ns;
    // 1 GB moved, no math: bytes / (3.35 TB/s × e(1 GB)).
    let t = m.compute_ns(&ComputeWork {
        kind: ComputeKind::MemoryBound,
        flops: 0.0,
        bytes: 1e9,
    });
    let want = (1e9 + 5e5) / (3.35e12 * 0.9) * 1e9 + launch;
    assert!(close(t, want), "{t} vs {want}");
    // A GEMM whose operands are enormous is memory-bound.
    let flops = gemm_flops(1024.0, 1024.0, 1024.0);
    let math_only = m.compute_ns(&ComputeWork {
        kind: ComputeKind::Gemm,
        flops,
        bytes: 0.0,
    });
    let memory_heavy = m.compute_ns(&ComputeWork {
        kind: ComputeKind::Gemm,
        flops,
        bytes: 10e9,
    });
    assert!(memory_heavy > math_only * 10.0);
    // Attention peaks lower than GEMM for the same FLOPs.
    let attn = m.compute_ns(&ComputeWork {
        kind: ComputeKind::Attention,
        flops: 1e12,
        bytes: 0.0,
    });
    let gemm = m.compute_ns(&ComputeWork {
        kind: ComputeKind::Gemm,
        flops: 1e12,
        bytes: 0.0,
    });
    assert!(attn > gemm * 1.5);
    // FP32 uses the CUDA-core peak.
    let mut fp32 = m.clone();
    fp32.dtype = Dtype::Fp32;
    let t32 = fp32.compute_ns(&ComputeWork {
        kind: ComputeKind::Gemm,
        flops: 1e12,
        bytes: 0.0,
    });
    assert!(t32 > gemm * 10.0);
}

#[test]
fn flop_counts() {
    assert_eq!(gemm_flops(2.0, 3.0, 4.0), 48.0);
    assert_eq!(
        attention_flops(1.0, 1.0, 1024.0, 1024.0, 64.0, false),
        4.0 * 1024.0 * 1024.0 * 64.0
    );
    assert_eq!(
        attention_flops(2.0, 16.0, 4096.0, 4096.0, 128.0, true),
        2.0 * 2.0 * 16.0 * 4096.0 * 4096.0 * 128.0
    );
    assert_eq!(Dtype::Bf16.bytes(), 2);
    assert_eq!(Dtype::Fp16.bytes(), 2);
    assert_eq!(Dtype::Fp32.bytes(), 4);
}

#[test]
fn compute_slowdown_nvlink_exceeds_infiniband() {
    for gpu in GpuKind::ALL {
        let m = CostModel::new(gpu);
        let nvlink = m.compute_slowdown(Group::new(8, 8));
        let ib = m.compute_slowdown(Group::new(2, 1));
        assert!(nvlink > ib, "{gpu:?}");
        assert!((nvlink - 0.15).abs() < 1e-12 && (ib - 0.02).abs() < 1e-12);
        assert_eq!(m.compute_slowdown(Group::new(16, 8)), 0.15);
    }
}

#[test]
fn public_figures() {
    let a = GpuKind::A100.profile();
    assert_eq!(
        (
            a.peak_bf16_flops_per_s,
            a.hbm_bytes_per_s,
            a.sm_count,
            a.hbm_bytes
        ),
        (312e12, 2.039e12, 108, 80_000_000_000)
    );
    let h = GpuKind::H100.profile();
    assert_eq!(
        (
            h.peak_bf16_flops_per_s,
            h.hbm_bytes_per_s,
            h.sm_count,
            h.hbm_bytes
        ),
        (989e12, 3.35e12, 132, 80_000_000_000)
    );
    let h2 = GpuKind::H200.profile();
    assert_eq!(
        (
            h2.peak_bf16_flops_per_s,
            h2.hbm_bytes_per_s,
            h2.sm_count,
            h2.hbm_bytes
        ),
        (989e12, 4.8e12, 132, 141_000_000_000)
    );
    assert_eq!(LinkKind::NvlinkA100.profile().bytes_per_s, 300e9);
    assert_eq!(LinkKind::NvlinkH100.profile().bytes_per_s, 450e9);
    assert_eq!(LinkKind::InfinibandHdr.profile().bytes_per_s, 25e9);
    assert_eq!(LinkKind::InfinibandNdr.profile().bytes_per_s, 50e9);
    assert!(
        LinkKind::Pcie4.profile().bytes_per_s > 31e9
            && LinkKind::Pcie5.profile().bytes_per_s > 62e9
    );
    for l in LinkKind::ALL {
        let p = l.profile();
        assert!(
            p.latency_ns > 0.0 && p.collective_efficiency > 0.0 && p.collective_efficiency <= 1.0
        );
        assert!(p.p2p_efficiency > 0.0 && p.p2p_efficiency <= 1.0 && p.compute_slowdown >= 0.0);
        assert_eq!(LinkKind::from_id(l.id()), Some(l));
        assert!(!l.label().is_empty());
    }
    let t = Topology::dgx(GpuKind::A100);
    assert_eq!(
        (t.gpus_per_node, t.intra.bytes_per_s, t.inter.bytes_per_s),
        (8, 300e9, 25e9)
    );
    let t = Topology::dgx(GpuKind::H200);
    assert_eq!(
        (t.gpus_per_node, t.intra.bytes_per_s, t.inter.bytes_per_s),
        (8, 450e9, 50e9)
    );
    for g in GpuKind::ALL {
        assert_eq!(GpuKind::from_id(g.id()), Some(g));
        assert!(!g.label().is_empty());
    }
    for k in KINDS {
        assert_eq!(CollectiveKind::from_id(k.id()), Some(k));
    }
}

#[test]
fn serde_names_are_kebab_case() {
    assert_eq!(serde_json::to_string(&GpuKind::H100).unwrap(), "\"h100\"");
    assert_eq!(
        serde_json::to_string(&LinkKind::InfinibandNdr).unwrap(),
        "\"infiniband-ndr\""
    );
    assert_eq!(
        serde_json::to_string(&CollectiveKind::ReduceScatter).unwrap(),
        "\"reduce-scatter\""
    );
    assert_eq!(serde_json::to_string(&Dtype::Bf16).unwrap(), "\"bf16\"");
    assert_eq!(
        serde_json::to_string(&ComputeKind::MemoryBound).unwrap(),
        "\"memory-bound\""
    );
    for k in KINDS {
        assert_eq!(
            serde_json::to_string(&k).unwrap(),
            format!("\"{}\"", k.id())
        );
    }
    for g in GpuKind::ALL {
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            format!("\"{}\"", g.id())
        );
    }
    for l in LinkKind::ALL {
        assert_eq!(
            serde_json::to_string(&l).unwrap(),
            format!("\"{}\"", l.id())
        );
    }
    // Profiles round-trip and refuse unknown fields.
    let p = GpuKind::A100.profile();
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(
        serde_json::from_str::<bubblelab_core::hw::GpuProfile>(&json).unwrap(),
        p
    );
    let bad = json.replacen('{', "{\"tdp_w\":400,", 1);
    assert!(serde_json::from_str::<bubblelab_core::hw::GpuProfile>(&bad).is_err());
}
