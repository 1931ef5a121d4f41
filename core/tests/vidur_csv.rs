//! The Vidur profile CSV reader (`bubblelab_core::cost::vidur`): good files, errors that name
//! the row and column, and total parsing (no panics on cut or mangled input).

#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::cost::vidur::{fit_alpha_beta, parse_vidur_csv, VidurCollective, VidurError};

const HEADER: &str = ",time_stats.all_reduce.min,time_stats.all_reduce.max,time_stats.all_reduce.mean,time_stats.all_reduce.median,time_stats.all_reduce.std,rank,num_workers,size,collective,devices_per_node,max_devices_per_node";

fn sample() -> String {
    format!(
        "{HEADER}\n0,0.031,0.077,0.0503,0.043,0.0194,0,2,2048,all_reduce,1,8\r\n1,0.04,0.075,0.057,0.056,0.0143,0,8,10240,all_reduce,8,8\n\n"
    )
}

fn err(text: &str) -> VidurError {
    parse_vidur_csv(text).expect_err("must be refused")
}

#[test]
fn reads_rows_in_bytes_and_milliseconds() {
    let rows = parse_vidur_csv(&sample()).unwrap();
    assert_eq!(rows.len(), 2);
    let r = &rows[1];
    assert_eq!(
        (
            r.line,
            r.collective,
            r.num_workers,
            r.devices_per_node,
            r.size_bytes
        ),
        (3, VidurCollective::AllReduce, 8, 8, 10240)
    );
    assert_eq!(r.median_ms, 0.056);
    assert!((r.median_ns() - 56_000.0).abs() < 1e-6);
    assert!(rows[0].spans_nodes() && !rows[1].spans_nodes());
    let send = ",time_stats.send_recv.min,time_stats.send_recv.max,time_stats.send_recv.mean,time_stats.send_recv.median,time_stats.send_recv.std,rank,num_workers,size,collective,devices_per_node,max_devices_per_node\n0,0.016,0.064,0.0346,0.024,0.0209,0,2,2048,send_recv,1,8\n";
    let rows = parse_vidur_csv(send).unwrap();
    assert_eq!(rows[0].collective, VidurCollective::SendRecv);
}

#[test]
fn errors_name_row_and_column() {
    let e = err("");
    assert_eq!((e.row, e.column.as_str()), (1, "(header)"));
    let e = err(&HEADER.replace(",size,", ",bytes,"));
    assert_eq!((e.row, e.column.as_str()), (1, "size"));
    let e = err(",rank,num_workers,size,collective,devices_per_node,max_devices_per_node\n");
    assert_eq!(e.column, "time_stats.<collective>.median");
    let e = err(&HEADER.replace(",time_stats.all_reduce.std", ",other"));
    assert_eq!(e.column, "time_stats.all_reduce.std");

    let bad = |row: &str| {
        format!("{HEADER}\n0,0.031,0.077,0.0503,0.043,0.0194,0,2,2048,all_reduce,1,8\n{row}\n")
    };
    let e = err(&bad(
        "1,0.04,0.075,0.057,0.056,0.0143,0,8,1e4,all_reduce,8,8",
    ));
    assert_eq!((e.row, e.column.as_str()), (3, "size"));
    assert_eq!(
        e.to_string(),
        "row 3, column `size`: expected a whole number, got `1e4`"
    );
    let e = err(&bad(
        "1,0.04,0.075,0.057,abc,0.0143,0,8,1024,all_reduce,8,8",
    ));
    assert_eq!(
        (e.row, e.column.as_str()),
        (3, "time_stats.all_reduce.median")
    );
    let e = err(&bad("1,0.04,0.075,0.057,-1,0.0143,0,8,1024,all_reduce,8,8"));
    assert_eq!(e.column, "time_stats.all_reduce.median");
    let e = err(&bad(
        "1,0.04,0.075,0.057,NaN,0.0143,0,8,1024,all_reduce,8,8",
    ));
    assert_eq!(e.column, "time_stats.all_reduce.median");
    let e = err(&bad("1,0.04,0.075,0.057,0.05,0.0143,0,8,1024,all_reduce,8"));
    assert_eq!((e.row, e.column.as_str()), (3, "(row)"));
    assert!(e.message.contains("11 fields"), "{}", e.message);
    let e = err(&bad(
        "1,0.04,0.075,0.057,0.05,0.0143,0,8,1024,send_recv,8,8",
    ));
    assert_eq!(e.column, "collective");
    let e = err(&bad(
        "1,0.04,0.075,0.057,0.05,0.0143,8,8,1024,all_reduce,8,8",
    ));
    assert_eq!(e.column, "rank");
    let e = err(&bad(
        "1,0.04,0.075,0.057,0.05,0.0143,0,0,1024,all_reduce,8,8",
    ));
    assert_eq!(e.column, "num_workers");
    let e = err(&bad("1,0.04,0.075,0.057,0.05,0.0143,0,8,0,all_reduce,8,8"));
    assert_eq!(e.column, "size");
    let e = err(&bad(
        "1,0.04,0.075,0.057,0.05,0.0143,0,2,1024,all_reduce,16,8",
    ));
    assert_eq!(e.column, "devices_per_node");
    let e = err(&bad(
        "1,\"0.04\",0.075,0.057,0.05,0.0143,0,2,1024,all_reduce,2,8",
    ));
    assert_eq!((e.row, e.column.as_str()), (3, "(row)"));
}

#[test]
fn parsing_is_total() {
    // Every prefix and every single-byte corruption of a valid file gives a value, not a panic.
    let text = sample();
    for cut in 0..=text.len() {
        if text.is_char_boundary(cut) {
            let _ = parse_vidur_csv(&text[..cut]);
        }
    }
    let bytes = text.as_bytes();
    for i in 0..bytes.len() {
        for replacement in [b',', b'\n', b'"', b'-', b'x', b'9', b' '] {
            let mut mangled = bytes.to_vec();
            mangled[i] = replacement;
            if let Ok(s) = std::str::from_utf8(&mangled) {
                let _ = parse_vidur_csv(s);
            }
        }
    }
}

#[test]
fn least_squares_recovers_a_line() {
    let points: Vec<(f64, f64)> = (1..=20)
        .map(|i| {
            (
                f64::from(i) * 1e6,
                10_000.0 + f64::from(i) * 1e6 / 100e9 * 1e9,
            )
        })
        .collect();
    let fit = fit_alpha_beta(&points).unwrap();
    assert!((fit.alpha_ns - 10_000.0).abs() < 1e-3, "{fit:?}");
    assert!((fit.beta_bytes_per_s / 100e9 - 1.0).abs() < 1e-9, "{fit:?}");
    assert!((fit.r2 - 1.0).abs() < 1e-12);
    assert!(fit_alpha_beta(&[(1.0, 1.0)]).is_none());
    assert!(fit_alpha_beta(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    assert!(fit_alpha_beta(&[(1.0, 2.0), (2.0, 1.0)]).is_none());
}
