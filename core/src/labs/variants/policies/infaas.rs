//! INFaaS's model-less selection as its artifact runs it (stanford-mast/INFaaS at 4c5ff7b,
//! `src/master/queryfe_server.cc`, the use-case query `gpar_lat_acc_search` l. 171–588 and the
//! dispatch of `QueryOnline` l. 1236–1471 under the default decision mode
//! `GPUSHARETRIGGER_SKIPBLIST`, `start_infaas.sh` l. 21). An instance counts as running once
//! its load has ended. The SLO counts in whole milliseconds.
//!
//! 1. **Recent variants first.** The last five variants chosen (an LRU list, `gmod_max_lru`)
//!    are tried in order: the first that takes the batch, meets the accuracy and the latency
//!    rule below and is running wins — as not running (a new instance) when its least-loaded
//!    instance is blacklisted and its max batch is under 64, skipped when it is blacklisted
//!    otherwise.
//! 2. **Accuracy bins.** Otherwise the candidates are the variants of the first non-empty
//!    accuracy bin ({0, 50, 70, 75, 78, 100}, `redis_metadata.h` l. 83) at or above the
//!    query's floor with accuracy ≥ the floor, in ascending accuracy then name, at most max(3,
//!    0.15·SLO / 0.6 ms) of them (`redis_metadata.cc` l. 787–827).
//! 3. **Latency rule.** A variant's latency is slope·b + intercept with b the query's batch
//!    for a max batch over 64 and min(32, max batch) otherwise; it must be within the SLO, and
//!    an SLO over 100 ms skips variants faster than 100 ms ("don't pick GPU for CPU
//!    constraint").
//! 4. **Score.** A running variant whose least-loaded instance is not blacklisted scores its
//!    slack, SLO − latency; a blacklisted GPU variant scores its slack too but is started anew;
//!    a variant not running scores 1000 ms + load + latency, and only when its max batch is
//!    the smallest seen so far. The least score wins; with a loose SLO (> 100 ms), nothing
//!    running and no CPU variant blacklisted, the CPU variant (max batch 128) with the least
//!    load + latency is started instead.
//! 5. **Dispatch.** A running variant's query goes to the first of its three least-loaded
//!    instances (by last reported QPS, then machine), shuffled (the artifact seeds its shuffles
//!    from the clock; here from the scenario's seed), whose machine the master has not
//!    blacklisted for receiving 200 queries within a second (l. 1606–1657). Otherwise it goes
//!    to a machine that loads the variant unless it holds it already: for a GPU variant one of
//!    the ten least-utilised GPU machines at random, for a CPU variant the least-utilised CPU
//!    machine other than the one picked last.
//!
//! Left out: the worker autoscaler (replicating or upgrading an overloaded variant, scaling
//! down idle ones), the VM autoscaler (the machines are a fixed pool), GPU-exclusive slack
//! workers (off by default); CPU variants run on CPU machines only (the artifact may place them
//! on GPU hosts).

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
    /// Per machine: the start of its query-count window and the queries sent in it (`None`
    /// before its first query).
    sent: Vec<Option<(u64, u32)>>,
    /// Per machine: until when it is blacklisted for receiving too many queries, ns.
    blacklisted_until_ns: Vec<u64>,
}

/// Queries within [`WORKER_WINDOW_NS`] that blacklist a machine (`qps_vm_scale_query_limit`).
const WORKER_QUERY_LIMIT: u32 = 200;
/// The window of the per-machine query count (`qps_vm_scale_time_interval`), ns.
const WORKER_WINDOW_NS: u64 = 1_000_000_000;
/// How long a machine stays blacklisted (`blacklist_executor(…, 2)`), ns.
const WORKER_BLACKLIST_NS: u64 = 2_000_000_000;
/// GPU machines a new GPU instance may go to: the least utilised (`min_gpu_util_name(10)`).
const GPU_PLACEMENT_POOL: usize = 10;

/// A chosen variant and whether it is to run on an instance it already has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The variant (index into the catalogue).
    pub variant: usize,
    /// Whether the query goes to a running instance (else a new one is started).
    pub running: bool,
}

