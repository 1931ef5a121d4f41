//! The checkpoint image: which regions to commit, the live blocks, the workload's root, and the
//! saved chunks (each either data or "same bytes as chunk k" when deduplicated), closed by an
//! FNV-1a-64 checksum of everything before it. A restore parses and checks the whole image
//! before it maps or writes anything.
//!
//! Layout, all integers little-endian u64: magic `BLCKPT01`, version, base, reserved bytes,
//! region bytes, chunk bytes, flags (bit 0 dedup, bit 1 reserved pool), root, nodes, checksum;
//! n regions + region indices; n blocks + (first, count) pairs; n chunks + (offset, kind, arg)
//! triples (kind 0: arg = data offset; kind 1: arg = index of an earlier data chunk); data
//! length + data; FNV-1a-64 of all of it.

use std::collections::HashMap;

use super::workload::Built;
use super::{Allocator, Block, CkptError, Space};

const MAGIC: &[u8; 8] = b"BLCKPT01";
const VERSION: u64 = 1;
const FLAG_DEDUP: u64 = 1;
const FLAG_POOL: u64 = 2;
/// Most regions or chunks an image may list (bounds what a damaged count can make us allocate).
const MAX_ENTRIES: u64 = 1 << 26;

/// What to save.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SaveSpec {
    /// Save the whole reserved pool (every committed region, live or cached) instead of only
    /// the active regions.
    pub reserved_pool: bool,
    /// Save identical fixed-size chunks once.
    pub dedup: bool,
    /// Chunk size of the deduplication (and of the image's entries), bytes; divides the region.
    pub chunk_bytes: u64,
}

/// FNV-1a, 64 bit (the `fnv` crate's hasher over the bytes alone, no length suffix).
#[must_use]
pub fn fnv64(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    h.finish()
}

/// A parsed, fully checked image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Base address of the range.
    pub base: u64,
    /// Reserved bytes of the range.
    pub reserved: u64,
    /// Region bytes.
    pub region: u64,
    /// Chunk bytes.
    pub chunk: u64,
    /// Deduplicated.
    pub dedup: bool,
    /// Whole reserved pool rather than active regions.
    pub reserved_pool: bool,
    /// The workload's root node, node count and checksum before pause.
    pub root: u64,
    /// Nodes of the list.
    pub nodes: u64,
    /// Checksum of the traversal at pause.
    pub checksum: u64,
    /// Regions to commit.
    pub regions: Vec<u64>,
    /// Live blocks.
    pub blocks: Vec<Block>,
    /// (offset in the range, data offset) of every chunk, duplicates resolved to their data.
    pub chunks: Vec<(u64, u64)>,
    /// Chunk data.
    pub data: Vec<u8>,
}

