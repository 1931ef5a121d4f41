//! The pointer-rich workload: a singly linked list of nodes, visited in a shuffled order, whose
//! links are absolute virtual addresses; two replicas of the same "weights" (the deduplication
//! opportunity) and a scratch "activations" block that is freed (cached, not active).

use super::{Allocator, CkptError, Space};

/// Bytes of one list node: next address, value, own address, previous address.
pub const NODE_BYTES: u64 = 32;

/// splitmix64's counter increment (the golden ratio in 64-bit fixed point).
pub const SPLITMIX_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
/// splitmix64's two mixing multipliers.
pub const SPLITMIX_MIX: [u64; 2] = [0xBF58_476D_1CE4_E5B9, 0x94D0_49BB_1331_11EB];
/// FNV-1a-64's offset basis and prime (the traversal checksum, over 64-bit words).
pub const FNV: [u64; 2] = [0xCBF2_9CE4_8422_2325, 0x100_0000_01B3];

/// splitmix64: the workload's deterministic pseudo-random numbers.
#[must_use]
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(SPLITMIX_GAMMA);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(SPLITMIX_MIX[0]);
    z = (z ^ (z >> 27)).wrapping_mul(SPLITMIX_MIX[1]);
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

/// Where the workload's blocks lie and how its list is to be linked, before the nodes are
/// written (by [`link_on_host`] here, or by the CUDA path's link kernel on the device).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Address of the list block (node slot `s` lies at `list + s * NODE_BYTES`).
    pub list: u64,
    /// Nodes in the list.
    pub nodes: u64,
    /// Visit order: the `k`-th node of the list sits in slot `order[k]`.
    pub order: Vec<u64>,
    /// splitmix state after the shuffle; node `k`'s value is [`splitmix_at`]`(value_state, k)`.
    pub value_state: u64,
    /// Address of the first weights replica.
    pub weights_a: u64,
    /// Address of the second weights replica.
    pub weights_b: u64,
}

/// The `k`-th value (0-based) that [`splitmix`] draws from `state`, without drawing the ones
/// before it (splitmix64 is a counter passed through a mixer, so draws are independent; the
/// device kernel computes node values this way, one thread per node).
#[must_use]
pub fn splitmix_at(state: u64, k: u64) -> u64 {
    let mut s = state.wrapping_add(k.wrapping_mul(SPLITMIX_GAMMA));
    splitmix(&mut s)
}

/// The 32 bytes of the `k`-th node of the list: next address (0 for the last), value, own
/// address, previous address (0 for the first), little-endian.
#[must_use]
pub fn node_bytes(layout: &Layout, k: usize) -> [u8; NODE_BYTES as usize] {
    let addr = |slot: u64| layout.list + slot * NODE_BYTES;
    let next = layout.order.get(k + 1).map_or(0, |&s| addr(s));
    let prev = k
        .checked_sub(1)
        .and_then(|p| layout.order.get(p))
        .map_or(0, |&s| addr(s));
    let mut node = [0u8; NODE_BYTES as usize];
    node[0..8].copy_from_slice(&next.to_le_bytes());
    node[8..16].copy_from_slice(&splitmix_at(layout.value_state, k as u64).to_le_bytes());
    node[16..24].copy_from_slice(&addr(layout.order[k]).to_le_bytes());
    node[24..32].copy_from_slice(&prev.to_le_bytes());
    node
}

/// Allocates and fills the workload's blocks in `alloc` (`nodes` list slots, two replicas of
/// `weights_bytes` each, `scratch_bytes` of activations that are then freed) and draws the
/// list's visit order; the list's nodes are not written yet.
///
/// # Errors
/// When the reserved range is too small or the list is empty.
pub fn lay_out<S: Space>(
    alloc: &mut Allocator<S>,
    nodes: u64,
    weights_bytes: u64,
    scratch_bytes: u64,
    seed: u64,
) -> Result<Layout, CkptError> {
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
    Ok(Layout {
        list,
        nodes,
        order,
        value_state: state,
        weights_a,
        weights_b,
    })
}

/// Writes every node of the laid-out list through [`Space::write`], one region at a time.
///
/// # Errors
/// The space's own errors.
pub fn link_on_host(space: &mut impl Space, layout: &Layout) -> Result<(), CkptError> {
    let mut block = vec![0u8; usize::try_from(layout.nodes * NODE_BYTES).unwrap_or(0)];
    for (k, &slot) in layout.order.iter().enumerate() {
        let at = usize::try_from(slot * NODE_BYTES).unwrap_or(0);
        block[at..at + NODE_BYTES as usize].copy_from_slice(&node_bytes(layout, k));
    }
    let region = usize::try_from(space.region_bytes()).unwrap_or(usize::MAX);
    let first = layout
        .list
        .checked_sub(space.base())
        .ok_or_else(|| CkptError::Invalid(format!("list {:#x} below the range", layout.list)))?;
    // The allocator hands out region-aligned blocks, so the pieces never cross a region.
    for (i, piece) in block.chunks(region).enumerate() {
        space.write(first + (i * region) as u64, piece)?;
    }
    Ok(())
}

/// Builds the workload in `alloc` on the host: [`lay_out`], [`link_on_host`], and the
/// checksum of a first traversal.
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
    let layout = lay_out(alloc, nodes, weights_bytes, scratch_bytes, seed)?;
    link_on_host(&mut alloc.space, &layout)?;
    let root = layout.list + layout.order[0] * NODE_BYTES;
    let checksum = traverse(&alloc.space, root, nodes)?;
    Ok(Built {
        root,
        nodes,
        checksum,
        weights_a: layout.weights_a,
        weights_b: layout.weights_b,
    })
}

/// Follows the list from `root` by the absolute addresses stored in the nodes, checking that
/// each node's stored own address and back link agree, and returns the checksum of (address,
/// value) over `nodes` nodes.
///
/// # Errors
/// [`CkptError::Corrupt`] when a link leaves the committed range, a node's own address or back
/// link disagrees, or the list is longer or shorter than `nodes`.
pub fn traverse(space: &impl Space, root: u64, nodes: u64) -> Result<u64, CkptError> {
    let mut h = FNV[0];
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
        h = (h ^ at).wrapping_mul(FNV[1]);
        h = (h ^ value).wrapping_mul(FNV[1]);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draw_by_index_is_the_same_as_drawing_in_turn() {
        let mut state = 0x1234_5678;
        let start = state;
        for k in 0..100 {
            assert_eq!(splitmix_at(start, k), splitmix(&mut state), "draw {k}");
        }
    }
}
