//! The μP shrinker: a model's layer list, a shrink ratio, and the per-layer μP rules that let
//! hyperparameters tuned on the narrow surrogate transfer to the wide target.
//!
//! The rules are those of Tensor Programs V (Yang et al. 2022, arXiv:2203.03466), Table 3, in
//! the "output multiplier" form of the `mup` package (the readout's `1/fan_in²` initialisation
//! and `1/fan_in` Adam learning rate are moved into a forward multiplier `1/m`; see
//! docs/MODEL.md, "Tuning lab", for the table and the derivation). Every multiplier is relative
//! to the surrogate: with width multiplier `m = target width / surrogate width`, a learning
//! rate η tuned on the surrogate becomes η × multiplier on the target.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::scenario::ScenarioError;

/// Most layers in one model description.
pub const MAX_LAYERS: usize = 256;
/// Largest layer dimension accepted.
pub const MAX_DIM: u32 = 1 << 24;
/// Largest shrink ratio.
pub const MAX_RATIO: u32 = 4096;

crate::kinds! {
    /// What role a layer plays, which decides which of its dimensions grow with width.
    pub enum LayerClass as "layer class" {
        /// Input weights (token embedding, first linear layer): fan-in fixed, fan-out = width.
        Embedding = "embedding";
        /// Hidden matmuls: fan-in and fan-out both grow with width.
        Hidden = "hidden";
        /// Output / readout weights: fan-in = width, fan-out fixed (vocabulary, classes).
        Readout = "readout";
        /// Normalisation gains: a vector of width entries.
        Norm = "norm";
        /// Biases: a vector of width entries.
        Bias = "bias";
    }
}

impl LayerClass {
    /// Whether the fan-in grows with width.
    #[must_use]
    pub fn fan_in_scales(self) -> bool {
        matches!(self, LayerClass::Hidden | LayerClass::Readout)
    }

    /// Whether the fan-out (the vector length, for norms and biases) grows with width.
    #[must_use]
    pub fn fan_out_scales(self) -> bool {
        !matches!(self, LayerClass::Readout)
    }

    /// The μP rule of this class at width multiplier `m` (target / surrogate).
    #[must_use]
    pub fn mup_rule(self, m: f64) -> MupRule {
        match self {
            // Input weights and all vector-like parameters: init variance 1/fan_in with fan_in
            // fixed (weights) or a constant init (gains 1, biases 0); SGD LR ∝ fan_out = m;
            // Adam LR constant.
            LayerClass::Embedding | LayerClass::Norm | LayerClass::Bias => MupRule {
                init_var_mult: 1.0,
                sgd_lr_mult: m,
                adam_lr_mult: 1.0,
                output_mult: 1.0,
            },
            // Hidden weights: init variance 1/fan_in (shrinks with width exactly as in SP, so
            // the multiplier against the surrogate's 1/fan_in rule is 1); SGD LR constant; Adam
            // LR ∝ 1/fan_in = 1/m.
            LayerClass::Hidden => MupRule {
                init_var_mult: 1.0,
                sgd_lr_mult: 1.0,
                adam_lr_mult: 1.0 / m,
                output_mult: 1.0,
            },
            // Readout in multiplier form (Tensor Programs V, Table 8; the `mup` package's
            // `MuReadout`): forward multiplier 1/m on a weight whose init variance stays the
            // surrogate's 1/fan_in (m/fan_in at the target), so the effective variance is
            // 1/(m·fan_in_surrogate·m) ∝ 1/fan_in²; Adam LR constant (effective step 1/m ∝
            // 1/fan_in), SGD LR × m (effective 1/fan_in, the gradient being 1/m too).
            LayerClass::Readout => MupRule {
                init_var_mult: m,
                sgd_lr_mult: m,
                adam_lr_mult: 1.0,
                output_mult: 1.0 / m,
            },
        }
    }
}

/// μP's prescription for one layer class, each a multiplier on the surrogate's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MupRule {
    /// Multiplier on the initialisation variance rule `1/fan_in` (as computed at each width).
    pub init_var_mult: f64,
    /// Multiplier on the SGD learning rate.
    pub sgd_lr_mult: f64,
    /// Multiplier on the Adam learning rate.
    pub adam_lr_mult: f64,
    /// Multiplier on the layer's output in the forward pass.
    pub output_mult: f64,
}

impl MupRule {
    /// The rule of a parameter with no width-sized dimension (e.g. the readout's bias, whose
    /// length is the output dimension): nothing scales (the `mup` package's `fixed_p` group).
    pub const FIXED: MupRule = MupRule {
        init_var_mult: 1.0,
        sgd_lr_mult: 1.0,
        adam_lr_mult: 1.0,
        output_mult: 1.0,
    };
}

/// One layer (or a group of identical layers) of the target model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerSpec {
    /// Display name, e.g. `mlp.up`.
    pub name: String,
    /// Its class.
    pub class: LayerClass,
    /// Inputs per output unit (1 for norms and biases).
    pub fan_in: u32,
    /// Outputs (the vector length for norms and biases).
    pub fan_out: u32,
    /// How many identical copies the model has (e.g. one per transformer block).
    pub repeat: u32,
}

impl LayerSpec {
    fn new(name: &str, class: LayerClass, fan_in: u32, fan_out: u32, repeat: u32) -> LayerSpec {
        LayerSpec {
            name: name.into(),
            class,
            fan_in,
            fan_out,
            repeat,
        }
    }

    /// Parameters of all copies.
    #[must_use]
    pub fn params(&self) -> u64 {
        u64::from(self.fan_in) * u64::from(self.fan_out) * u64::from(self.repeat)
    }
}

