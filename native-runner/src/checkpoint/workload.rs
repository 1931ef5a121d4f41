//! The pointer-rich workload: a singly linked list of nodes, visited in a shuffled order, whose
//! links are absolute virtual addresses; two replicas of the same "weights" (the deduplication
//! opportunity) and a scratch "activations" block that is freed (cached, not active).

use super::{Allocator, CkptError, Space};

/// Bytes of one list node: next address, value, own address, previous address.
pub const NODE_BYTES: u64 = 32;

/// splitmix64: the workload's deterministic pseudo-random numbers.
#[must_use]
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What the workload built, as the restore needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Built {
    /// Address of the list's first node.
    pub root: u64,
    /// Nodes in the list.
    pub nodes: u64,
    /// Checksum of the traversal right after building.
    pub checksum: u64,
    /// Address of the first weights replica.
    pub weights_a: u64,
    /// Address of the second weights replica.
    pub weights_b: u64,
}

fn fill(space: &mut impl Space, addr: u64, bytes: u64, seed: u64) -> Result<(), CkptError> {
    let region = space.region_bytes();
    let mut state = seed;
    let mut off = addr - space.base();
    let end = off + bytes;
    let mut buf = vec![0u8; usize::try_from(region).unwrap_or(0)];
    while off < end {
        let take = (region - off % region).min(end - off);
        let slice = &mut buf[..usize::try_from(take).unwrap_or(0)];
        for chunk in slice.chunks_mut(8) {
            let v = splitmix(&mut state).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        space.write(off, slice)?;
        off += take;
    }
    Ok(())
}

/// Builds the workload in `alloc`: `nodes` list nodes, two replicas of `weights_bytes` each and
/// `scratch_bytes` of activations that are then freed.
///
/// # Errors
/// When the reserved range is too small.
pub fn build<S: Space>(
    alloc: &mut Allocator<S>,
    nodes: u64,
    weights_bytes: u64,
    scratch_bytes: u64,
    seed: u64,
) -> Result<Built, CkptError> {
    if nodes == 0 {
        return Err(CkptError::Invalid(
            "the list needs at least one node".into(),
        ));
    }
    let weights_a = alloc.alloc(weights_bytes)?;
    fill(&mut alloc.space, weights_a, weights_bytes, seed ^ 0xA5A5)?;
    let scratch = alloc.alloc(scratch_bytes)?;
    fill(&mut alloc.space, scratch, scratch_bytes, seed ^ 0x5A5A)?;
    let list = alloc.alloc(nodes * NODE_BYTES)?;
    let weights_b = alloc.alloc(weights_bytes)?;
    // The second replica holds the same bytes as the first (data-parallel replicas).
    fill(&mut alloc.space, weights_b, weights_bytes, seed ^ 0xA5A5)?;
    alloc.free(scratch)?;
    // Visit order: a seeded Fisher–Yates shuffle of the node slots.
    let mut order: Vec<u64> = (0..nodes).collect();
    let mut state = seed;
    for i in (1..order.len()).rev() {
        let j = usize::try_from(splitmix(&mut state) % (i as u64 + 1)).unwrap_or(0);
        order.swap(i, j);
    }
    let addr = |slot: u64| list + slot * NODE_BYTES;
    let mut prev = 0u64;
    for (k, &slot) in order.iter().enumerate() {
        let next = order.get(k + 1).map_or(0, |&s| addr(s));
        let value = splitmix(&mut state);
        let mut node = [0u8; NODE_BYTES as usize];
        node[0..8].copy_from_slice(&next.to_le_bytes());
        node[8..16].copy_from_slice(&value.to_le_bytes());
        node[16..24].copy_from_slice(&addr(slot).to_le_bytes());
        node[24..32].copy_from_slice(&prev.to_le_bytes());
        write_node(&mut alloc.space, addr(slot), &node)?;
        prev = addr(slot);
    }
    let root = addr(order[0]);
    let checksum = traverse(&alloc.space, root, nodes)?;
    Ok(Built {
        root,
        nodes,
        checksum,
        weights_a,
        weights_b,
    })
}

fn write_node(space: &mut impl Space, addr: u64, node: &[u8]) -> Result<(), CkptError> {
    let off = addr
        .checked_sub(space.base())
        .ok_or_else(|| CkptError::Invalid(format!("node {addr:#x} below the range")))?;
    space.write(off, node)
}

/// Follows the list from `root` by the absolute addresses stored in the nodes, checking that
/// each node's stored own address and back link agree, and returns the checksum of (address,
/// value) over `nodes` nodes.
///
/// # Errors
/// [`CkptError::Corrupt`] when a link leaves the committed range, a node's own address or back
/// link disagrees, or the list is longer or shorter than `nodes`.
pub fn traverse(space: &impl Space, root: u64, nodes: u64) -> Result<u64, CkptError> {
    let mut h = 0xCBF2_9CE4_8422_2325u64;
    let mut at = root;
    let mut prev = 0u64;
    let mut node = [0u8; NODE_BYTES as usize];
    for k in 0..nodes {
        let off = at.checked_sub(space.base()).ok_or_else(|| {
            CkptError::Corrupt(format!("node {k} link {at:#x} is below the range"))
        })?;
        if off % NODE_BYTES != 0 {
            return Err(CkptError::Corrupt(format!(
                "node {k} link {at:#x} is misaligned"
            )));
        }
        space
            .read(off, &mut node)
            .map_err(|e| CkptError::Corrupt(format!("node {k} at {at:#x}: {e}")))?;
        let word =
            |i: usize| u64::from_le_bytes(node[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        let (next, value, own, back) = (word(0), word(1), word(2), word(3));
        if own != at || back != prev {
            return Err(CkptError::Corrupt(format!(
                "node {k} at {at:#x} stores own address {own:#x} and back link {back:#x} (expected {prev:#x})"
            )));
        }
        h = (h ^ at).wrapping_mul(0x100_0000_01B3);
        h = (h ^ value).wrapping_mul(0x100_0000_01B3);
        prev = at;
        if next == 0 {
            if k + 1 != nodes {
                return Err(CkptError::Corrupt(format!(
                    "the list ends after {} of {nodes} nodes",
                    k + 1
                )));
            }
            return Ok(h);
        }
        at = next;
    }
    Err(CkptError::Corrupt(format!(
        "the list is longer than {nodes} nodes"
    )))
}
