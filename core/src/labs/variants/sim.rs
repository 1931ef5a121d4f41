//! The serving simulation: queries of every application arrive (Poisson, piecewise constant
//! rate), the policy routes each to an instance of a variant on a machine, each machine runs
//! the loads and queries of its instances one at a time in arrival order, and every
//! `monitor_ms` each instance's monitor reports its QPS and mean latency and sets or clears its
//! blacklist flag by INFaaS's rule (`src/worker/query_executor.cc` l. 599–735) while each
//! machine reports its utilisation. An instance registers as running once its load ends
//! (`common_model_util.cc` l. 800–805). Time is integer nanoseconds on the engine's event queue.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::params::{Hardware, VariantsParams};
use super::policies::{profiled_ms, InstanceView, MachineView, Route, SelectionPolicy, Views};
use crate::engine::EventQueue;
use crate::units::{nanos_from_f64, Nanos};

/// Nanoseconds per millisecond.
const NS_PER_MS: f64 = 1e6;
/// Nanoseconds per second.
const NS_PER_S: f64 = 1e9;

/// One query's fate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Served {
    /// Its application (index).
    pub app: usize,
    /// Arrival, ns.
    pub arrival_ns: u64,
    /// The variant that answered it (`None`: it failed).
    pub variant: Option<usize>,
    /// Arrival to answer, ns (0 when it failed).
    pub latency_ns: u64,
}

/// One machine over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// When its first load began (it is billed from then), ns.
    pub started_ns: Option<u64>,
    /// When the last load or query given to it so far ends, ns.
    free_ns: u64,
    /// Time it was given work since the last report, ns.
    busy_ns: u64,
    /// What the monitor reported last.
    pub view: MachineView,
}

/// One instance (a variant loaded on a machine) over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// Its variant.
    pub variant: usize,
    /// When its load ends and it registers as running, ns.
    ready_ns: u64,
    /// The mean latency the monitor reported last, ms.
    avg_ms: f64,
    /// Queries routed and not finished at the last report: (finish, latency), ns.
    pending: VecDeque<(u64, u64)>,
    /// Queries routed since the last report.
    routed: u32,
    /// What the monitor reported last.
    pub view: InstanceView,
}

/// A run of one policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The policy.
    pub policy: SelectionPolicy,
    /// Every query, in arrival order.
    pub queries: Vec<Served>,
    /// Every machine.
    pub machines: Vec<Machine>,
    /// Every instance, in the order they were loaded.
    pub instances: Vec<Instance>,
    /// Instances running (or loading) at each monitor report: (time ns, count).
    pub instance_counts: Vec<(u64, usize)>,
    /// Times an instance was blacklisted.
    pub blacklistings: u32,
    /// The run's horizon (the later of the last arrival period's end and the last answer), ns.
    pub end_ns: u64,
}

/// An event, in rank order at equal times.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// The instances' monitors report.
    Monitor,
    /// Query number `n` arrives.
    Arrival(usize),
}

/// The arrivals of every application, merged in time order: (time ns, application).
#[must_use]
pub fn arrivals(params: &VariantsParams) -> Vec<(u64, usize)> {
    let mut out = Vec::new();
    let end = params.duration_s;
    let burst = (params.burst_start_s.min(end), params.burst_end_s.min(end));
    for (a, app) in params.apps.iter().enumerate() {
        let mut rng = Pcg64Mcg::seed_from_u64(params.seed ^ ((a as u64 + 1) << 32));
        let mut t = 0.0;
        // Piecewise Poisson: an arrival past a rate change is redrawn from the change
        // (memoryless), so each piece has exactly its rate.
        while t < end {
            let (rate, piece_end) = if t < burst.0 {
                (app.qps, burst.0)
            } else if t < burst.1 {
                (app.burst_qps, burst.1)
            } else {
                (app.qps, end)
            };
            if rate <= 0.0 {
                t = piece_end;
                continue;
            }
            let u: f64 = rng.random();
            let next = t - libm::log(1.0 - u) / rate;
            if next >= piece_end {
                t = piece_end;
                continue;
            }
            t = next;
            out.push((nanos_from_f64(t * NS_PER_S).0, a));
        }
    }
    out.sort_by_key(|&(t, a)| (t, a));
    out
}

