//! The fairness lab (being written): a trace-driven multi-tenant GPU cluster simulator,
//! ASTRAEA's long-term GPU-time fairness and the field's policies.

pub mod job;
pub mod traces;
