//! Parameters of the agentic lab: the serving engine (model, GPUs, KV blocks, step-time fit), the
//! synthetic agent workload, and the admission controllers to compare.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::controllers::ControllerSpec;
use super::fit::TurnFit;
use super::workload::SyntheticSpec;
use crate::hw::GpuKind;
use crate::scenario::{check_range, ScenarioError};

/// Most GPUs of one engine.
pub const MAX_GPUS: u32 = 64;
/// Most controllers compared in one run (sweep caps included).
pub const MAX_CONTROLLERS: usize = 32;
/// Most agents drawn in the per-agent timeline.
pub const MAX_TIMELINE_AGENTS: u32 = 200;
/// Most KV blocks an engine may have (2³²: block ids fit `u32`).
pub const MAX_BLOCKS: u64 = 1 << 32;
/// Largest step-time coefficient allowed, in its unit (1 s per step, per token, …).
pub const MAX_COEFF_S: f64 = 1.0;

/// The model whose KV cache fills the GPUs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelSpec {
    /// Display name.
    pub name: String,
    /// Total parameter count, billions (weights = params × `weight_dtype_bytes`).
    pub params_billion: f64,
    /// Parameters read and multiplied per token, billions (= `params_billion` for dense models;
    /// the activated experts' share for MoE).
    pub active_params_billion: f64,
    /// Bytes per weight (2 = BF16, 1 = FP8).
    pub weight_dtype_bytes: u32,
    /// Transformer layers holding KV.
    pub layers: u32,
    /// KV heads per layer (GQA; 1 for MLA's joint latent).
    pub kv_heads: u32,
    /// Dimension of one KV head (MLA: latent rank + RoPE dims, 512 + 64 = 576 for DeepSeek-V3).
    pub head_dim: u32,
    /// KV tensors per head: 2 (K and V) for MHA/GQA, 1 for MLA's joint latent.
    pub kv_tensors: u32,
    /// Bytes per KV element (2 = BF16).
    pub kv_dtype_bytes: u32,
    /// Query heads per layer (the heads prefill attention computes).
    pub q_heads: u32,
    /// Dimension of a query/key head in prefill attention (MLA computes prefill in its
    /// decompressed form: 128 no-RoPE + 64 RoPE dims = 192 for DeepSeek-V3).
    pub attn_qk_head_dim: u32,
    /// Dimension of a value head in prefill attention.
    pub attn_v_head_dim: u32,
}

impl ModelSpec {
    /// Qwen3-32B (Qwen team, model card and `config.json` on Hugging Face, 2025): 32.8 B
    /// parameters, 64 layers, 64 query heads and 8 KV heads (GQA), head dim 128, BF16.
    #[must_use]
    pub fn qwen3_32b() -> ModelSpec {
        ModelSpec {
            name: "Qwen3-32B (BF16)".into(),
            params_billion: 32.8,
            active_params_billion: 32.8,
            weight_dtype_bytes: 2,
            layers: 64,
            kv_heads: 8,
            head_dim: 128,
            kv_tensors: 2,
            kv_dtype_bytes: 2,
            q_heads: 64,
            attn_qk_head_dim: 128,
            attn_v_head_dim: 128,
        }
    }

    /// DeepSeek-V3 (DeepSeek-AI, technical report arXiv:2412.19437, 2024): 671 B parameters,
    /// 37 B activated per token, FP8 weights, 61 layers of multi-head latent attention whose
    /// cache is one 512-dim latent plus a 64-dim decoupled RoPE key per token and layer (BF16);
    /// 128 query heads, query/key head dim 128 + 64 (RoPE), value head dim 128 (`config.json`:
    /// `num_attention_heads`, `qk_nope_head_dim`, `qk_rope_head_dim`, `v_head_dim`).
    #[must_use]
    pub fn deepseek_v3() -> ModelSpec {
        ModelSpec {
            name: "DeepSeek-V3 (FP8)".into(),
            params_billion: 671.0,
            active_params_billion: 37.0,
            weight_dtype_bytes: 1,
            layers: 61,
            kv_heads: 1,
            head_dim: 576,
            kv_tensors: 1,
            kv_dtype_bytes: 2,
            q_heads: 128,
            attn_qk_head_dim: 192,
            attn_v_head_dim: 128,
        }
    }

