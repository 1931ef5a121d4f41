//! The NVRTC kernels that link and traverse the workload's list on the device, their CUDA C
//! source spelled from the Rust constants, and what a traversal's status words mean.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use super::usize_of;
use super::vmm::CudaSpace;
use crate::checkpoint::workload::{Layout, FNV, NODE_BYTES, SPLITMIX_GAMMA, SPLITMIX_MIX};
use crate::checkpoint::{CkptError, Space};

/// Threads per block of the link kernel.
pub const LINK_BLOCK_THREADS: u32 = 256;
/// Words the traversal kernel writes back: checksum, status, node index, address, stored own
/// address, stored back link, expected back link.
const TRAVERSE_OUT_WORDS: usize = 7;

/// CUDA C source of the two kernels, with the workload's constants spelled from the Rust ones
/// (so the layout and checksum cannot drift apart):
/// - `bl_link(list, order, nodes, value_state)`: one thread per node `k` writes the `k`-th
///   node into slot `order[k]`, exactly as [`super::workload::node_bytes`];
/// - `bl_traverse(base, reserved, region, committed, root, nodes, out)`: one thread follows
///   the device pointers from `root`, checks each node's own address and back link as
///   [`super::workload::traverse`] does, and writes seven words to `out`
///   (status 0 = ok; 1 = link outside the committed range; 2 = misaligned; 3 = own address or
///   back link wrong; 4 = list too short; 5 = list too long).
#[must_use]
pub fn kernel_source() -> String {
    format!(
        r#"typedef unsigned long long u64;
#define BL_NODE_BYTES {node}ULL
#define BL_FNV_OFFSET {fnv0:#x}ULL
#define BL_FNV_PRIME {fnv1:#x}ULL
#define BL_GAMMA {gamma:#x}ULL
#define BL_MIX0 {mix0:#x}ULL
#define BL_MIX1 {mix1:#x}ULL

__device__ u64 bl_splitmix_at(u64 state, u64 k) {{
    u64 z = state + (k + 1ULL) * BL_GAMMA;
    z = (z ^ (z >> 30)) * BL_MIX0;
    z = (z ^ (z >> 27)) * BL_MIX1;
    return z ^ (z >> 31);
}}

extern "C" __global__ void bl_link(u64 list, const u64* order, u64 nodes, u64 value_state) {{
    u64 k = (u64)blockIdx.x * (u64)blockDim.x + (u64)threadIdx.x;
    if (k >= nodes) return;
    u64 own = list + order[k] * BL_NODE_BYTES;
    u64* node = (u64*)own;
    node[0] = k + 1ULL < nodes ? list + order[k + 1ULL] * BL_NODE_BYTES : 0ULL;
    node[1] = bl_splitmix_at(value_state, k);
    node[2] = own;
    node[3] = k > 0ULL ? list + order[k - 1ULL] * BL_NODE_BYTES : 0ULL;
}}

extern "C" __global__ void bl_traverse(u64 base, u64 reserved, u64 region,
                                       const unsigned char* committed, u64 root, u64 nodes,
                                       u64* out) {{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < {words}; ++i) out[i] = 0ULL;
    u64 h = BL_FNV_OFFSET;
    u64 at = root;
    u64 prev = 0ULL;
    for (u64 k = 0ULL; k < nodes; ++k) {{
        out[2] = k;
        out[3] = at;
        if (at < base || at - base >= reserved || !committed[(at - base) / region]) {{
            out[1] = 1ULL;
            return;
        }}
        if ((at - base) % BL_NODE_BYTES != 0ULL) {{
            out[1] = 2ULL;
            return;
        }}
        const u64* node = (const u64*)at;
        u64 next = node[0], value = node[1], own = node[2], back = node[3];
        if (own != at || back != prev) {{
            out[1] = 3ULL;
            out[4] = own;
            out[5] = back;
            out[6] = prev;
            return;
        }}
        h = (h ^ at) * BL_FNV_PRIME;
        h = (h ^ value) * BL_FNV_PRIME;
        prev = at;
        if (next == 0ULL) {{
            if (k + 1ULL != nodes) {{
                out[1] = 4ULL;
                return;
            }}
            out[0] = h;
            return;
        }}
        at = next;
    }}
    out[1] = 5ULL;
}}
"#,
        node = NODE_BYTES,
        fnv0 = FNV[0],
        fnv1 = FNV[1],
        gamma = SPLITMIX_GAMMA,
        mix0 = SPLITMIX_MIX[0],
        mix1 = SPLITMIX_MIX[1],
        words = TRAVERSE_OUT_WORDS,
    )
}

