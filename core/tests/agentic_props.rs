//! Properties of the agentic engine in both modes, on random small workloads and pools from
//! just the longest request to plenty: every run finishes (no stall), every request finishes
//! once, every token is computed for the first time exactly once, and the block ledger balances.
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::labs::agentic::{
    prepare, run_controller, AgenticParams, AimdHistoryParams, ConcurParams, ControllerSpec,
    EngineMode, EngineSpec, SyntheticSpec,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_run_finishes_and_conserves_tokens(
        seed in 0u64..1_000,
        agents in 1u32..10,
        max_turns in 1u32..6,
        sglang in any::<bool>(),
        page16 in any::<bool>(),
        slack in 0u64..40_000,
        max_new in 1u32..6_000,
        batch in prop::sample::select(vec![64u32, 512, 8_192]),
        controller in 0usize..5,
    ) {
        let mut p = AgenticParams {
            synthetic: SyntheticSpec {
                seed,
                agents,
                min_turns: 1,
                max_turns,
                ..SyntheticSpec::default()
            },
            engine: EngineSpec {
                mode: if sglang { EngineMode::Sglang } else { EngineMode::VllmV1 },
                block_tokens: if page16 { 16 } else { 1 },
                max_new_tokens: max_new,
                max_batched_tokens: batch,
                ..EngineSpec::default()
            },
            ..AgenticParams::default()
        };
        let work = bubblelab_core::labs::agentic::workload::generate(&p.synthetic);
        let longest = work
            .agents
            .iter()
            .map(bubblelab_core::labs::agentic::Agent::max_sequence_tokens)
            .max()
            .unwrap();
        p.engine.kv_capacity_tokens = longest.div_ceil(16) * 16 + slack;
        let spec = [
            ControllerSpec::Unbounded,
            ControllerSpec::StaticCap { cap: 2 },
            ControllerSpec::RequestCap { cap: 2 },
            ControllerSpec::Concur(ConcurParams::default()),
            ControllerSpec::AimdHistory(AimdHistoryParams::default()),
        ][controller]
            .clone();
        p.validate().unwrap();
        let (work, dropped) = prepare(&p, &work).unwrap();
        prop_assert_eq!(dropped, 0);
        let r = run_controller(&p.engine, &spec, &work, 1_000_000_000, 200_000_000, 0)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let unique: u64 = work.agents.iter().map(bubblelab_core::labs::agentic::Agent::unique_tokens).sum();
        let c = r.counters;
        prop_assert_eq!(c.prefill_new_tokens + c.decode_tokens, unique);
        prop_assert_eq!(r.requests.len() as u64, work.total_turns());
        prop_assert!(c.attention_ns <= c.busy_ns);
        prop_assert!(c.history_hit_tokens <= c.history_query_tokens);
    }
}