    /// Weight bytes of the whole model.
    #[must_use]
    pub fn weight_bytes(&self) -> f64 {
        self.params_billion * 1e9 * f64::from(self.weight_dtype_bytes)
    }

    /// KV bytes of one token over all layers (before sharding across GPUs).
    #[must_use]
    pub fn kv_bytes_per_token(&self) -> u64 {
        u64::from(self.layers)
            * u64::from(self.kv_heads)
            * u64::from(self.head_dim)
            * u64::from(self.kv_tensors)
            * u64::from(self.kv_dtype_bytes)
    }

    /// FLOPs of prefill attention for one (query token, key token) pair over all layers:
    /// layers · 2 · query heads · (qk head dim + v head dim) (Q·Kᵀ and P·V, a multiply-add each).
    #[must_use]
    pub fn attention_flops_per_pair(&self) -> f64 {
        2.0 * f64::from(self.layers)
            * f64::from(self.q_heads)
            * f64::from(self.attn_qk_head_dim + self.attn_v_head_dim)
    }
}

impl Default for ModelSpec {
    fn default() -> Self {
        ModelSpec::qwen3_32b()
    }
}

/// Engine step time: `a + b·prefill_tokens + c·decode_seqs + d·context_tokens + e·attention
/// pairs`, where a prefill chunk of n tokens after c tokens already in its KV attends
/// n·(c + n/2) (query, key) pairs (causal).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StepTimeFit {
    /// a: fixed time of one step (weights read once per step, launches), ms.
    pub fixed_ms: f64,
    /// b: time per prefilled token, µs.
    pub per_prefill_token_us: f64,
    /// c: time per decoding sequence (one token each), µs.
    pub per_decode_seq_us: f64,
    /// d: time per context token whose KV a scheduled request reads this step, ns.
    pub per_context_token_ns: f64,
    /// e: time per (query, key) pair of prefill attention, ns (0 = attention not charged).
    pub per_attention_pair_ns: f64,
}

/// Share of peak dense BF16 FLOP/s a linear layer reaches in the roofline presets.
pub const ROOFLINE_MFU: f64 = 0.5;
/// Share of peak HBM bandwidth a weight or KV read reaches in the roofline presets.
pub const ROOFLINE_HBM_EFFICIENCY: f64 = 0.8;

impl StepTimeFit {
    /// The coefficients a roofline on datasheet figures gives (docs/MODEL.md, "Agentic lab"):
    /// a = weights / (G · HBM B/s · 0.8); b = c = 2 · active params / (G · peak BF16 · 0.5);
    /// d = KV bytes per token per GPU / (HBM B/s · 0.8); e = attention FLOPs per pair /
    /// (G · peak BF16 · 0.5) (heads split across the G tensor-parallel GPUs).
    #[must_use]
    pub fn roofline(model: &ModelSpec, gpu: GpuKind, gpus: u32, kv_shards: u32) -> StepTimeFit {
        let p = gpu.profile();
        let g = f64::from(gpus.max(1));
        let hbm = p.hbm_bytes_per_s * ROOFLINE_HBM_EFFICIENCY;
        let per_token_s =
            2.0 * model.active_params_billion * 1e9 / (g * p.peak_bf16_flops_per_s * ROOFLINE_MFU);
        let kv_per_gpu = model.kv_bytes_per_token() as f64 / f64::from(kv_shards.max(1));
        let attention_s =
            model.attention_flops_per_pair() / (g * p.peak_bf16_flops_per_s * ROOFLINE_MFU);
        StepTimeFit {
            fixed_ms: round3(model.weight_bytes() / (g * hbm) * 1e3),
            per_prefill_token_us: round3(per_token_s * 1e6),
            per_decode_seq_us: round3(per_token_s * 1e6),
            per_context_token_ns: round3(kv_per_gpu / hbm * 1e9),
            per_attention_pair_ns: round4(attention_s * 1e9),
        }
    }

