//! The baselines Helix is compared with, on the same graph: [`serial`] (no overlap),
//! [`eager`] (raise starts, sink waits: PyTorch Inductor's greedy reordering) and [`async_tp`]
//! (PyTorch's async tensor parallelism: AllGather→GEMM and GEMM→ReduceScatter decomposed into
//! p chunked steps on two streams).

pub mod async_tp;
pub mod eager;
pub mod serial;
