//! Mooncake's conversation trace (Qin et al., "Mooncake", FAST'25; `FAST25-release/traces`):
//! JSON Lines of `{"timestamp": ms, "input_length": tokens, "output_length": tokens,
//! "hash_ids": [block hash, …]}` with 512-token prefix blocks.
//!
//! There is no session id: a request whose `hash_ids` extend *all full blocks* of an earlier
//! request (its last block may be partial, so its hash may differ) beyond the prefix that every
//! request of the file shares (a common system prompt) is a later turn of that request's session.
//! The lookup walks a trie of block hashes; the earlier request is the latest one through the
//! deepest matching node. Each session becomes one agent: its turns in time order, the prefix it
//! shares with the previous turn = common leading blocks × 512 (at most the previous prompt +
//! output and the prompt), and the tool latency after a turn = the gap to the next turn's
//! timestamp (an upper bound: it includes the original service time and user think time).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;

use serde::Deserialize;

use super::TraceError;
use crate::labs::agentic::workload::{Agent, Turn, Workload, MAX_REQUEST_TOKENS, MAX_TURNS_TOTAL};

/// Tokens per hash block in the Mooncake traces.
pub const BLOCK_TOKENS: u64 = 512;
/// Most hash ids of one request.
pub const MAX_HASH_IDS: usize = 100_000;

#[derive(Deserialize)]
struct Row {
    timestamp: f64,
    input_length: u64,
    output_length: u64,
    hash_ids: Vec<u64>,
}

struct Req {
    ts_ms: f64,
    input: u64,
    output: u64,
    hashes: Vec<u64>,
}