    /// Step time without prefill attention, ns (before rounding).
    #[must_use]
    pub fn linear_ns(&self, prefill_tokens: u64, decode_seqs: u64, context_tokens: u64) -> f64 {
        self.fixed_ms * 1e6
            + self.per_prefill_token_us * 1e3 * prefill_tokens as f64
            + self.per_decode_seq_us * 1e3 * decode_seqs as f64
            + self.per_context_token_ns * context_tokens as f64
    }

    /// Prefill attention time of `pairs` (query, key) pairs, ns (before rounding).
    #[must_use]
    pub fn attention_ns(&self, pairs: f64) -> f64 {
        self.per_attention_pair_ns * pairs
    }
}

fn round3(v: f64) -> f64 {
    crate::units::round_to(v, 3)
}

fn round4(v: f64) -> f64 {
    crate::units::round_to(v, 4)
}

/// The (query, key) pairs a causal prefill chunk of `chunk` tokens attends after `cached`
/// tokens already in its KV: chunk · (cached + chunk / 2).
#[must_use]
pub fn attention_pairs(cached: u64, chunk: u64) -> f64 {
    chunk as f64 * (cached as f64 + chunk as f64 / 2.0)
}

impl Default for StepTimeFit {
    fn default() -> Self {
        EngineSpec::qwen3_32b_h100().step_time
    }
}

crate::kinds! {
    /// Which serving engine's scheduler and cache the engine follows.
    #[derive(Default)]
    pub enum EngineMode as "engine mode" {
        /// vLLM V1: paged blocks with a hashed prefix cache, decodes and prefill chunks in one
        /// token budget, preemption of the newest request by recompute.
        #[default]
        VllmV1 = "vllm-v1", "vLLM V1";
        /// SGLang: a radix-tree prefix cache (page size = `block_tokens`, SGLang's default 1),
        /// future decode tokens reserved at admission, prefill and decode batches apart,
        /// retraction of decoding requests under memory pressure. CONCUR's experiments ran on
        /// SGLang (§5.1).
        Sglang = "sglang", "SGLang";
    }
}

/// The serving engine: model on GPUs, paged KV blocks with a prefix cache, continuous batching.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineSpec {
    /// The engine's scheduler and cache.
    pub mode: EngineMode,
    /// The model.
    pub model: ModelSpec,
    /// GPU profile (`a100`, `h100`, `h200`): its HBM size sets the KV capacity.
    pub gpu: GpuKind,
    /// GPUs serving the model (tensor parallel).
    pub gpus: u32,
    /// GPUs one token's KV is split across: the TP degree for GQA when KV heads ≥ TP; 1 when
    /// every GPU holds a full copy (MLA under tensor parallelism).
    pub kv_shards: u32,
    /// Share of each GPU's HBM not given to weights and KV (activations, CUDA graphs, NCCL):
    /// vLLM's `1 − gpu_memory_utilization`, 0.1 by default.
    pub reserve_fraction: f64,
    /// Tokens per KV block (vLLM's default 16).
    pub block_tokens: u32,
    /// KV capacity in tokens; 0 = derived from memory (GPU HBM − weights − reserve).
    pub kv_capacity_tokens: u64,
    /// Most tokens one step may schedule (vLLM V1's `max_num_batched_tokens`, 8,192 for the
    /// OpenAI server on ≥ 70 GiB GPUs): decodes first, then prefill chunks.
    pub max_batched_tokens: u32,
    /// Most requests running at once (vLLM's `max_num_seqs`, 256; SGLang's
    /// `max_running_requests`).
    pub max_running_requests: u32,
    /// SGLang: the requests' `max_new_tokens` (the client's `max_tokens`) from which the
    /// scheduler reserves future decode tokens (at most 4,096 per request); unused by vLLM.
    pub max_new_tokens: u32,
    /// The step-time fit.
    pub step_time: StepTimeFit,
}

