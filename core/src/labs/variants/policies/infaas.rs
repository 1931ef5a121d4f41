//! INFaaS's model-less selection as its artifact runs it (stanford-mast/INFaaS at 4c5ff7b,
//! `src/master/queryfe_server.cc`, the use-case query `gpar_lat_acc_search` l. 171–588 and the
//! dispatch of `QueryOnline` l. 1235–1300 under the default decision mode
//! `GPUSHARETRIGGER_SKIPBLIST`, `start_infaas.sh` l. 21):
//!
//! 1. **Recent variants first.** The last five variants chosen (an LRU list, `gmod_max_lru`)
//!    are tried in order: the first that takes the batch, meets the accuracy and the latency
//!    rule below and is running wins — as not running (a new instance) when its least-loaded
//!    instance is blacklisted and it is a GPU variant, skipped when a CPU variant's is.
//! 2. **Accuracy bins.** Otherwise the candidates are the variants of the first non-empty
//!    accuracy bin ({0, 50, 70, 75, 78, 100}, `redis_metadata.h` l. 83) at or above the
//!    query's floor with accuracy ≥ the floor, in ascending accuracy, at most max(3,
//!    0.15·SLO / 0.6 ms) of them (`redis_metadata.cc` l. 787–827).
//! 3. **Latency rule.** A variant's latency is slope·b + intercept with b the query's batch
//!    for a CPU variant (max batch > 64) and min(32, max batch) otherwise; it must be within
//!    the SLO, and an SLO over 100 ms skips variants faster than 100 ms ("don't pick GPU for
//!    CPU constraint").
//! 4. **Score.** A running variant whose least-loaded instance is not blacklisted scores its
//!    slack, SLO − latency; a blacklisted GPU variant scores its slack too but is started anew;
//!    a variant not running scores 1000 ms + load + latency, and only when its max batch is
//!    the smallest seen so far. The least score wins; with a loose SLO (> 100 ms), nothing
//!    running and no CPU variant blacklisted, the CPU variant (max batch 128) with the least
//!    load + latency is started instead.
//! 5. **Dispatch** (l. 1235–1400). A running variant's query goes to one of its three
//!    least-loaded instances (by last reported QPS), shuffled (the artifact seeds its shuffles
//!    from the clock; here from the scenario's seed). Otherwise it goes to a machine that
//!    loads the variant unless it holds it already: for a GPU variant (max batch < 64) a GPU
//!    machine at random (the artifact shuffles its ten least-utilised), for a CPU variant the
//!    least-utilised CPU machine other than the one picked last.
//!
//! Left out: the worker autoscaler (replicating or upgrading an overloaded variant, scaling
//! down idle ones), worker-level blacklists and the VM autoscaler (the machines are a fixed
//! pool); CPU variants run on CPU machines only.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use rand::seq::SliceRandom;
use rand_pcg::Pcg64Mcg;

use super::{profiled_ms, InstanceView, MachineView, Route, Selector, Views};
use crate::labs::variants::params::{App, Hardware, Variant};

/// The accuracy bins' bounds, % (`redis_metadata.h` l. 83–84).
pub const ACCURACY_BINS: [f64; 6] = [0.0, 50.0, 70.0, 75.0, 78.0, 100.0];
/// Variants the recent list keeps (`gmod_max_lru`).
pub const RECENT: usize = 5;
/// Search time per candidate the result cap assumes, ms (`gmod_md_lat`).
const SEARCH_MS_PER_VARIANT: f64 = 0.600;
/// The penalty that keeps variants not running behind running ones, ms.
const NOT_RUNNING_PENALTY_MS: f64 = 1000.0;
/// An SLO above this is loose: variants faster than it are left to tighter SLOs, ms.
const LOOSE_SLO_MS: f64 = 100.0;
/// The max batch of the CPU variants the loose-SLO rule starts.
const CPU_MAX_BATCH: u32 = 128;

/// INFaaS's selection state: the recently chosen variants (none for a fresh master).
#[derive(Default)]
pub struct Infaas {
    recent: VecDeque<usize>,
    /// The CPU machine picked for the last load.
    last_cpu_machine: Option<usize>,
}