/// Runs `policy` on the arrivals.
#[must_use]
pub fn simulate(params: &VariantsParams, policy: SelectionPolicy, arrivals: &[(u64, usize)]) -> Run {
    let mut selector = policy.build(params);
    let mut rng = Pcg64Mcg::seed_from_u64(params.seed.wrapping_add(0x9e37_79b9));
    let mut run = Run {
        policy,
        queries: Vec::with_capacity(arrivals.len()),
        machines: machines(params),
        instances: Vec::new(),
        instance_counts: Vec::new(),
        blacklistings: 0,
        end_ns: nanos_from_f64(params.duration_s * NS_PER_S).0,
    };
    let machine_views: Vec<MachineView> = run.machines.iter().map(|m| m.view).collect();
    for (v, m) in selector.preload(&machine_views) {
        load(&mut run, params, v, m, 0);
    }
    let monitor_ns = u64::from(params.monitor_ms) * 1_000_000;
    let mut queue = EventQueue::new();
    queue.push(Nanos(monitor_ns), 0, Event::Monitor);
    for (n, &(t, _)) in arrivals.iter().enumerate() {
        queue.push(Nanos(t), 1, Event::Arrival(n));
    }
    let mut arrived = 0;
    while let Some((Nanos(now), event)) = queue.pop() {
        match event {
            Event::Monitor => {
                monitor(&mut run, params, now);
                if arrived < arrivals.len() {
                    queue.push(Nanos(now + monitor_ns), 0, Event::Monitor);
                }
            }
            Event::Arrival(n) => {
                arrived += 1;
                let app = arrivals[n].1;
                let instances: Vec<InstanceView> = run
                    .instances
                    .iter()
                    .map(|i| InstanceView {
                        ready: now >= i.ready_ns,
                        ..i.view
                    })
                    .collect();
                let machines: Vec<MachineView> = run.machines.iter().map(|m| m.view).collect();
                let views = Views {
                    now_ns: now,
                    instances: &instances,
                    machines: &machines,
                };
                let route = selector.route(app, &params.apps[app], params.batch, &params.variants, views, &mut rng);
                serve(&mut run, params, route, app, now);
            }
        }
    }
    let last = run.queries.iter().map(|q| q.arrival_ns + q.latency_ns).max().unwrap_or(0);
    run.end_ns = run.end_ns.max(last);
    run
}

/// The machine pool: the CPU machines, then the GPU machines.
fn machines(params: &VariantsParams) -> Vec<Machine> {
    let machine = |hardware| Machine {
        started_ns: None,
        free_ns: 0,
        busy_ns: 0,
        view: MachineView {
            hardware,
            utilisation: 0.0,
        },
    };
    let mut out = Vec::new();
    for hardware in Hardware::ALL {
        out.extend((0..params.machines.of(hardware)).map(|_| machine(hardware)));
    }
    out
}

/// The instance of variant `v` on machine `m`, loaded at `now` (the machine busy for the
/// load) unless the machine holds it already.
fn load(run: &mut Run, params: &VariantsParams, v: usize, m: usize, now: u64) -> usize {
    if let Some(i) = run.instances.iter().position(|i| i.variant == v && i.view.machine == m) {
        return i;
    }
    let machine = &mut run.machines[m];
    let load_ns = nanos_from_f64(params.variants[v].load_ms * NS_PER_MS).0;
    machine.started_ns.get_or_insert(now);
    machine.free_ns = machine.free_ns.max(now) + load_ns;
    machine.busy_ns += load_ns;
    run.instances.push(Instance {
        variant: v,
        ready_ns: machine.free_ns,
        avg_ms: 0.0,
        pending: VecDeque::new(),
        routed: 0,
        view: InstanceView {
            variant: v,
            machine: m,
            qps: 0.0,
            blacklisted: false,
            ready: false,
        },
    });
    run.instances.len() - 1
}

/// Serves a query of application `app` arriving at `now` where the policy routed it.
fn serve(run: &mut Run, params: &VariantsParams, route: Route, app: usize, now: u64) {
    let index = match route {
        Route::To(i) => i,
        Route::Load { variant, machine } => load(run, params, variant, machine, now),
        Route::Fail => {
            run.queries.push(Served {
                app,
                arrival_ns: now,
                variant: None,
                latency_ns: 0,
            });
            return;
        }
    };
    let instance = &mut run.instances[index];
    let machine = &mut run.machines[instance.view.machine];
    let service = nanos_from_f64(profiled_ms(&params.variants[instance.variant], params.batch) * NS_PER_MS).0;
    let finish = machine.free_ns.max(now) + service;
    machine.free_ns = finish;
    machine.busy_ns += service;
    instance.routed += 1;
    instance.pending.push_back((finish, finish - now));
    run.queries.push(Served {
        app,
        arrival_ns: now,
        variant: Some(instance.variant),
        latency_ns: finish - now,
    });
}