impl Infaas {
    /// The variant for a query of `app` with `batch` items, or `None` when none qualifies. The
    /// SLO counts in whole milliseconds, as the artifact's query carries it.
    pub fn choose(
        &mut self,
        app: &App,
        batch: u32,
        variants: &[Variant],
        instances: &[InstanceView],
    ) -> Option<Choice> {
        let app = &App {
            slo_ms: libm::trunc(app.slo_ms),
            ..app.clone()
        };
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

/// The running instances of variant `v`, least-loaded first (by reported QPS, then machine:
/// Redis orders equal scores by worker name).
fn by_load(v: usize, instances: &[InstanceView]) -> Vec<usize> {
    let mut out: Vec<usize> = (0..instances.len())
        .filter(|&i| instances[i].variant == v && instances[i].ready)
        .collect();
    out.sort_by(|&a, &b| {
        let (x, y) = (&instances[a], &instances[b]);
        x.qps.total_cmp(&y.qps).then(x.machine.cmp(&y.machine))
    });
    out
}

/// The least-loaded running instance of variant `v` (`min_qps_name(v, 1)`), if it runs.
fn least_loaded(v: usize, instances: &[InstanceView]) -> Option<&InstanceView> {
    by_load(v, instances).first().map(|&i| &instances[i])
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
                    && total < best_cpu.map_or(100_000.0, |(_, t)| t)
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
        pool.sort_by(|&a, &b| machines[a].utilisation.total_cmp(&machines[b].utilisation).then(a.cmp(&b)));
        match hardware {
            Hardware::Gpu => {
                pool.truncate(GPU_PLACEMENT_POOL);
                pool.shuffle(rng);
                pool.first().copied()
            }
            Hardware::Cpu if pool.len() == 1 => pool.first().copied(),
            Hardware::Cpu => {
                let pick = pool.iter().copied().find(|&m| Some(m) != self.last_cpu_machine);
                self.last_cpu_machine = pick.or(self.last_cpu_machine);
                pick
            }
        }
    }

    /// Whether machine `m` is blacklisted at `now_ns` for the queries it received.
    fn machine_blacklisted(&self, m: usize, now_ns: u64) -> bool {
        self.blacklisted_until_ns.get(m).is_some_and(|&until| now_ns < until)
    }

    /// Counts a query sent to machine `m` (`queryfe_server.cc` l. 1606–1657): the 200th within
    /// a second of the window's start blacklists the machine for 2 s (when there is more than
    /// one machine) and starts a new window; a query a second or more after the window's
    /// start starts a new, empty one.
    fn count_sent(&mut self, m: usize, machines: usize, now_ns: u64) {
        if self.sent.len() < machines {
            self.sent.resize(machines, None);
            self.blacklisted_until_ns.resize(machines, 0);
        }
        let Some((start, count)) = &mut self.sent[m] else {
            self.sent[m] = Some((now_ns, 1));
            return;
        };
        if now_ns - *start < WORKER_WINDOW_NS {
            *count += 1;
            if *count == WORKER_QUERY_LIMIT {
                *start = now_ns;
                *count = 0;
                if machines > 1 {
                    self.blacklisted_until_ns[m] = now_ns + WORKER_BLACKLIST_NS;
                }
            }
        } else {
            *start = now_ns;
            *count = 0;
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
        // The three least-loaded instances, shuffled; the first on a machine that is not
        // blacklisted takes the query (the variant's own blacklist is not consulted here).
        let mut least = by_load(choice.variant, instances);
        least.truncate(3);
        least.shuffle(rng);
        let running = least
            .into_iter()
            .find(|&i| !self.machine_blacklisted(instances[i].machine, views.now_ns));
        let route = match running {
            Some(i) if choice.running => Route::To(i),
            _ => match self.place(variants[choice.variant].hardware, views.machines, rng) {
                Some(machine) => Route::Load {
                    variant: choice.variant,
                    machine,
                },
                None => Route::Fail,
            },
        };
        let machine = match route {
            Route::To(i) => Some(instances[i].machine),
            Route::Load { machine, .. } => Some(machine),
            Route::Fail => None,
        };
        if let Some(m) = machine {
            self.count_sent(m, views.machines.len(), views.now_ns);
        }
        route
    }
}