/// The target model and how much to shrink it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShrinkerParams {
    /// Display name of the target model.
    pub model: String,
    /// Width multiplier m: every width-dimension of the surrogate is the target's divided by it.
    pub ratio: u32,
    /// The target's layers.
    pub layers: Vec<LayerSpec>,
}

impl Default for ShrinkerParams {
    fn default() -> Self {
        ShrinkerParams::gpt2_small(8)
    }
}

impl ShrinkerParams {
    /// GPT-2 small (Radford et al. 2019: 12 layers, width 768, vocabulary 50,257, MLP 4×),
    /// untied embedding and readout, position embedding and attention biases left out.
    #[must_use]
    pub fn gpt2_small(ratio: u32) -> ShrinkerParams {
        use LayerClass::{Bias, Embedding, Hidden, Norm, Readout};
        let d = 768;
        ShrinkerParams {
            model: "GPT-2 small (width 768, 12 blocks)".into(),
            ratio,
            layers: alloc::vec![
                LayerSpec::new("token embedding", Embedding, 50_257, d, 1),
                LayerSpec::new("attn.qkv", Hidden, d, 3 * d, 12),
                LayerSpec::new("attn.out", Hidden, d, d, 12),
                LayerSpec::new("mlp.up", Hidden, d, 4 * d, 12),
                LayerSpec::new("mlp.down", Hidden, 4 * d, d, 12),
                LayerSpec::new("mlp biases", Bias, 1, 4 * d, 12),
                LayerSpec::new("layer norm gains", Norm, 1, d, 25),
                LayerSpec::new("readout", Readout, d, 50_257, 1),
            ],
        }
    }

    /// Checks the ratio and that every width-dimension divides by it.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `tuning.shrinker.<field>`.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        super::fields::check_part("shrinker", self)?;
        if self.layers.is_empty() || self.layers.len() > MAX_LAYERS {
            return Err(ScenarioError::field(
                "tuning.shrinker.layers",
                format!(
                    "must list between 1 and {MAX_LAYERS} layers, got {}",
                    self.layers.len()
                ),
            ));
        }
        for (i, l) in self.layers.iter().enumerate() {
            let path = |f: &str| format!("tuning.shrinker.layers[{i}].{f}");
            for (name, v) in [("fan_in", l.fan_in), ("fan_out", l.fan_out)] {
                if !(1..=MAX_DIM).contains(&v) {
                    return Err(ScenarioError::field(
                        path(name),
                        format!("must be between 1 and {MAX_DIM}, got {v}"),
                    ));
                }
            }
            if !(1..=1024).contains(&l.repeat) {
                return Err(ScenarioError::field(
                    path("repeat"),
                    format!("must be between 1 and 1024, got {}", l.repeat),
                ));
            }
            if matches!(l.class, LayerClass::Norm | LayerClass::Bias) && l.fan_in != 1 {
                return Err(ScenarioError::field(
                    path("fan_in"),
                    format!("a {} vector has fan_in 1, got {}", l.class.id(), l.fan_in),
                ));
            }
            for (name, v, scales) in [
                ("fan_in", l.fan_in, l.class.fan_in_scales()),
                ("fan_out", l.fan_out, l.class.fan_out_scales()),
            ] {
                if scales && v % self.ratio != 0 {
                    return Err(ScenarioError::field(
                        path(name),
                        format!(
                            "{v} is a width dimension of a {} layer and must divide by the shrink ratio {}",
                            l.class.id(),
                            self.ratio
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One layer of the shrunk surrogate, with the rules that carry its tuned hyperparameters to
/// the target.
#[derive(Clone, Debug, PartialEq)]
pub struct ShrunkLayer {
    /// The target's layer.
    pub target: LayerSpec,
    /// The surrogate's layer.
    pub surrogate: LayerSpec,
    /// μP's rule at the shrink ratio.
    pub rule: MupRule,
    /// Standard deviation of the target's initialisation (0 for biases, which start at 0; 1
    /// would be the gain, reported as 0 spread for norms).
    pub target_init_std: f64,
    /// Standard deviation of the surrogate's initialisation.
    pub surrogate_init_std: f64,
}

/// Shrinks a validated model description.
///
/// # Errors
/// As [`ShrinkerParams::validate`].
pub fn shrink(p: &ShrinkerParams) -> Result<Vec<ShrunkLayer>, ScenarioError> {
    p.validate()?;
    Ok(shrink_valid(p))
}

/// [`shrink`] of a description known to be valid (a built-in one).
pub(crate) fn shrink_valid(p: &ShrinkerParams) -> Vec<ShrunkLayer> {
    let ratio = p.ratio.max(1);
    let m = f64::from(ratio);
    p.layers
        .iter()
        .map(|l| {
            let mut s = l.clone();
            if l.class.fan_in_scales() {
                s.fan_in /= ratio;
            }
            if l.class.fan_out_scales() {
                s.fan_out /= ratio;
            }
            let rule = l.class.mup_rule(m);
            // The surrogate is its own base (m = 1): variance 1/fan_in; the target's is the
            // rule's multiple of its own 1/fan_in.
            let std = |var_mult: f64, fan_in: u32| match l.class {
                LayerClass::Norm | LayerClass::Bias => 0.0,
                _ => libm::sqrt(var_mult / f64::from(fan_in)),
            };
            ShrunkLayer {
                target_init_std: std(rule.init_var_mult, l.fan_in),
                surrogate_init_std: std(1.0, s.fan_in),
                target: l.clone(),
                surrogate: s,
                rule,
            }
        })
        .collect()
}
