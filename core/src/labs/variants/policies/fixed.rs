//! The model-based baseline INFaaS argues against: the user names one variant per
//! application, chosen once from the profiles, and provisions an instance of it for that
//! application before the first query, each application on a machine of its own while
//! machines last. Nothing adapts to load.

use alloc::vec::Vec;

use rand_pcg::Pcg64Mcg;

use super::{profiled_ms, MachineView, Route, Selector, Views};
use crate::labs::variants::params::{App, Hardware, Variant, VariantsParams};

/// Each application's variant, fixed.
pub struct Fixed {
    /// The variant of each application (`None`: no variant meets its requirements).
    picks: Vec<Option<usize>>,
    /// Each variant's hardware.
    hardware: Vec<Hardware>,
}

impl Fixed {
    /// The cheapest variant (by instance price) whose accuracy and profiled latency meet the
    /// application's; among equal prices the fastest.
    #[must_use]
    pub fn cheapest(params: &VariantsParams) -> Fixed {
        Fixed::pick(params, |v, app| {
            (profiled_ms(v, params.batch) <= app.slo_ms).then(|| {
                (
                    params.prices.per_hour(v.hardware),
                    profiled_ms(v, params.batch),
                )
            })
        })
    }

    /// The fastest variant whose accuracy meets the application's (its SLO may still be out
    /// of reach).
    #[must_use]
    pub fn fastest(params: &VariantsParams) -> Fixed {
        Fixed::pick(params, |v, _| Some((profiled_ms(v, params.batch), 0.0)))
    }

    /// Per application, the variant with the least key among those that meet its accuracy
    /// and for which `key` is defined (ties: catalogue order).
    fn pick(params: &VariantsParams, key: impl Fn(&Variant, &App) -> Option<(f64, f64)>) -> Fixed {
        let picks = params
            .apps
            .iter()
            .map(|app| {
                params
                    .variants
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.accuracy_pct >= app.min_accuracy_pct)
                    .filter(|(_, v)| v.max_batch >= params.batch)
                    .filter_map(|(i, v)| key(v, app).map(|k| (k, i)))
                    .min_by(|(a, i), (b, j)| {
                        a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(i.cmp(j))
                    })
                    .map(|(_, i)| i)
            })
            .collect();
        Fixed {
            picks,
            hardware: params.variants.iter().map(|v| v.hardware).collect(),
        }
    }

    /// The variant of application `app` (index among the scenario's applications).
    #[must_use]
    pub fn pick_of(&self, app: usize) -> Option<usize> {
        self.picks.get(app).copied().flatten()
    }
}

impl Selector for Fixed {
    fn preload(&self, machines: &[MachineView]) -> Vec<(usize, usize)> {
        self.placement(machines).into_iter().flatten().collect()
    }

    fn route(
        &mut self,
        app_index: usize,
        _app: &App,
        _batch: u32,
        _variants: &[Variant],
        views: Views<'_>,
        _rng: &mut Pcg64Mcg,
    ) -> Route {
        let placed = self.placement(views.machines);
        placed
            .get(app_index)
            .copied()
            .flatten()
            .and_then(|(v, m)| {
                views
                    .instances
                    .iter()
                    .position(|i| i.variant == v && i.machine == m)
            })
            .map_or(Route::Fail, Route::To)
    }
}

impl Fixed {
    /// Each application's instance, (variant, machine): applications in order, each on the
    /// machine of its variant's hardware holding the fewest applications so far (then the
    /// first); `None` for an application without a variant or a machine.
    fn placement(&self, machines: &[MachineView]) -> Vec<Option<(usize, usize)>> {
        let mut placed: Vec<Option<(usize, usize)>> = Vec::with_capacity(self.picks.len());
        for pick in &self.picks {
            let spot = pick.and_then(|v| {
                let hardware = self.hardware[v];
                let taken = |m: usize| placed.iter().flatten().filter(|&&(_, pm)| pm == m).count();
                (0..machines.len())
                    .filter(|&m| machines[m].hardware == hardware)
                    .min_by_key(|&m| (taken(m), m))
                    .map(|m| (v, m))
            });
            placed.push(spot);
        }
        placed
    }
}