impl EngineSpec {
    /// Qwen3-32B (BF16) on 2 × H100 SXM, tensor parallel 2, roofline step time.
    #[must_use]
    pub fn qwen3_32b_h100() -> EngineSpec {
        let model = ModelSpec::qwen3_32b();
        let step_time = StepTimeFit::roofline(&model, GpuKind::H100, 2, 2);
        EngineSpec {
            mode: EngineMode::VllmV1,
            model,
            gpu: GpuKind::H100,
            gpus: 2,
            kv_shards: 2,
            reserve_fraction: 0.1,
            block_tokens: 16,
            kv_capacity_tokens: 0,
            max_batched_tokens: 8_192,
            max_running_requests: 256,
            max_new_tokens: 4_096,
            step_time,
        }
    }

    /// DeepSeek-V3 (FP8) on 8 × H200 SXM, tensor parallel 8 (every GPU holds the MLA latent
    /// cache), roofline step time.
    #[must_use]
    pub fn deepseek_v3_h200() -> EngineSpec {
        let model = ModelSpec::deepseek_v3();
        let step_time = StepTimeFit::roofline(&model, GpuKind::H200, 8, 1);
        EngineSpec {
            mode: EngineMode::VllmV1,
            model,
            gpu: GpuKind::H200,
            gpus: 8,
            kv_shards: 1,
            reserve_fraction: 0.1,
            block_tokens: 16,
            kv_capacity_tokens: 0,
            max_batched_tokens: 8_192,
            max_running_requests: 256,
            max_new_tokens: 4_096,
            step_time,
        }
    }

    /// `model` served by SGLang with tensor parallelism over `tp` H100 SXM GPUs (CONCUR's testbed,
    /// §5.1), roofline step time. KV pool: SGLang 0.4's default `mem_fraction_static` on an
    /// 80 GB GPU keeps (9.5 + tp/2) GB out of the pool (`server_args.py`), so `reserve_fraction`
    /// = (9.5 + tp/2) / 80; radix cache with page size 1; `max_running_requests` 4,096 (what
    /// SGLang's default resolves to for these pools); `max_new_tokens` 4,096 (the clip of its
    /// future-token estimate, what an OpenAI client that sets no `max_tokens` reserves).
    #[must_use]
    pub fn sglang_h100(model: ModelSpec, tp: u32, kv_shards: u32) -> EngineSpec {
        let step_time = StepTimeFit::roofline(&model, GpuKind::H100, tp, kv_shards);
        EngineSpec {
            mode: EngineMode::Sglang,
            model,
            gpu: GpuKind::H100,
            gpus: tp,
            kv_shards,
            reserve_fraction: round4((9.5 + f64::from(tp) / 2.0) / 80.0),
            block_tokens: 1,
            kv_capacity_tokens: 0,
            max_batched_tokens: 8_192,
            max_running_requests: 4_096,
            max_new_tokens: 4_096,
            step_time,
        }
    }

    /// KV bytes one token takes on one GPU.
    #[must_use]
    pub fn kv_bytes_per_token_per_gpu(&self) -> u64 {
        self.model
            .kv_bytes_per_token()
            .div_ceil(u64::from(self.kv_shards.max(1)))
    }

    /// Free HBM per GPU for KV: HBM × (1 − reserve) − weights / GPUs, bytes (may be ≤ 0).
    #[must_use]
    pub fn kv_bytes_per_gpu(&self) -> f64 {
        let hbm = self.gpu.profile().hbm_bytes as f64;
        hbm * (1.0 - self.reserve_fraction)
            - self.model.weight_bytes() / f64::from(self.gpus.max(1))
    }

