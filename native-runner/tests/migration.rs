//! `bubblelab migration` and `bubblelab checkpoint-demo`: the cost model as a user runs it, and
//! the real address-preserving checkpoint on host memory (same addresses, same checksum across
//! processes, image sizes, refusals).
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

mod common;

use std::path::PathBuf;

use common::{assert_bad_input, bubblelab, metric, ok, scratch};

const BASE: &str = "0x2a0000000000";

fn demo(dir: &str) -> (serde_json::Value, PathBuf) {
    let dir = scratch(dir);
    let _ = std::fs::remove_dir_all(&dir);
    let out = ok(&[
        "checkpoint-demo",
        "--size-mib",
        "32",
        "--region-kib",
        "512",
        "--chunk-kib",
        "64",
        "--image-dir",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    (serde_json::from_str(&out).unwrap(), dir)
}

fn table<'a>(report: &'a serde_json::Value, key: &str) -> &'a Vec<serde_json::Value> {
    report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["key"] == key)
        .unwrap()["rows"]
        .as_array()
        .unwrap()
}

fn field(line: &str, key: &str) -> String {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .to_string()
}

#[test]
fn cycle_keeps_addresses_and_checksum_in_this_and_a_new_process() {
    let (r, dir) = demo("ckpt-cycle");
    let rows = table(&r, "checkpoint");
    assert_eq!(rows.len(), 4);
    let before = rows[0][4].as_str().unwrap().to_string();
    for row in rows {
        assert_eq!(row[5].as_str().unwrap(), before, "{row}");
        assert_eq!(row[6], "yes");
    }
    let m = &table(&r, "migrate")[0];
    assert_eq!(m[0], BASE);
    assert_eq!(m[3].as_str().unwrap(), before);
    // Restoring any of the kept images in a new process: same base, same root, same checksum.
    let root = m[1].as_str().unwrap();
    for img in [
        "reserved-pool.img",
        "reserved-pool-dedup.img",
        "active.img",
        "active-dedup.img",
    ] {
        let path = dir.join(img);
        let line = ok(&["__checkpoint-restore", "--image", path.to_str().unwrap()]);
        assert_eq!(field(&line, "base"), BASE, "{img}");
        assert_eq!(field(&line, "root"), root, "{img}");
        assert_eq!(field(&line, "checksum"), before, "{img}");
    }
}