/// Turns the traversal kernel's words into the host traversal's answer.
///
/// # Errors
/// [`CkptError::Corrupt`] with the host traversal's wording for each failing status.
pub fn traverse_outcome(out: &[u64], nodes: u64) -> Result<u64, CkptError> {
    let w = |i: usize| out.get(i).copied().unwrap_or(0);
    let (k, at) = (w(2), w(3));
    match w(1) {
        0 => Ok(w(0)),
        1 => Err(CkptError::Corrupt(format!(
            "node {k} link {at:#x} is outside the committed range"
        ))),
        2 => Err(CkptError::Corrupt(format!(
            "node {k} link {at:#x} is misaligned"
        ))),
        3 => Err(CkptError::Corrupt(format!(
            "node {k} at {at:#x} stores own address {:#x} and back link {:#x} (expected {:#x})",
            w(4),
            w(5),
            w(6)
        ))),
        4 => Err(CkptError::Corrupt(format!(
            "the list ends after {} of {nodes} nodes",
            k + 1
        ))),
        5 => Err(CkptError::Corrupt(format!(
            "the list is longer than {nodes} nodes"
        ))),
        s => Err(CkptError::Io(format!(
            "the traversal kernel answered status {s}"
        ))),
    }
}

/// The two kernels, compiled by NVRTC and loaded into a space's context.
#[derive(Debug)]
pub struct Kernels {
    stream: Arc<CudaStream>,
    link: CudaFunction,
    traverse: CudaFunction,
}

fn launch_error(what: &str) -> impl Fn(cudarc::driver::DriverError) -> CkptError + '_ {
    move |e| CkptError::Io(format!("{what}: {e}"))
}

impl Kernels {
    /// Compiles [`kernel_source`] with NVRTC and loads it into the context of `space`.
    ///
    /// # Errors
    /// [`CkptError::NoDevice`] when libnvrtc cannot be loaded; the compiler's or driver's
    /// error otherwise.
    pub fn compile(space: &CudaSpace) -> Result<Kernels, CkptError> {
        #[allow(unsafe_code)]
        // SAFETY: only tries to load libnvrtc by name and drops it (see `driver_present`).
        let nvrtc = unsafe { cudarc::nvrtc::sys::is_culib_present() };
        if !nvrtc {
            return Err(CkptError::NoDevice(
                "--device cuda: NVRTC (libnvrtc) not found; it compiles the link and traversal kernels".into(),
            ));
        }
        let ptx = cudarc::nvrtc::compile_ptx(kernel_source())
            .map_err(|e| CkptError::Io(format!("NVRTC could not compile the kernels: {e}")))?;
        let ctx = space.context();
        let module = ctx
            .load_module(ptx)
            .map_err(launch_error("loading the kernels"))?;
        Ok(Kernels {
            stream: ctx.default_stream(),
            link: module
                .load_function("bl_link")
                .map_err(launch_error("bl_link"))?,
            traverse: module
                .load_function("bl_traverse")
                .map_err(launch_error("bl_traverse"))?,
        })
    }