    /// KV capacity in blocks (the override, or what memory allows).
    #[must_use]
    pub fn capacity_blocks(&self) -> u64 {
        let tokens = if self.kv_capacity_tokens > 0 {
            self.kv_capacity_tokens
        } else {
            let per_token = self.kv_bytes_per_token_per_gpu().max(1) as f64;
            let free = self.kv_bytes_per_gpu();
            if free <= 0.0 {
                0
            } else {
                libm::floor(free / per_token) as u64
            }
        };
        tokens / u64::from(self.block_tokens.max(1))
    }
}

impl Default for EngineSpec {
    fn default() -> Self {
        EngineSpec::qwen3_32b_h100()
    }
}

crate::kinds! {
    /// Whether agents start together (batch inference) or when the trace says.
    #[derive(Default)]
    pub enum Arrivals as "arrivals" {
        /// Every agent is submitted at time 0 (agentic batch inference).
        #[default]
        Batch = "batch";
        /// Each agent arrives at its first request's time in the workload.
        Trace = "trace";
    }
}

/// The latency objectives of the goodput metric: a request meets its SLO when its
/// time to first token and its time per output token are both within them. The paper states no
/// SLO (it measures batch completion); these defaults are ours, for an interactive agent loop.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LatencySlo {
    /// Longest time to first token (submission → first generated token), s.
    pub ttft_s: f64,
    /// Longest mean time per output token after the first, ms.
    pub tpot_ms: f64,
}

impl Default for LatencySlo {
    fn default() -> Self {
        LatencySlo {
            ttft_s: 10.0,
            tpot_ms: 200.0,
        }
    }
}

/// An agentic batch on one serving engine and the admission controllers to compare.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgenticParams {
    /// The serving engine.
    pub engine: EngineSpec,
    /// The synthetic agents (used when no trace is uploaded).
    pub synthetic: SyntheticSpec,
    /// Batch submission or the workload's arrival times.
    pub arrivals: Arrivals,
    /// Controllers to run on the same workload, in display order.
    pub controllers: Vec<ControllerSpec>,
    /// Static caps to sweep for the best cap in hindsight (empty = no sweep).
    pub sweep_caps: Vec<u32>,
    /// Interval at which controllers read the engine's signals and time series are sampled, s.
    pub control_interval_s: f64,
    /// Agents (lowest ids) drawn in the per-agent timeline of each controller.
    pub timeline_agents: u32,
    /// Latency objectives of the goodput metric.
    pub slo: LatencySlo,
    /// The engine-alone batch time the synthetic agents' turn count is fitted to (off by default).
    pub fit: TurnFit,
}

impl Default for AgenticParams {
    fn default() -> Self {
        AgenticParams {
            engine: EngineSpec::default(),
            synthetic: SyntheticSpec::default(),
            arrivals: Arrivals::Batch,
            controllers: alloc::vec![
                ControllerSpec::Unbounded,
                ControllerSpec::Concur(super::controllers::ConcurParams::default()),
            ],
            sweep_caps: Vec::new(),
            control_interval_s: 2.0,
            timeline_agents: 16,
            slo: LatencySlo::default(),
            fit: TurnFit::default(),
        }
    }
}

impl AgenticParams {
    /// The control interval, ns.
    #[must_use]
    pub fn interval_ns(&self) -> u64 {
        crate::units::nanos_from_f64(self.control_interval_s * 1e9).0
    }

    /// The per-token latency objective, ns (Clipper's AIMD steers against it).
    #[must_use]
    pub fn step_objective_ns(&self) -> u64 {
        crate::units::nanos_from_f64(self.slo.tpot_ms * 1e6).0
    }
}