fn put(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Copies the chosen regions out of `alloc` into a serialised image.
///
/// # Errors
/// [`CkptError::Invalid`] for a chunk size that does not divide the region.
pub fn save<S: Space>(
    alloc: &Allocator<S>,
    built: &Built,
    spec: SaveSpec,
) -> Result<Vec<u8>, CkptError> {
    let space = &alloc.space;
    let region = space.region_bytes();
    let chunk = spec.chunk_bytes;
    if chunk == 0 || !chunk.is_multiple_of(8) || !region.is_multiple_of(chunk) {
        return Err(CkptError::Invalid(format!(
            "chunk size {chunk} must be a positive multiple of 8 dividing the region size {region}"
        )));
    }
    let regions = if spec.reserved_pool {
        alloc.committed_regions()
    } else {
        alloc.active_regions()
    };
    let mut data: Vec<u8> = Vec::new();
    let mut entries: Vec<(u64, u64, u64)> = Vec::new();
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut buf = vec![0u8; usize::try_from(region).unwrap_or(0)];
    let c = usize::try_from(chunk).unwrap_or(1);
    for &r in &regions {
        space.read(r as u64 * region, &mut buf)?;
        for (k, piece) in buf.chunks(c).enumerate() {
            let offset = r as u64 * region + (k * c) as u64;
            if spec.dedup {
                let h = fnv64(piece);
                let same = seen.get(&h).and_then(|list| {
                    list.iter().copied().find(|&e| {
                        let at = usize::try_from(entries[e].2).unwrap_or(usize::MAX);
                        data.get(at..at + c) == Some(piece)
                    })
                });
                if let Some(e) = same {
                    entries.push((offset, 1, e as u64));
                    continue;
                }
                seen.entry(h).or_default().push(entries.len());
            }
            entries.push((offset, 0, data.len() as u64));
            data.extend_from_slice(piece);
        }
    }
    let mut out = Vec::with_capacity(data.len() + entries.len() * 24 + 256);
    out.extend_from_slice(MAGIC);
    for v in [
        VERSION,
        space.base(),
        space.reserved_bytes(),
        region,
        chunk,
        (u64::from(spec.dedup) * FLAG_DEDUP) | (u64::from(spec.reserved_pool) * FLAG_POOL),
        built.root,
        built.nodes,
        built.checksum,
    ] {
        put(&mut out, v);
    }
    put(&mut out, regions.len() as u64);
    for &r in &regions {
        put(&mut out, r as u64);
    }
    put(&mut out, alloc.blocks().len() as u64);
    for b in alloc.blocks() {
        put(&mut out, b.first as u64);
        put(&mut out, b.count as u64);
    }
    put(&mut out, entries.len() as u64);
    for (o, k, a) in &entries {
        put(&mut out, *o);
        put(&mut out, *k);
        put(&mut out, *a);
    }
    put(&mut out, data.len() as u64);
    out.extend_from_slice(&data);
    let sum = fnv64(&out);
    put(&mut out, sum);
    Ok(out)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn u64(&mut self, what: &str) -> Result<u64, CkptError> {
        let end = self.at + 8;
        let b = self
            .bytes
            .get(self.at..end)
            .ok_or_else(|| CkptError::Corrupt(format!("truncated at {what}")))?;
        self.at = end;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }
    fn count(&mut self, what: &str) -> Result<usize, CkptError> {
        let n = self.u64(what)?;
        let left = (self.bytes.len() - self.at) as u64 / 8;
        if n > MAX_ENTRIES || n > left {
            return Err(CkptError::Corrupt(format!(
                "{what} count {n} is impossible"
            )));
        }
        Ok(usize::try_from(n).unwrap_or(0))
    }
}

/// Parses and checks a whole image: magic, version, checksum, and that every region, block and
/// chunk lies inside the range, chunks land in committed regions at most once each, and every
/// duplicate points at an earlier data chunk.
///
/// # Errors
/// [`CkptError::Corrupt`] naming the first problem.
#[allow(clippy::too_many_lines)] // one pass over the input, one arm per field, so each error names its row and field
pub fn parse(bytes: &[u8]) -> Result<Image, CkptError> {
    if bytes.len() < MAGIC.len() + 8 || &bytes[..8] != MAGIC {
        return Err(CkptError::Corrupt(
            "not a bubblelab checkpoint image (bad magic)".into(),
        ));
    }
    let (body, tail) = bytes.split_at(bytes.len() - 8);
    let stored = u64::from_le_bytes(tail.try_into().unwrap_or([0; 8]));
    let sum = fnv64(body);
    if stored != sum {
        return Err(CkptError::Corrupt(format!(
            "checksum mismatch (stored {stored:#018x}, computed {sum:#018x})"
        )));
    }
    let mut r = Reader { bytes: body, at: 8 };
    let version = r.u64("version")?;
    if version != VERSION {
        return Err(CkptError::Corrupt(format!(
            "image version {version}, this build reads {VERSION}"
        )));
    }
    let (base, reserved, region, chunk) = (
        r.u64("base")?,
        r.u64("reserved")?,
        r.u64("region")?,
        r.u64("chunk")?,
    );
    if region == 0 || chunk == 0 || region % chunk != 0 || reserved == 0 || reserved % region != 0 {
        return Err(CkptError::Corrupt(format!(
            "inconsistent sizes: reserved {reserved}, region {region}, chunk {chunk}"
        )));
    }
    if base.checked_add(reserved).is_none() {
        return Err(CkptError::Corrupt(
            "range overflows the address space".into(),
        ));
    }
    let n_regions = reserved / region;
    let flags = r.u64("flags")?;
    let (root, nodes, checksum) = (r.u64("root")?, r.u64("nodes")?, r.u64("checksum")?);
    let nr = r.count("regions")?;
    let mut committed = vec![false; usize::try_from(n_regions).unwrap_or(0)];
    let mut regions = Vec::with_capacity(nr);
    for _ in 0..nr {
        let i = r.u64("region index")?;
        if i >= n_regions || committed[i as usize] {
            return Err(CkptError::Corrupt(format!(
                "region index {i} is out of range or repeated"
            )));
        }
        committed[i as usize] = true;
        regions.push(i);
    }
    let nb = r.count("blocks")?;
    let mut blocks = Vec::with_capacity(nb);
    for _ in 0..nb {
        let (first, count) = (r.u64("block")?, r.u64("block")?);
        if count == 0 || first.checked_add(count).is_none_or(|e| e > n_regions) {
            return Err(CkptError::Corrupt(format!(
                "block {first}+{count} is out of range"
            )));
        }
        if !(first..first + count).all(|i| committed[i as usize]) {
            return Err(CkptError::Corrupt(format!(
                "block {first}+{count} is not in saved regions"
            )));
        }
        blocks.push(Block {
            first: first as usize,
            count: count as usize,
        });
    }
    let nc = r.count("chunks")?;
    let mut raw = Vec::with_capacity(nc);
    for _ in 0..nc {
        raw.push((r.u64("chunk")?, r.u64("chunk")?, r.u64("chunk")?));
    }
    let data_len = r.u64("data length")?;
    let data = body
        .get(r.at..)
        .filter(|d| d.len() as u64 == data_len)
        .ok_or_else(|| {
            CkptError::Corrupt(format!("data length {data_len} does not match the file"))
        })?
        .to_vec();
    let mut covered = std::collections::HashSet::with_capacity(nc);
    let mut chunks = Vec::with_capacity(nc);
    for (e, &(offset, kind, arg)) in raw.iter().enumerate() {
        if offset % chunk != 0 || offset >= reserved || !committed[(offset / region) as usize] {
            return Err(CkptError::Corrupt(format!(
                "chunk {e} at offset {offset:#x} is not in a saved region"
            )));
        }
        if !covered.insert(offset) {
            return Err(CkptError::Corrupt(format!(
                "chunk {e} at offset {offset:#x} is saved twice"
            )));
        }
        let at = match kind {
            0 => arg,
            1 if arg < e as u64 && raw[arg as usize].1 == 0 => raw[arg as usize].2,
            _ => {
                return Err(CkptError::Corrupt(format!(
                    "chunk {e} has a bad kind {kind} / reference {arg}"
                )))
            }
        };
        if at.checked_add(chunk).is_none_or(|end| end > data_len) {
            return Err(CkptError::Corrupt(format!(
                "chunk {e} points past the data"
            )));
        }
        chunks.push((offset, at));
    }
    Ok(Image {
        base,
        reserved,
        region,
        chunk,
        dedup: flags & FLAG_DEDUP != 0,
        reserved_pool: flags & FLAG_POOL != 0,
        root,
        nodes,
        checksum,
        regions,
        blocks,
        chunks,
        data,
    })
}

/// Restores a checked image into `alloc`, whose space must be the image's range, mapped and
/// empty. On any failure the whole range is released again: nothing is left half restored.
///
/// # Errors
/// [`CkptError::Invalid`] when the space is not the image's range; the space's own errors.
pub fn restore<S: Space>(alloc: &mut Allocator<S>, image: &Image) -> Result<(), CkptError> {
    let s = &alloc.space;
    if s.base() != image.base
        || s.reserved_bytes() != image.reserved
        || s.region_bytes() != image.region
    {
        return Err(CkptError::Invalid(format!(
            "the image is for {} bytes at {:#x} in regions of {}, the space is {} bytes at {:#x} in regions of {}",
            image.reserved, image.base, image.region, s.reserved_bytes(), s.base(), s.region_bytes()
        )));
    }
    let result = (|| {
        for &i in &image.regions {
            alloc.space.commit(i as usize)?;
        }
        let c = usize::try_from(image.chunk).unwrap_or(0);
        for &(offset, at) in &image.chunks {
            let at = usize::try_from(at).unwrap_or(0);
            alloc.space.write(offset, &image.data[at..at + c])?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = alloc.space.release();
        alloc.forget();
        return Err(e);
    }
    alloc.adopt(&image.blocks);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::host::HostSpace;
    use crate::checkpoint::workload;

    const BASE: usize = 0x2C00_0000_0000;

    #[test]
    fn every_single_byte_flip_is_refused_before_anything_is_mapped() {
        let region = 64 << 10;
        let space = HostSpace::reserve(BASE, 32 * region, region).unwrap();
        let mut alloc = Allocator::new(space);
        let built = workload::build(&mut alloc, 500, 2 * region as u64, region as u64, 7).unwrap();
        let spec = SaveSpec {
            reserved_pool: false,
            dedup: true,
            chunk_bytes: 4096,
        };
        let bytes = save(&alloc, &built, spec).unwrap();
        assert!(parse(&bytes).is_ok());
        for at in (0..bytes.len()).step_by(97) {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            assert!(
                matches!(parse(&bad), Err(CkptError::Corrupt(_))),
                "flip at {at}"
            );
        }
        // A restore into a space of another size is refused and leaves the space as it was.
        let img = parse(&bytes).unwrap();
        alloc.space.release().unwrap();
        let other = HostSpace::reserve(BASE + 64 * region, 16 * region, region).unwrap();
        let mut a2 = Allocator::new(other);
        assert!(restore(&mut a2, &img).is_err());
        assert!(a2.active_regions().is_empty());
        drop(a2);
        alloc.space.remap().unwrap();
        restore(&mut alloc, &img).unwrap();
        assert_eq!(
            workload::traverse(&alloc.space, img.root, img.nodes).unwrap(),
            built.checksum
        );
        assert_eq!(
            alloc.active_regions().len() as u64,
            img.blocks.iter().map(|b| b.count as u64).sum::<u64>()
        );
    }
}
