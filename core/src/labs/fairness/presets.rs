//! The fairness lab's presets, in menu order: the first is what its page opens with.

use crate::presets::{preset, Preset};

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