/// Every instance's monitor reports at `now`: QPS received, mean latency of the queries it
/// finished (the last mean decayed when none finished), queries outstanding, and the blacklist
/// flag set or cleared by
/// `query_executor.cc` l. 700–735 (an instance is one replica, `num_replicas` = 1), and
/// every machine its utilisation: the work given to it in the period over the period.
fn monitor(run: &mut Run, params: &VariantsParams, now: u64) {
    let period_s = f64::from(params.monitor_ms) / 1000.0;
    for instance in &mut run.instances {
        if now < instance.ready_ns {
            // Not registered yet: its worker monitors only loaded variants.
            instance.routed = 0;
            continue;
        }
        let mut done = 0u32;
        let mut latency_sum_ms = 0.0;
        while instance.pending.front().is_some_and(|&(f, _)| f <= now) {
            let (_, latency) = instance.pending.pop_front().unwrap_or((0, 0));
            done += 1;
            latency_sum_ms += latency as f64 / NS_PER_MS;
        }
        let qps = f64::from(instance.routed) / period_s;
        let variant = &params.variants[instance.variant];
        // With nothing finished in the period, the last mean decays (l. 619–629).
        let avg_ms = if done > 0 {
            latency_sum_ms / f64::from(done)
        } else {
            match variant.hardware {
                Hardware::Cpu => instance.avg_ms / 15.0,
                Hardware::Gpu => instance.avg_ms / 1.5,
            }
        };
        instance.avg_ms = avg_ms;
        let inf_ms = profiled_ms(variant, params.batch);
        let rule = BlacklistRule::of(variant.hardware, inf_ms);
        let queue = instance.pending.len() as f64;
        let queue_limit = rule.queue * 1000.0 / inf_ms;
        let was = instance.view.blacklisted;
        if (avg_ms > inf_ms * rule.latency && qps > rule.qps * 1000.0 / inf_ms) || queue > queue_limit {
            instance.view.blacklisted = true;
        } else if queue < queue_limit && avg_ms < inf_ms * rule.unset {
            instance.view.blacklisted = false;
        }
        if instance.view.blacklisted && !was {
            run.blacklistings += 1;
        }
        instance.view.qps = qps;
        instance.routed = 0;
    }
    // A machine's utilisation is written only when above 0 (`query_executor.cc` l. 799–822),
    // so an idle machine keeps its last busy figure.
    for machine in &mut run.machines {
        let utilisation = (machine.busy_ns as f64 / (period_s * NS_PER_S)).min(1.0);
        if utilisation > 0.0 {
            machine.view.utilisation = utilisation;
        }
        machine.busy_ns = 0;
    }
    run.instance_counts.push((now, run.instances.len()));
}

/// The monitor's thresholds for one instance (`query_executor.cc` l. 683–712).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlacklistRule {
    /// Set when mean latency exceeds this multiple of the profile (with the QPS condition).
    pub latency: f64,
    /// … and QPS exceeds this fraction of the profile's 1000 / latency.
    pub qps: f64,
    /// Or when the queries outstanding exceed this fraction of 1000 / latency.
    pub queue: f64,
    /// Cleared when mean latency falls under this multiple of the profile.
    pub unset: f64,
}

impl BlacklistRule {
    /// The thresholds for a lone instance of `hardware` whose profiled latency is `inf_ms`.
    #[must_use]
    pub fn of(hardware: Hardware, inf_ms: f64) -> BlacklistRule {
        match hardware {
            Hardware::Gpu => BlacklistRule {
                latency: if inf_ms < 10.0 { (15.0 / inf_ms).min(5.0) } else { 1.5 },
                qps: 0.3,
                queue: 0.8,
                unset: 1.25,
            },
            // A CPU variant with one replica (`num_replicas == 1`).
            Hardware::Cpu => BlacklistRule {
                latency: 4.0,
                qps: 1.0,
                queue: 1.1,
                unset: 1.5,
            },
        }
    }
}
