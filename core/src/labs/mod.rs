//! The labs and their registry. Each lab owns its parameters (part of [`Scenario`]), its
//! policies or passes (one file each) and a `run` that returns a [`crate::Report`]. The table
//! below is the one list of labs, in the order the playground's navigation and home page show
//! them: its rows give each lab's module, the [`Scenario`] enum, [`LABS`], its presets and
//! card ([`LAB_PRESETS`], [`LAB_CARDS`]), validation, the JSON codec and [`crate::run`]'s
//! dispatch (the `labs!` macro of `scenario.rs`).

crate::scenario::labs! {
    /// Pipeline-parallel schedules and their bubbles.
    pipeline::PipelineParams => Pipeline = "pipeline";
    /// Communication-computation overlap as graph scheduling: Helix against the baselines.
    overlap::OverlapParams => Overlap = "overlap";
    /// Hydro's Bubble Squeezer: tuning trials in the bubbles of a pipeline job.
    bubbles::BubblesParams => Bubbles = "bubbles";
    /// Hydro's tuning side: the μP shrinker, a μTransfer experiment and trial fusion.
    tuning::TuningParams => Tuning = "tuning";
    /// Multi-tenant GPU-cluster scheduling: ASTRAEA against the field's policies.
    fairness::FairnessParams => Fairness = "fairness";
    /// Agentic batch inference on one serving engine: CONCUR's admission control against
    /// unbounded admission and static caps.
    agentic::AgenticParams => Agentic = "agentic";
    /// Fail-slow and fail-stop resilience of hybrid-parallel training: ResiHP's detector and
    /// joint TP/PP/DP re-plan against the baselines.
    resilience::ResilienceParams => Resilience = "resilience";
    /// GPU pause/resume/migrate: FlowGPU's transparent checkpoint (active memory, low point,
    /// dedup) against the reserved pool and framework checkpoint + restart.
    migration::MigrationParams => Migration = "migration";
    /// GPU sharing: FGD's fragmentation-aware packing of GPU-sharing pods against its
    /// artifact's baselines.
    sharing::SharingParams => Sharing = "sharing";
    /// Elastic training: Pollux's goodput-driven choice of every job's GPUs and batch size,
    /// against its artifact's Optimus+Oracle and Tiresias.
    elastic::ElasticParams => Elastic = "elastic";
    /// Inference serving: INFaaS's choice of a model variant per query (accuracy floor,
    /// latency SLO) against a fixed variant per application.
    variants::VariantsParams => Variants = "variants";
    /// The cost-model explorer: one collective and one GEMM on one GPU.
    cost::CostParams => Cost = "cost";
}
