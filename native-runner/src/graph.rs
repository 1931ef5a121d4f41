//! `bubblelab graph`: build the per-rank execution graph of a real model's transformer layers
//! under a parallel layout, simulate it on a GPU's cost model and print the step time, the
//! exposed communication and the peak activation memory.

use bubblelab_core::cost::CostModel;
use bubblelab_core::graph::build::{
    ContextParallel, DataParallel, ModelKind, Parallelism, Workload,
};
use bubblelab_core::graph::sim::model_report;
use bubblelab_core::hw::GpuKind;
use clap::Args;

use crate::error::Failure;
use crate::ReportOutput;

/// Arguments of `bubblelab graph`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Model: gpt3-6.7b, gpt3-175b, llama3-8b, llama3-70b or qwen3-30b-a3b.
    #[arg(long, default_value = "gpt3-6.7b")]
    model: String,
    /// GPU: a100, h100 or h200 (DGX node: NVLink inside, InfiniBand between nodes).
    #[arg(long, default_value = "h100")]
    gpu: String,
    /// Tensor-parallel degree.
    #[arg(long, default_value_t = 1)]
    tp: u32,
    /// Sequence parallelism inside the TP group (AllGather/ReduceScatter instead of AllReduce).
    #[arg(long)]
    sp: bool,
    /// Context-parallel degree.
    #[arg(long, default_value_t = 1)]
    cp: u32,
    /// Context parallelism by ring attention (P2P) instead of Ulysses (AllToAll).
    #[arg(long)]
    ring: bool,
    /// Expert-parallel degree (MoE models).
    #[arg(long, default_value_t = 1)]
    ep: u32,
    /// Data-parallel degree.
    #[arg(long, default_value_t = 1)]
    dp: u32,
    /// Reduce DP gradients with ReduceScatter (ZeRO/FSDP) instead of AllReduce.
    #[arg(long)]
    zero: bool,
    /// Layers to build (one pipeline stage).
    #[arg(long, default_value_t = 1)]
    layers: u32,
    /// Sequences per micro-batch.
    #[arg(long, default_value_t = 1)]
    micro_batch: u64,
    /// Tokens per sequence.
    #[arg(long, default_value_t = 2048)]
    seq_len: u64,
    /// Forward only (inference prefill) instead of forward + backward.
    #[arg(long)]
    forward_only: bool,
    /// The whole step: embedding, the layers, LM head and loss, and (training) the optimizer.
    #[arg(long)]
    whole_step: bool,
    /// How to print the Report, and where to write its timeline as a Chrome trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// Runs `bubblelab graph`.
///
/// # Errors
/// [`Failure::Input`] naming the flag for a bad model, GPU or layout.
pub fn graph(args: &GraphArgs) -> Result<(), Failure> {
    let model: ModelKind = args
        .model
        .parse()
        .map_err(|e| Failure::Input(format!("--model: {e}")))?;
    let gpu: GpuKind = args
        .gpu
        .parse()
        .map_err(|e| Failure::Input(format!("--gpu: {e}")))?;
    let par = Parallelism {
        tp: args.tp,
        sp: args.sp,
        cp: args.cp,
        cp_kind: if args.ring {
            ContextParallel::Ring
        } else {
            ContextParallel::Ulysses
        },
        ep: args.ep,
        dp: args.dp,
        dp_kind: if args.zero {
            DataParallel::ReduceScatter
        } else {
            DataParallel::AllReduce
        },
        ..Parallelism::default()
    };
    let work = Workload {
        layers: args.layers,
        micro_batch: args.micro_batch,
        seq_len: args.seq_len,
        backward: !args.forward_only,
        whole_step: args.whole_step,
        ..Workload::default()
    };
    let report = model_report(model, &par, &work, &CostModel::new(gpu))
        .map_err(|e| Failure::Input(format!("--{e}")))?;
    crate::run::print_report(&report, &args.output)
}
