//! The overlap lab (Helix).
pub mod baselines;
pub mod interp;
pub mod params;
pub mod passes;
pub mod schedule;
