//! Share links: every preset round-trips, and no input — random, truncated or bit-flipped —
//! makes the decoder, the scenario parser or the tour reader panic.
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::tour::{self, Tour};
use bubblelab_core::{presets, share, Scenario};
use proptest::prelude::*;

#[test]
fn every_preset_round_trips_through_a_link() {
    for preset in presets::all() {
        let scenario = preset
            .scenario()
            .unwrap_or_else(|e| panic!("{}: {e}", preset.id));
        let link = share::link("http://127.0.0.1:8080", &scenario);
        let route = share::parse_fragment(link.split_once('#').unwrap().1);
        assert_eq!(route.lab, preset.lab);
        let back = share::decode_for_lab(&route.lab, &route.payload.unwrap()).unwrap();
        assert_eq!(back, scenario, "{}", preset.id);
        // Byte for byte in the canonical form, which writes every parameter out (and tells
        // -0.0 from 0.0, as `==` does not). A Report is a function of its Scenario alone (the
        // golden scenarios of every lab, natively in golden.rs and in wasm in wasm_identity.rs,
        // and `runs_are_deterministic_within_a_process`), so equal scenarios give the same
        // numbers without running every preset twice here, which took half an hour of a debug
        // CI run.
        assert_eq!(back.to_json(), scenario.to_json(), "{}", preset.id);
    }
}

#[test]
fn a_compare_link_carries_both_runs() {
    let a = presets::find("pipeline-all").unwrap().scenario().unwrap();
    let b = a.with_fields(&[("micro_batches", "16")]).unwrap();
    let route = share::parse_fragment(&share::compare_fragment(&a, &b));
    assert_eq!(route.lab, "pipeline");
    assert_eq!(
        share::decode_for_lab("pipeline", &route.payload.unwrap()).unwrap(),
        b
    );
    assert_eq!(
        share::decode_for_lab("pipeline", &route.pinned.unwrap()).unwrap(),
        a
    );
    assert_eq!(share::parse_fragment(&share::fragment(&a)).pinned, None);
}

/// Cases per target: `BUBBLELAB_FUZZ_CASES` (the recorded volume runs), else `default`.
fn fuzz_cases(default: u32) -> u32 {
    std::env::var("BUBBLELAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(fuzz_cases(512)))]

    #[test]
    fn random_payloads_never_panic(payload in "[A-Za-z0-9_=%-]{0,400}") {
        let _ = share::decode(&payload);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = share::decode(&text);
        let _ = Scenario::from_json(&text);
    }

    #[test]
    fn truncated_and_flipped_links_never_panic(index in 0usize..64, cut in 0usize..400, flip in 0usize..400, bit in 0u8..8) {
        let all: Vec<_> = presets::all().collect();
        let preset = all[index % all.len()];
        let payload = share::encode(&preset.scenario().unwrap());
        let truncated = &payload[..cut.min(payload.len())];
        let _ = share::decode(truncated);
        let mut bytes = payload.into_bytes();
        let i = flip % bytes.len();
        bytes[i] ^= 1 << bit;
        let _ = share::decode(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn mutated_scenario_json_never_panics(index in 0usize..64, at in 0usize..300, junk in "[\\[\\]{}\",:0-9a-z -]{0,8}") {
        let all: Vec<_> = presets::all().collect();
        let json = all[index % all.len()].json;
        let mut cut = at.min(json.len());
        while !json.is_char_boundary(cut) {
            cut -= 1;
        }
        let mutated = format!("{}{}{}", &json[..cut], junk, &json[cut..]);
        let _ = Scenario::from_json(&mutated);
    }

    #[test]
    fn mutated_tours_and_tour_links_never_panic(index in 0usize..64, at in 0usize..3000, junk in "[\\[\\]{}\",:0-9a-z =.-]{0,12}", flip in 0usize..3000, bit in 0u8..8) {
        let tours: Vec<_> = tour::all().collect();
        let json = tours[index % tours.len()].json;
        let mut cut = at.min(json.len());
        while !json.is_char_boundary(cut) {
            cut -= 1;
        }
        let mutated = format!("{}{}{}", &json[..cut], junk, &json[cut..]);
        let _ = Tour::from_json(&mutated);
        let mut bytes = share::encode_tour(json).into_bytes();
        let i = flip % bytes.len();
        bytes[i] ^= 1 << bit;
        let _ = share::decode_tour(&String::from_utf8_lossy(&bytes));
        let _ = share::decode_tour(&String::from_utf8_lossy(&bytes[..flip.min(bytes.len())]));
    }
}
