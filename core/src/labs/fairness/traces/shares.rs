//! Tenant shares: the ASTRAEA artifact's share file (`name,share`, read by
//! `prepare_user_share` in `alg/scheduler/lease.py`) and its name list (one tenant per line,
//! `prepare_user` in `main.py`).
//!
//! Shares must be finite and > 0 (only ratios matter: Q_u = ⌊G·s_u/Σs⌋). With a name list, the
//! tenants are the list's, in its order, and every one must have a share (the artifact fails
//! on a tenant without one); a share row naming a tenant not in the list is an error too.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{Csv, ReadOptions, TraceError};
use crate::labs::fairness::params::{TenantShare, MAX_SHARE_TENANTS};

/// Parses a share CSV with columns `name` and `share` (any order, other columns ignored).
///
/// # Errors
/// A missing column, an empty or repeated name, a share that is not a number > 0, more than
/// [`MAX_SHARE_TENANTS`] rows; the error names the line and column.
pub fn parse_shares(text: &str) -> Result<Vec<TenantShare>, TraceError> {
    let options = ReadOptions {
        skip_bad_rows: false,
        max_rows: MAX_SHARE_TENANTS,
    };
    let mut csv = Csv::new(text, &options)?;
    let c_name = csv.require("name")?;
    let c_share = csv.require("share")?;
    let mut out: Vec<TenantShare> = Vec::new();
    while let Some(row) = csv.next_row() {
        let row = row?;
        csv.check_width(&row)?;
        let name = csv.tenant(&row, c_name)?;
        let raw = csv.text(&row, c_share)?;
        let share: f64 = raw
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0 && *v <= 1e12)
            .ok_or_else(|| {
                TraceError::new(
                    row.line,
                    csv.name(c_share),
                    format!("expected a share > 0 (a number up to 1e12), got `{raw}`"),
                )
            })?;
        if out.iter().any(|t| t.name == name) {
            return Err(TraceError::new(
                row.line,
                csv.name(c_name),
                format!("tenant `{name}` has a share already"),
            ));
        }
        out.push(TenantShare {
            name: name.to_string(),
            share,
        });
    }
    if out.is_empty() {
        return Err(TraceError::new(1, "(header)", "no share rows"));
    }
    Ok(out)
}

/// Orders `shares` by a name list (one tenant name per line; blank lines ignored).
///
/// # Errors
/// A repeated name, a listed tenant without a share, or a share for a tenant not listed; the
/// error names the line (of the list, or `share file` for the last case).
pub fn order_by_names(shares: &[TenantShare], names: &str) -> Result<Vec<TenantShare>, TraceError> {
    let mut out: Vec<TenantShare> = Vec::new();
    for (i, line) in names.lines().enumerate() {
        let name = line.trim();
        if name.is_empty() {
            continue;
        }
        if out.iter().any(|t| t.name == name) {
            return Err(TraceError::new(
                i + 1,
                "name",
                format!("tenant `{name}` is listed twice"),
            ));
        }
        let Some(s) = shares.iter().find(|t| t.name == name) else {
            return Err(TraceError::new(
                i + 1,
                "name",
                format!("tenant `{name}` has no row in the share file"),
            ));
        };
        out.push(s.clone());
    }
    if let Some(extra) = shares
        .iter()
        .find(|s| !out.iter().any(|o| o.name == s.name))
    {
        return Err(TraceError::new(
            0,
            "share file",
            format!(
                "tenant `{}` has a share but is not in the name list",
                extra.name
            ),
        ));
    }
    if out.is_empty() {
        return Err(TraceError::new(0, "name", "the name list names no tenant"));
    }
    Ok(out)
}

/// The share file text of `shares` (`name,share`, one row per tenant, in order).
#[must_use]
pub fn to_csv(shares: &[TenantShare]) -> String {
    let mut s = String::from("name,share\n");
    for t in shares {
        s.push_str(&format!("{},{}\n", t.name, t.share));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_artifact_format() {
        let s = parse_shares("name,share\nu1,8.5\nu2,4\n").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].name, "u2");
        assert!((s[0].share - 8.5).abs() < 1e-12);
        assert_eq!(parse_shares(&to_csv(&s)).unwrap(), s);
    }

    #[test]
    fn names_the_bad_row() {
        let e = parse_shares("name,share\nu1,8.5\nu2,-1\n").unwrap_err();
        assert_eq!((e.row, e.column.as_str()), (3, "share"));
        let e = parse_shares("name,share\nu1,x\n").unwrap_err();
        assert_eq!(e.row, 2);
        let e = parse_shares("name,share\nu1,1\nu1,2\n").unwrap_err();
        assert_eq!((e.row, e.column.as_str()), (3, "name"));
        let e = parse_shares("name,weight\nu1,1\n").unwrap_err();
        assert_eq!(e.column, "share");
        let e = parse_shares("name,share\nu1,0\n").unwrap_err();
        assert_eq!(e.row, 2);
    }

    #[test]
    fn orders_by_the_name_list() {
        let s = parse_shares("name,share\nu1,1\nu2,2\n").unwrap();
        let o = order_by_names(&s, "u2\nu1\n").unwrap();
        assert_eq!(o[0].name, "u2");
        let e = order_by_names(&s, "u2\nu3\n").unwrap_err();
        assert_eq!(e.row, 2);
        let e = order_by_names(&s, "u2\n").unwrap_err();
        assert!(e.message.contains("u1"));
    }
}