pub(crate) fn field(path: &str, message: String) -> ScenarioError {
    ScenarioError::field(format!("agentic.{path}"), message)
}

impl EngineSpec {
    /// Checks the engine's rules the field table cannot state (bounds set by other fields, a
    /// step that takes time, memory left for KV); [`AgenticParams::validate`] checks the ranges.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path `agentic.engine.<field>`.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let m = &self.model;
        if m.name.len() > 200 {
            return Err(field(
                "engine.model.name",
                "must be at most 200 characters".into(),
            ));
        }
        check_range(
            "agentic",
            "engine.model.active_params_billion",
            m.active_params_billion,
            0.001,
            m.params_billion.max(0.001),
        )?;
        check_range("agentic", "engine.kv_shards", self.kv_shards, 1, self.gpus)?;
        let s = &self.step_time;
        if s.linear_ns(1, 0, 0) < 1.0 && s.linear_ns(0, 1, 0) < 1.0 {
            return Err(field(
                "engine.step_time",
                "a step must take time: give fixed_ms, per_prefill_token_us or per_decode_seq_us > 0"
                    .into(),
            ));
        }
        let blocks = self.capacity_blocks();
        if blocks == 0 {
            return Err(field(
                "engine.gpus",
                format!(
                    "no memory left for KV: {} GB of weights on {} × {} with reserve {} leave {:.1} GB per GPU",
                    libm::round(m.weight_bytes() / 1e9),
                    self.gpus,
                    self.gpu.label(),
                    self.reserve_fraction,
                    self.kv_bytes_per_gpu() / 1e9
                ),
            ));
        }
        if blocks > MAX_BLOCKS {
            return Err(field(
                "engine.kv_capacity_tokens",
                format!("the KV capacity must be at most {MAX_BLOCKS} blocks, got {blocks}"),
            ));
        }
        Ok(())
    }
}

impl AgenticParams {
    /// Checks every field except the synthetic workload's.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the first bad field.
    pub fn validate_simulation(&self) -> Result<(), ScenarioError> {
        let simulation: Vec<crate::fields::Field> = super::fields::FIELDS
            .iter()
            .filter(|f| !f.path.starts_with("synthetic."))
            .copied()
            .collect();
        crate::fields::check("agentic", &simulation, &crate::scenario::to_value(self))?;
        self.engine.validate()?;
        if self.controllers.is_empty() && self.sweep_caps.is_empty() {
            return Err(field(
                "controllers",
                "must name at least one controller (unbounded, static-cap, request-cap, concur, aimd-history, clipper-aimd) or give sweep_caps"
                    .into(),
            ));
        }
        if self.controllers.len() + self.sweep_caps.len() > MAX_CONTROLLERS {
            return Err(field(
                "controllers",
                format!(
                    "controllers + sweep_caps must be at most {MAX_CONTROLLERS}, got {} + {}",
                    self.controllers.len(),
                    self.sweep_caps.len()
                ),
            ));
        }
        for (i, c) in self.controllers.iter().enumerate() {
            c.validate(&format!("controllers[{i}]"))?;
            if self.controllers[..i].contains(c) {
                return Err(field(
                    &format!("controllers[{i}]"),
                    format!("`{}` is listed twice", c.id()),
                ));
            }
        }
        for (i, &cap) in self.sweep_caps.iter().enumerate() {
            check_range("agentic", &format!("sweep_caps[{i}]"), cap, 1, 1_000_000)?;
            if self.sweep_caps[..i].contains(&cap) {
                return Err(field(
                    &format!("sweep_caps[{i}]"),
                    format!("cap {cap} is listed twice"),
                ));
            }
        }
        Ok(())
    }

    /// Checks every field, the synthetic workload's included.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the first bad field.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check("agentic", super::fields::FIELDS, &crate::scenario::to_value(self))?;
        self.validate_simulation()?;
        self.synthetic.validate()?;
        self.fit.validate(&self.synthetic)
    }
}
