//! One colour per tenant, shared by the cluster view and the share chart: hues spaced by the
//! golden angle, so neighbouring tenant indices never look alike and any number of tenants
//! gets a colour.

/// Fill colour of tenant `u`.
#[must_use]
pub fn tenant_colour(u: u32) -> String {
    let hue = (f64::from(u) * 137.508) % 360.0;
    let light = [52, 40, 64][(u % 3) as usize];
    format!("hsl({hue:.0}, 68%, {light}%)")
}

/// Colour of a free GPU.
pub const FREE: &str = "#e2e8f0";