#[test]
fn a_run_is_stamped_with_its_date_and_machine_and_the_page_keeps_a_real_one() {
    let (r, _) = demo("ckpt-stamp");
    let last = r["findings"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap();
    assert!(last.starts_with("Measured 20"), "{last}");
    assert!(last.contains(" UTC on host memory of "), "{last}");
    // The migration page shows this committed run: a Report of the demo, stamped the same way,
    // whose checksums agree.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../static/measured/checkpoint-demo-cpu.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: serde_json::Value = serde_json::from_str(&text).unwrap();
    let stamp = kept["findings"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap();
    assert!(
        stamp.starts_with("Measured 20") && stamp.contains(" UTC on "),
        "{stamp}"
    );
    for row in table(&kept, "checkpoint") {
        assert_eq!(row[4], row[5], "{row}");
        assert_eq!(row[6], "yes");
    }
}

#[test]
fn image_sizes_active_below_pool_and_dedup_below_both() {
    let (r, _) = demo("ckpt-sizes");
    let pool = metric(&r, "reserved_pool.image_bytes");
    let pool_d = metric(&r, "reserved_pool_dedup.image_bytes");
    let active = metric(&r, "active.image_bytes");
    let active_d = metric(&r, "active_dedup.image_bytes");
    assert!(active < pool, "{active} {pool}");
    assert!(
        pool_d < pool && active_d < active,
        "{pool_d} {pool} {active_d} {active}"
    );
    // The two weight replicas are 4 MiB each of 32 MiB: dedup saves at least one of them.
    assert!(
        active - active_d >= 4.0 * 1024.0 * 1024.0,
        "{active} {active_d}"
    );
    assert!(metric(&r, "active_bytes") < metric(&r, "pool_bytes"));
    assert!(metric(&r, "pool_bytes") < metric(&r, "reserved_bytes"));
}

#[test]
fn corrupted_truncated_or_foreign_images_are_refused_whole() {
    let (_, dir) = demo("ckpt-corrupt");
    let good = std::fs::read(dir.join("active-dedup.img")).unwrap();
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let cases: [(&str, Vec<u8>); 3] = [
        ("flipped.img", flipped),
        ("truncated.img", good[..good.len() - 100].to_vec()),
        ("foreign.img", b"{\"version\": 1}".to_vec()),
    ];
    for (name, bytes) in cases {
        let path = scratch(name);
        std::fs::write(&path, bytes).unwrap();
        let run = bubblelab(&["__checkpoint-restore", "--image", path.to_str().unwrap()]);
        assert_bad_input(&run, "corrupted checkpoint image, nothing restored");
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
}

#[test]
fn a_taken_range_is_refused() {
    let (_, dir) = demo("ckpt-taken");
    let path = dir.join("active.img");
    let run = bubblelab(&[
        "__checkpoint-restore",
        "--image",
        path.to_str().unwrap(),
        "--occupy",
    ]);
    assert_bad_input(&run, "address range not available");
    // The null page is refused before any mapping is tried.
    let run = bubblelab(&[
        "checkpoint-demo",
        "--size-mib",
        "16",
        "--region-kib",
        "64",
        "--base",
        "0x0",
    ]);
    assert_bad_input(&run, "null page");
}

/// Where CUDA cannot run, every CUDA checkpoint command names what is missing in one line and
/// prints nothing that looks like results; where it can, the demo's checksums agree.
#[test]
fn cuda_demo_and_restore_name_what_is_missing_or_agree() {
    let dir = scratch("ckpt-cuda");
    let _ = std::fs::remove_dir_all(&dir);
    let run = bubblelab(&[
        "checkpoint-demo",
        "--device",
        "cuda",
        "--size-mib",
        "64",
        "--image-dir",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let missing = [
        "no CUDA driver",
        "reports no device",
        "NVRTC (libnvrtc) not found",
    ];
    if run.code == Some(0) {
        let r: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let rows = table(&r, "checkpoint");
        let before = rows[0][4].as_str().unwrap().to_string();
        assert!(rows.iter().all(|row| row[5] == before.as_str()), "{rows:?}");
        assert_eq!(table(&r, "migrate")[0][3].as_str().unwrap(), before);
        assert!(metric(&r, "active.returned_bytes") > 0.0);
        return;
    }
    assert_bad_input(&run, "--device cuda: ");
    assert!(
        missing.iter().any(|m| run.stderr.contains(m)),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--device cpu"), "{}", run.stderr);
    // A new process asked to restore a (host) image onto a CUDA device says the same.
    let (_, host_dir) = demo("ckpt-cuda-restore");
    let img = host_dir.join("active-dedup.img");
    let run = bubblelab(&[
        "__checkpoint-restore",
        "--image",
        img.to_str().unwrap(),
        "--device",
        "cuda",
    ]);
    assert_bad_input(&run, "--device cuda: ");
    assert!(
        missing.iter().any(|m| run.stderr.contains(m)),
        "{}",
        run.stderr
    );
    // Flags that choose CUDA devices are refused on the host path.
    assert_bad_input(
        &bubblelab(&[
            "__checkpoint-restore",
            "--image",
            img.to_str().unwrap(),
            "--ordinal",
            "1",
        ]),
        "--ordinal",
    );
}

#[test]
fn bad_demo_flags_are_one_line_errors() {
    assert_bad_input(
        &bubblelab(&["checkpoint-demo", "--size-mib", "1"]),
        "--size-mib",
    );
    assert_bad_input(
        &bubblelab(&["checkpoint-demo", "--chunk-kib", "3"]),
        "--chunk-kib",
    );
    let run = bubblelab(&["checkpoint-demo", "--base", "xyz"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("--base"), "{}", run.stderr);
    assert_bad_input(
        &bubblelab(&["checkpoint-demo", "--ordinal", "1"]),
        "--ordinal and --migrate-ordinal choose CUDA devices",
    );
    // Sizes and addresses are checked before the driver is looked for.
    assert_bad_input(
        &bubblelab(&["checkpoint-demo", "--device", "cuda", "--chunk-kib", "3"]),
        "--chunk-kib",
    );
    assert_bad_input(
        &bubblelab(&["checkpoint-demo", "--device", "cuda", "--base", "0"]),
        "null page",
    );
    let missing = scratch("no-such.img");
    assert_bad_input(
        &bubblelab(&["__checkpoint-restore", "--image", missing.to_str().unwrap()]),
        "no-such.img",
    );
}

#[test]
fn cost_model_from_preset_and_run() {
    let out = ok(&["migration", "--preset", "migration-13b-tp4-two-nodes"]);
    assert!(out.contains("active + low point + dedup"), "{out}");
    let r: serde_json::Value = serde_json::from_str(&ok(&[
        "run",
        "--preset",
        "migration-small-cnn-cpu-bound",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(metric(&r, "framework.migrate_s") > metric(&r, "active-low-point-dedup.migrate_s"));
    let file = scratch("migration-bad.json");
    std::fs::write(
        &file,
        r#"{"version":1,"lab":"migration","params":{"links":{"d2h_gbps":0}}}"#,
    )
    .unwrap();
    assert_bad_input(
        &bubblelab(&["migration", "--scenario", file.to_str().unwrap()]),
        "migration.links.d2h_gbps",
    );
    assert_bad_input(
        &bubblelab(&["migration", "--preset", "fairness-light-load-15-tenants"]),
        "needs a migration scenario",
    );
}