    /// Writes the laid-out list's nodes on the device, one thread per node.
    ///
    /// # Errors
    /// [`CkptError::Invalid`] when the list block is not committed in `space`; the driver's
    /// errors.
    pub fn link(&self, space: &CudaSpace, layout: &Layout) -> Result<(), CkptError> {
        let bytes = layout.nodes * NODE_BYTES;
        let region = space.region_bytes();
        let first = layout.list.checked_sub(space.base()).ok_or_else(|| {
            CkptError::Invalid(format!("list {:#x} below the range", layout.list))
        })?;
        let regions = first / region..(first + bytes).div_ceil(region);
        if bytes == 0
            || !regions
                .clone()
                .all(|i| space.is_committed(usize_of(i).unwrap_or(usize::MAX)))
        {
            return Err(CkptError::Invalid(format!(
                "the list's {bytes} bytes at {:#x} are not all committed",
                layout.list
            )));
        }
        let blocks =
            u32::try_from(layout.nodes.div_ceil(u64::from(LINK_BLOCK_THREADS))).map_err(|_| {
                CkptError::Invalid(format!(
                    "{} nodes are too many for one launch",
                    layout.nodes
                ))
            })?;
        space.bind()?;
        let order = self
            .stream
            .clone_htod(&layout.order)
            .map_err(launch_error("copying the visit order"))?;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (LINK_BLOCK_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(&self.link);
        launch
            .arg(&layout.list)
            .arg(&order)
            .arg(&layout.nodes)
            .arg(&layout.value_state);
        #[allow(unsafe_code)]
        // SAFETY: the arguments match `bl_link`'s signature (u64, const u64*, u64, u64); every
        // thread writes 32 bytes at `list + order[k] * 32` with `order` a permutation of
        // 0..nodes, inside the list block, whose regions were checked committed above.
        unsafe { launch.launch(cfg) }.map_err(launch_error("launching bl_link"))?;
        self.stream
            .synchronize()
            .map_err(launch_error("running bl_link"))
    }

    /// Follows the list from `root` on the device and returns its checksum (the same
    /// definition as [`super::workload::traverse`]).
    ///
    /// # Errors
    /// [`CkptError::Corrupt`] as the host traversal; the driver's errors.
    pub fn checksum(&self, space: &CudaSpace, root: u64, nodes: u64) -> Result<u64, CkptError> {
        let committed: Vec<u8> = (0..space.regions())
            .map(|i| u8::from(space.is_committed(i)))
            .collect();
        space.bind()?;
        let committed = self
            .stream
            .clone_htod(&committed)
            .map_err(launch_error("copying the committed map"))?;
        let mut out = self
            .stream
            .alloc_zeros::<u64>(TRAVERSE_OUT_WORDS)
            .map_err(launch_error("allocating the traversal's answer"))?;
        let (base, reserved, region) = (space.base(), space.reserved_bytes(), space.region_bytes());
        let mut launch = self.stream.launch_builder(&self.traverse);
        launch
            .arg(&base)
            .arg(&reserved)
            .arg(&region)
            .arg(&committed)
            .arg(&root)
            .arg(&nodes)
            .arg(&mut out);
        #[allow(unsafe_code)]
        // SAFETY: the arguments match `bl_traverse`'s signature; the kernel dereferences an
        // address only after checking it lies in a committed region of the range (per the
        // committed map built above) and is node-aligned, and writes only `out`, which holds
        // TRAVERSE_OUT_WORDS words.
        unsafe {
            launch.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_error("launching bl_traverse"))?;
        self.stream
            .synchronize()
            .map_err(launch_error("running bl_traverse"))?;
        let words = self
            .stream
            .clone_dtoh(&out)
            .map_err(launch_error("reading the traversal's answer"))?;
        traverse_outcome(&words, nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_source_spells_the_workload_constants() {
        let src = kernel_source();
        for c in [
            FNV[0],
            FNV[1],
            SPLITMIX_GAMMA,
            SPLITMIX_MIX[0],
            SPLITMIX_MIX[1],
        ] {
            assert!(src.contains(&format!("{c:#x}ULL")), "{c:#x}");
        }
        assert!(src.contains(&format!("BL_NODE_BYTES {NODE_BYTES}ULL")));
        assert!(src.contains("extern \"C\" __global__ void bl_link("));
        assert!(src.contains("extern \"C\" __global__ void bl_traverse("));
    }

    #[test]
    fn traversal_statuses_read_as_the_host_traversal_errors() {
        assert_eq!(traverse_outcome(&[42, 0, 9, 0x100, 0, 0, 0], 10), Ok(42));
        let e = traverse_outcome(&[0, 3, 2, 0x40, 0x48, 0x20, 0x20], 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            "corrupted checkpoint image, nothing restored: node 2 at 0x40 stores own address 0x48 and back link 0x20 (expected 0x20)"
        );
        assert!(traverse_outcome(&[0, 4, 4, 0, 0, 0, 0], 10)
            .unwrap_err()
            .to_string()
            .contains("ends after 5 of 10"));
        assert!(matches!(
            traverse_outcome(&[0, 9], 1),
            Err(CkptError::Io(_))
        ));
    }

    /// The C++ driver that runs the kernels' source on the CPU: `bl_link` over a grid of
    /// blocks of 256 threads, then `bl_traverse` on the intact list, with a broken back link,
    /// and with a link out of the range.
    const CPU_DRIVER: &str = r#"#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define __global__
#define __device__ static
struct bl_dim { unsigned x, y, z; };
static bl_dim threadIdx, blockIdx, blockDim;
#include "kernels.cu"
int main(int argc, char** argv) {
    if (argc != 7) return 2;
    u64 list = strtoull(argv[1], 0, 16), nodes = strtoull(argv[2], 0, 10);
    u64 value_state = strtoull(argv[3], 0, 16), root = strtoull(argv[4], 0, 16);
    u64 bytes = (nodes * BL_NODE_BYTES + 4095) / 4096 * 4096;
    void* p = mmap((void*)list, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void*)list) { fprintf(stderr, "cannot map %llx\n", list); return 3; }
    u64* order = (u64*)malloc(nodes * 8);
    FILE* f = fopen(argv[5], "rb");
    if (!f || fread(order, 8, nodes, f) != nodes) return 4;
    fclose(f);
    blockDim.x = 256;
    for (unsigned b = 0; b < (nodes + 255) / 256; ++b)
        for (unsigned t = 0; t < 256; ++t) { blockIdx.x = b; threadIdx.x = t; bl_link(list, order, nodes, value_state); }
    f = fopen(argv[6], "wb");
    fwrite((void*)list, 1, nodes * BL_NODE_BYTES, f);
    fclose(f);
    unsigned char committed[1] = {1};
    u64 out[7];
    blockIdx.x = 0; threadIdx.x = 0; blockDim.x = 1;
    bl_traverse(list, bytes, bytes, committed, root, nodes, out);
    printf("%llx %llu\n", out[0], out[1]);
    u64* second = (u64*)((u64*)root)[0];
    second[3] ^= BL_NODE_BYTES;
    bl_traverse(list, bytes, bytes, committed, root, nodes, out);
    printf("%llu %llu\n", out[1], out[2]);
    second[3] ^= BL_NODE_BYTES;
    ((u64*)root)[0] = list + bytes;
    bl_traverse(list, bytes, bytes, committed, root, nodes, out);
    printf("%llu %llu\n", out[1], out[2]);
    return 0;
}
"#;

    #[test]
    fn the_kernel_source_links_and_traverses_like_the_host_when_run_on_the_cpu() {
        use crate::checkpoint::mem::MemSpace;
        use crate::checkpoint::{workload, Allocator};
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        if std::process::Command::new(&cxx)
            .arg("--version")
            .output()
            .is_err()
        {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "no C++ compiler `{cxx}` to run the kernels' source on the CPU"
            );
            eprintln!("skipped: no C++ compiler `{cxx}`");
            return;
        }
        let region = 64u64 << 10;
        let mut alloc =
            Allocator::new(MemSpace::new(0x2D00_0000_0000, 16 * region, region).unwrap());
        let layout = workload::lay_out(&mut alloc, 1000, region, region, 5).unwrap();
        workload::link_on_host(&mut alloc.space, &layout).unwrap();
        let root = layout.list + layout.order[0] * NODE_BYTES;
        let expected = workload::traverse(&alloc.space, root, layout.nodes).unwrap();
        let mut list = vec![0u8; (layout.nodes * NODE_BYTES) as usize];
        alloc
            .space
            .read(layout.list - alloc.space.base(), &mut list)
            .unwrap();

        let dir = std::env::temp_dir().join(format!("bubblelab-kernels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("kernels.cu"), kernel_source()).unwrap();
        std::fs::write(dir.join("driver.cpp"), CPU_DRIVER).unwrap();
        let order: Vec<u8> = layout.order.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(dir.join("order.bin"), order).unwrap();
        let exe = dir.join("driver");
        let built = std::process::Command::new(&cxx)
            .args(["-O1", "-o"])
            .arg(&exe)
            .arg(dir.join("driver.cpp"))
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let run = std::process::Command::new(&exe)
            .arg(format!("{:x}", layout.list))
            .arg(layout.nodes.to_string())
            .arg(format!("{:x}", layout.value_state))
            .arg(format!("{root:x}"))
            .arg(dir.join("order.bin"))
            .arg(dir.join("list.bin"))
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let stdout = String::from_utf8_lossy(&run.stdout).to_string();
        let lines: Vec<&str> = stdout.lines().collect();
        // Byte for byte the host's list, the same checksum, and the host's refusals.
        assert!(
            std::fs::read(dir.join("list.bin")).unwrap() == list,
            "list bytes differ"
        );
        assert_eq!(lines, [format!("{expected:x} 0").as_str(), "3 1", "1 1"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
