//! The fairness lab's home-page card and navigation link, its presets in menu order (the first is
//! what its page opens with) and its tours.

use crate::presets::{preset, Card, CardBody, Preset};
use crate::tour::{tour, BuiltinTour};

const LAB: &str = "fairness";

/// The presets of the fairness lab (`static/presets/<id>.json`).
pub const PRESETS: &[Preset] = &[
    preset!(
        "fairness-contended-15-tenants",
        "Contended: 15 tenants, 3,000 Philly-shaped jobs of at most a day, offered 1.2× the capacity of 128 GPUs"
    ),
    preset!(
        "fairness-light-load-15-tenants",
        "Light load: the same tenants with Philly's arrival rate and 60-day tail, 30 % utilisation, every policy alike"
    ),
    preset!(
        "fairness-chronus-deadlines",
        "Deadlines: slot admission (after Chronus) vs FIFO, SRTF, Tiresias, largest ρ first; 70 % SLO jobs, the contended trace"
    ),
    preset!(
        "fairness-gavel-heterogeneous",
        "Heterogeneous GPUs: Gavel's max-min LP in 360 s rounds vs fair share and FIFO on 36 V100, 36 P100 and 36 K80, Gavel's 26 job types"
    ),
    preset!(
        "fairness-lyra-colocation",
        "Training beside inference: a service's 8 servers loaned to the contended trace's training and reclaimed at its daily peak (after Lyra), vs separate clusters and FIFO"
    ),
];

/// The fairness lab's link in the navigation and card on the home page.
pub const CARD: Card = Card {
    nav: "Fairness",
    title: "Fair shares of a GPU cluster",
    body: CardBody::Lab {
        problem: "Tenants share a cluster and jobs need all their GPUs at once. Instantaneous fair shares, least-attained-service and finish-time fairness each leave some tenant or job under-served over days of work.",
        system: "ASTRAEA, against FIFO, SJF, SRTF, Tiresias, 2DAS, largest ρ first, fair share and Gandiva-fair",
        idea: "Count GPU-time over a long window: serve the most under-served tenant first, then its most under-served job, and use leases instead of constant preemption.",
        claim: "ASTRAEA improves tenant-level fairness by up to 9.42× and job-level fairness by up to 10.3× over the baselines without hurting average JCT (seed's numbers; ours are on the lab page).",
    },
};

/// The tours of the fairness lab (`static/tours/<id>.json`).
pub const TOURS: &[BuiltinTour] = &[tour!("fairness-astraea")];