/// Reads the trace into agents (sessions), ordered by their first request.
///
/// # Errors
/// [`TraceError`] naming the line and field of the first bad record.
#[allow(clippy::too_many_lines)] // one pass over the input, one arm per field, so each error names its row and field
pub fn parse(text: &str) -> Result<Workload, TraceError> {
    let mut reqs: Vec<Req> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if reqs.len() as u64 >= MAX_TURNS_TOTAL {
            return Err(TraceError::new(
                n,
                None,
                format!("more than {MAX_TURNS_TOTAL} requests"),
            ));
        }
        let mut de = serde_json::Deserializer::from_str(line);
        let row: Row = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." || path.is_empty() { None } else { Some(path) };
            TraceError {
                line: n,
                field,
                message: format!(
                    "{}; expected an object with timestamp (ms), input_length, output_length (tokens) and hash_ids (integers)",
                    strip_position(&e.into_inner().to_string())
                ),
            }
        })?;
        if !(row.timestamp.is_finite() && row.timestamp >= 0.0 && row.timestamp <= 1e13) {
            return Err(TraceError::new(
                n,
                Some("timestamp"),
                format!(
                    "expected milliseconds between 0 and 1e13, got {}",
                    row.timestamp
                ),
            ));
        }
        if row.input_length == 0 || row.input_length > MAX_REQUEST_TOKENS {
            return Err(TraceError::new(
                n,
                Some("input_length"),
                format!(
                    "expected 1 to {MAX_REQUEST_TOKENS} tokens, got {}",
                    row.input_length
                ),
            ));
        }
        if row.output_length > MAX_REQUEST_TOKENS {
            return Err(TraceError::new(
                n,
                Some("output_length"),
                format!(
                    "expected at most {MAX_REQUEST_TOKENS} tokens, got {}",
                    row.output_length
                ),
            ));
        }
        if row.hash_ids.len() > MAX_HASH_IDS {
            return Err(TraceError::new(
                n,
                Some("hash_ids"),
                format!(
                    "expected at most {MAX_HASH_IDS} ids, got {}",
                    row.hash_ids.len()
                ),
            ));
        }
        reqs.push(Req {
            ts_ms: row.timestamp,
            input: row.input_length,
            output: row.output_length,
            hashes: row.hash_ids,
        });
    }
    if reqs.is_empty() {
        return Err(TraceError::new(0, None, "no requests: expected JSON Lines with timestamp, input_length, output_length, hash_ids"));
    }
    // Time order (stable: file order among equal timestamps).
    let mut order: Vec<usize> = (0..reqs.len()).collect();
    order.sort_by(|&a, &b| reqs[a].ts_ms.total_cmp(&reqs[b].ts_ms).then(a.cmp(&b)));
    let common = common_prefix(&reqs);
    // Trie of hash blocks: (parent node, hash) -> node; node -> latest request through it.
    let mut trie: BTreeMap<(u32, u64), u32> = BTreeMap::new();
    let mut owner: Vec<usize> = alloc::vec![usize::MAX];
    let mut session_of: Vec<usize> = alloc::vec![usize::MAX; reqs.len()];
    let mut sessions: Vec<Vec<usize>> = Vec::new();
    for &r in &order {
        let h = &reqs[r].hashes;
        let mut node = 0u32;
        let mut depth = 0usize;
        for &x in h {
            match trie.get(&(node, x)) {
                Some(&next) => {
                    node = next;
                    depth += 1;
                }
                None => break,
            }
        }
        let prev = owner[node as usize];
        let joined = if depth > common && prev != usize::MAX {
            let q = &reqs[prev];
            let full = if q.input.is_multiple_of(BLOCK_TOKENS) {
                q.hashes.len()
            } else {
                q.hashes.len().saturating_sub(1)
            };
            depth >= full
        } else {
            false
        };
        let s = if joined {
            session_of[prev]
        } else {
            sessions.push(Vec::new());
            sessions.len() - 1
        };
        session_of[r] = s;
        sessions[s].push(r);
        // Insert the path, marking this request as the latest through each node.
        let mut node = 0u32;
        for &x in h {
            let next_id = owner.len() as u32;
            let next = *trie.entry((node, x)).or_insert(next_id);
            if next == next_id {
                owner.push(r);
            } else {
                owner[next as usize] = r;
            }
            node = next;
        }
    }
    let mut agents = Vec::with_capacity(sessions.len());
    for s in &sessions {
        let mut turns = Vec::with_capacity(s.len());
        for (k, &r) in s.iter().enumerate() {
            let q = &reqs[r];
            let shared = if k == 0 {
                0
            } else {
                let p = &reqs[s[k - 1]];
                let lcp = p
                    .hashes
                    .iter()
                    .zip(&q.hashes)
                    .take_while(|(a, b)| a == b)
                    .count() as u64;
                (lcp * BLOCK_TOKENS).min(p.input + p.output).min(q.input)
            };
            let tool_ns = match s.get(k + 1) {
                Some(&next) => ms_to_ns(reqs[next].ts_ms - q.ts_ms),
                None => 0,
            };
            turns.push(Turn {
                prompt_tokens: q.input,
                shared_prefix_tokens: shared,
                output_tokens: q.output,
                tool_ns,
            });
        }
        agents.push(Agent {
            arrival_ns: ms_to_ns(reqs[s[0]].ts_ms),
            turns,
        });
    }
    Ok(Workload {
        source: format!(
            "Mooncake trace ({} requests, {} sessions)",
            reqs.len(),
            agents.len()
        ),
        agents,
    })
}

fn ms_to_ns(ms: f64) -> u64 {
    crate::units::nanos_from_f64(ms * 1e6).0
}

/// Leading hash blocks shared by every request.
fn common_prefix(reqs: &[Req]) -> usize {
    let Some(first) = reqs.first() else {
        return 0;
    };
    let mut n = first.hashes.len();
    for r in &reqs[1..] {
        n = n.min(
            first
                .hashes
                .iter()
                .zip(&r.hashes)
                .take_while(|(a, b)| a == b)
                .count(),
        );
        if n == 0 {
            break;
        }
    }
    n
}

fn strip_position(message: &str) -> alloc::string::String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].into(),
        None => message.into(),
    }
}