/// A chosen variant and whether it is to run on an instance it already has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The variant (index into the catalogue).
    pub variant: usize,
    /// Whether the query goes to a running instance (else a new one is started).
    pub running: bool,
}

impl Infaas {
    /// The variant for a query of `app` with `batch` items, or `None` when none qualifies.
    pub fn choose(
        &mut self,
        app: &App,
        batch: u32,
        variants: &[Variant],
        instances: &[InstanceView],
    ) -> Option<Choice> {
        let choice = self
            .recent_choice(app, batch, variants, instances)
            .or_else(|| search(app, batch, variants, instances))?;
        self.recent.retain(|&v| v != choice.variant);
        if self.recent.len() == RECENT {
            self.recent.pop_back();
        }
        self.recent.push_front(choice.variant);
        Some(choice)
    }

    /// Step 1: the first recent variant that qualifies and is running.
    fn recent_choice(
        &self,
        app: &App,
        batch: u32,
        variants: &[Variant],
        instances: &[InstanceView],
    ) -> Option<Choice> {
        for &v in &self.recent {
            let variant = &variants[v];
            if variant.max_batch < batch
                || variant.accuracy_pct < app.min_accuracy_pct
                || latency_ms(variant, batch, app.slo_ms).is_none()
            {
                continue;
            }
            match least_loaded(v, instances) {
                None => {}
                Some(i) if !i.blacklisted => return Some(Choice { variant: v, running: true }),
                Some(_) if variant.max_batch < 64 => {
                    return Some(Choice { variant: v, running: false })
                }
                Some(_) => {}
            }
        }
        None
    }
}

/// The variant's latency for the query if it passes step 3, ms.
#[must_use]
pub fn latency_ms(variant: &Variant, batch: u32, slo_ms: f64) -> Option<f64> {
    let b = if variant.max_batch > 64 {
        batch
    } else {
        variant.max_batch.min(32)
    };
    let ms = profiled_ms(variant, b);
    let too_fast = slo_ms > LOOSE_SLO_MS && ms < LOOSE_SLO_MS;
    (ms <= slo_ms && !too_fast).then_some(ms)
}

/// The bin of an accuracy: the first whose bounds hold it, else the last
/// (`redis_metadata.cc` l. 580–585 and 792–797).
#[must_use]
pub fn accuracy_bin(accuracy_pct: f64) -> usize {
    (0..ACCURACY_BINS.len() - 2)
        .find(|&i| accuracy_pct >= ACCURACY_BINS[i] && accuracy_pct <= ACCURACY_BINS[i + 1])
        .unwrap_or(ACCURACY_BINS.len() - 2)
}

/// Step 2: the candidates of the first non-empty bin, ascending by accuracy (then name, as
/// Redis orders equal scores).
#[must_use]
pub fn candidates(variants: &[Variant], min_accuracy_pct: f64, slo_ms: f64) -> Vec<usize> {
    // The cap is computed in 16 bits and passed on in 8 (`gpar_acc_bin`'s `int8_t`); Redis
    // returns everything for a negative count.
    let cap = ((slo_ms * 0.15 / SEARCH_MS_PER_VARIANT) as i16).max(3) as i8;
    for bin in accuracy_bin(min_accuracy_pct)..ACCURACY_BINS.len() - 1 {
        let mut members: Vec<usize> = (0..variants.len())
            .filter(|&i| accuracy_bin(variants[i].accuracy_pct) == bin)
            .filter(|&i| variants[i].accuracy_pct >= min_accuracy_pct)
            .collect();
        members.sort_by(|&a, &b| {
            let (va, vb) = (&variants[a], &variants[b]);
            va.accuracy_pct
                .total_cmp(&vb.accuracy_pct)
                .then_with(|| va.name.cmp(&vb.name))
        });
        if cap >= 0 {
            members.truncate(cap as usize);
        }
        if !members.is_empty() {
            return members;
        }
    }
    Vec::new()
}

/// The least-loaded instance of variant `v` (by reported QPS, then index), if it runs.
fn least_loaded(v: usize, instances: &[InstanceView]) -> Option<&InstanceView> {
    instances
        .iter()
        .filter(|i| i.variant == v)
        .min_by(|a, b| a.qps.total_cmp(&b.qps))
}

