//! One colour per tenant, shared by the cluster view, the share chart and the timelines: the
//! core's open-ended palette (`report::categorical_colour`), indexed by tenant.

/// Fill colour of tenant `u`.
#[must_use]
pub fn tenant_colour(u: u32) -> String {
    bubblelab_core::report::categorical_colour(u)
}

/// Colour of a free GPU.
pub const FREE: &str = "#e2e8f0";