/// Steps 2–4: the full search.
fn search(app: &App, batch: u32, variants: &[Variant], instances: &[InstanceView]) -> Option<Choice> {
    let slo = app.slo_ms;
    let mut best: Option<(Choice, f64)> = None;
    let mut best_cpu: Option<(usize, f64)> = None;
    let mut min_batch = 512;
    let mut running_found = false;
    let mut cpu_blacklisted = false;
    for v in candidates(variants, app.min_accuracy_pct, slo) {
        let variant = &variants[v];
        if variant.max_batch < batch {
            continue;
        }
        let better_batch = variant.max_batch < min_batch;
        min_batch = min_batch.min(variant.max_batch);
        let Some(ms) = latency_ms(variant, batch, slo) else {
            continue;
        };
        let score = best.map_or(100_000.0, |(_, s)| s);
        match least_loaded(v, instances) {
            Some(i) if !i.blacklisted => {
                if slo - ms < score {
                    best = Some((Choice { variant: v, running: true }, slo - ms));
                    running_found = true;
                }
            }
            Some(_) if variant.max_batch > 64 => cpu_blacklisted = true,
            Some(_) => {
                if slo - ms < score {
                    best = Some((Choice { variant: v, running: false }, slo - ms));
                }
            }
            None => {
                let total = NOT_RUNNING_PENALTY_MS + variant.load_ms + ms;
                if better_batch && total < score {
                    best = Some((Choice { variant: v, running: false }, total));
                }
                if slo > LOOSE_SLO_MS
                    && variant.max_batch == CPU_MAX_BATCH
                    && best_cpu.is_none_or(|(_, t)| total < t)
                {
                    best_cpu = Some((v, total));
                }
            }
        }
    }
    match best_cpu {
        Some((v, _)) if !running_found && !cpu_blacklisted => Some(Choice { variant: v, running: false }),
        _ => best.map(|(c, _)| c),
    }
}

impl Infaas {
    /// The machine that loads (or already holds) a variant of `hardware` that is not running.
    fn place(&mut self, hardware: Hardware, machines: &[MachineView], rng: &mut Pcg64Mcg) -> Option<usize> {
        let mut pool: Vec<usize> = (0..machines.len()).filter(|&m| machines[m].hardware == hardware).collect();
        match hardware {
            Hardware::Gpu => {
                pool.shuffle(rng);
                pool.first().copied()
            }
            Hardware::Cpu => {
                pool.sort_by(|&a, &b| machines[a].utilisation.total_cmp(&machines[b].utilisation).then(a.cmp(&b)));
                let pick = if pool.len() > 1 {
                    pool.iter().copied().find(|&m| Some(m) != self.last_cpu_machine)
                } else {
                    pool.first().copied()
                };
                if pick.is_some() {
                    self.last_cpu_machine = pick;
                }
                pick
            }
        }
    }
}

impl Selector for Infaas {
    fn preload(&self, _machines: &[MachineView]) -> Vec<(usize, usize)> {
        Vec::new()
    }

    fn route(
        &mut self,
        _app_index: usize,
        app: &App,
        batch: u32,
        variants: &[Variant],
        views: Views<'_>,
        rng: &mut Pcg64Mcg,
    ) -> Route {
        let instances = views.instances;
        let Some(choice) = self.choose(app, batch, variants, instances) else {
            return Route::Fail;
        };
        // The three least-loaded instances, shuffled; the first takes the query (the worker
        // blacklist that could skip one is not modelled).
        let mut least: Vec<usize> = (0..instances.len())
            .filter(|&i| instances[i].variant == choice.variant)
            .collect();
        least.sort_by(|&a, &b| instances[a].qps.total_cmp(&instances[b].qps).then(a.cmp(&b)));
        least.truncate(3);
        least.shuffle(rng);
        match least.first() {
            Some(&i) if choice.running => Route::To(i),
            _ => match self.place(variants[choice.variant].hardware, views.machines, rng) {
                Some(machine) => Route::Load {
                    variant: choice.variant,
                    machine,
                },
                None => Route::Fail,
            },
        }
    }
}
