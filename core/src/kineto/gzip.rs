//! A bounded gzip reader (RFC 1952, "GZIP file format specification version 4.3", Deutsch,
//! 1996) on top of `miniz_oxide`'s raw DEFLATE (RFC 1951) decoder.
//!
//! The member header (ID1 ID2 CM FLG MTIME XFL OS, then the optional FEXTRA, FNAME, FCOMMENT and
//! FHCRC fields), the raw DEFLATE data and the trailer (CRC-32 and ISIZE, little-endian) are read
//! here; every failure names the byte offset in the compressed input. Concatenated members
//! (RFC 1952 §2.2) are inflated one after the other; zero bytes after the last member (tape or
//! block padding) are accepted, anything else is an error. The inflated size is capped.

use alloc::boxed::Box;
use alloc::format;
use alloc::vec::Vec;

use miniz_oxide::inflate::core::inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use super::{ErrorKind, KinetoError};

/// The two magic bytes that open every gzip member (RFC 1952 §2.3.1: ID1 = 31, ID2 = 139).
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const FRESERVED: u8 = 0xe0;
/// DEFLATE cannot expand data more than about 1032:1 (a 258-byte match costs at least 2 bits),
/// so an ISIZE hint above that is a lie and only the cap applies.
const MAX_DEFLATE_RATIO: usize = 1032;
/// Growth step of the output buffer when the trailer's size hint is missing or wrong, bytes.
const MIN_GROWTH: usize = 64 << 10;

/// True when `bytes` starts with the gzip magic.
#[must_use]
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[..2] == GZIP_MAGIC
}

fn gz_err(offset: usize, message: alloc::string::String) -> KinetoError {
    KinetoError {
        kind: ErrorKind::Gzip,
        offset: Some(offset as u64),
        event: None,
        gzipped: true,
        message,
    }
}

fn limit_err(max_out: usize) -> KinetoError {
    KinetoError {
        kind: ErrorKind::Limit,
        offset: None,
        event: None,
        gzipped: true,
        message: format!("the gzip data inflates to more than the {max_out}-byte limit"),
    }
}

/// Inflates every gzip member of `input` into one buffer of at most `max_out` bytes.
///
/// # Errors
/// A [`KinetoError`] of kind [`ErrorKind::Gzip`] naming the compressed byte offset (bad magic,
/// unknown method or flags, truncated header, corrupt or truncated DEFLATE data, CRC-32 or
/// ISIZE mismatch, trailing garbage), or of kind [`ErrorKind::Limit`] when the data inflates
/// past `max_out` bytes or the buffer cannot be allocated.
pub fn gunzip(input: &[u8], max_out: usize) -> Result<Vec<u8>, KinetoError> {
    if !is_gzip(input) {
        return Err(gz_err(0, "expected the gzip magic bytes 1f 8b".into()));
    }
    let mut out: Vec<u8> = Vec::new();
    grow_to(&mut out, initial_size(input, max_out), max_out)?;
    let mut out_pos = 0usize;
    let mut pos = 0usize;
    loop {
        pos = read_header(input, pos)?;
        let member_start = out_pos;
        let mut inflater = Box::<DecompressorOxide>::default();
        loop {
            let rest = input.get(pos..).unwrap_or(&[]);
            let window = out.get_mut(member_start..).unwrap_or(&mut []);
            let (status, used_in, used_out) = decompress(
                &mut inflater,
                rest,
                window,
                out_pos - member_start,
                TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
            );
            pos = pos.saturating_add(used_in).min(input.len());
            out_pos = out_pos.saturating_add(used_out).min(out.len());
            match status {
                TINFLStatus::Done => break,
                TINFLStatus::HasMoreOutput => {
                    if out.len() >= max_out {
                        return Err(limit_err(max_out));
                    }
                    let target = out
                        .len()
                        .saturating_mul(2)
                        .max(out.len().saturating_add(MIN_GROWTH))
                        .min(max_out);
                    grow_to(&mut out, target, max_out)?;
                }
                TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
                    return Err(gz_err(
                        input.len(),
                        "truncated: the DEFLATE data ends before its final block".into(),
                    ));
                }
                _ => {
                    return Err(gz_err(
                        pos,
                        format!(
                            "corrupt DEFLATE data (inflater status {status:?} after {} inflated bytes)",
                            out_pos - member_start
                        ),
                    ));
                }
            }
        }
        let trailer = input.get(pos..pos.saturating_add(8)).ok_or_else(|| {
            gz_err(
                input.len(),
                "truncated: the 8-byte CRC-32/ISIZE trailer is missing".into(),
            )
        })?;
        let stored_crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
        let stored_size = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
        let member = &out[member_start..out_pos];
        let crc = crc32(member);
        if crc != stored_crc {
            return Err(gz_err(
                pos,
                format!(
                    "CRC-32 mismatch: the trailer says {stored_crc:08x}, the data gives {crc:08x}"
                ),
            ));
        }
        // ISIZE is the inflated size modulo 2^32 (RFC 1952 §2.3.1).
        let size = (member.len() as u64 & 0xffff_ffff) as u32;
        if size != stored_size {
            return Err(gz_err(
                pos + 4,
                format!(
                    "ISIZE mismatch: the trailer says {stored_size} bytes, the data has {size}"
                ),
            ));
        }
        pos += 8;
        let rest = &input[pos..];
        if rest.is_empty() || rest.iter().all(|&b| b == 0) {
            break;
        }
        if !is_gzip(rest) {
            return Err(gz_err(
                pos,
                "unexpected bytes after the end of the gzip member".into(),
            ));
        }
    }
    out.truncate(out_pos);
    if out.capacity() - out.len() > out.len() / 8 + MIN_GROWTH {
        out.shrink_to_fit();
    }
    Ok(out)
}

/// The first output size: the last member's ISIZE when it is plausible (one member under
/// 4 GiB, the common case, then fits exactly), else four times the input.
fn initial_size(input: &[u8], max_out: usize) -> usize {
    let n = input.len();
    let fallback = n.saturating_mul(4).max(MIN_GROWTH);
    let hint = if n >= 18 {
        let t = &input[n - 4..];
        let isize = u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize;
        if isize <= n.saturating_mul(MAX_DEFLATE_RATIO) {
            isize
        } else {
            fallback
        }
    } else {
        fallback
    };
    hint.min(max_out)
}

fn grow_to(out: &mut Vec<u8>, len: usize, max_out: usize) -> Result<(), KinetoError> {
    if len <= out.len() {
        return Ok(());
    }
    out.try_reserve_exact(len - out.len())
        .map_err(|_| KinetoError {
            kind: ErrorKind::Limit,
            offset: None,
            event: None,
            gzipped: true,
            message: format!(
                "cannot allocate {len} bytes to inflate the gzip data (cap {max_out})"
            ),
        })?;
    out.resize(len, 0);
    Ok(())
}

/// Reads one member header starting at `pos`; returns the offset of its DEFLATE data.
fn read_header(input: &[u8], start: usize) -> Result<usize, KinetoError> {
    let fixed = input.get(start..start.saturating_add(10)).ok_or_else(|| {
        gz_err(
            input.len(),
            "truncated: the 10-byte gzip header is incomplete".into(),
        )
    })?;
    if fixed[..2] != GZIP_MAGIC {
        return Err(gz_err(start, "expected the gzip magic bytes 1f 8b".into()));
    }
    if fixed[2] != 8 {
        return Err(gz_err(
            start + 2,
            format!("compression method {} is not DEFLATE (8)", fixed[2]),
        ));
    }
    let flags = fixed[3];
    if flags & FRESERVED != 0 {
        return Err(gz_err(
            start + 3,
            format!("reserved header flag bits are set ({flags:#04x})"),
        ));
    }
    let mut pos = start + 10;
    if flags & FEXTRA != 0 {
        let len_bytes = input.get(pos..pos.saturating_add(2)).ok_or_else(|| {
            gz_err(
                input.len(),
                "truncated: the FEXTRA length is missing".into(),
            )
        })?;
        let xlen = usize::from(u16::from_le_bytes([len_bytes[0], len_bytes[1]]));
        pos += 2;
        if input.len() < pos.saturating_add(xlen) {
            return Err(gz_err(
                input.len(),
                format!("truncated: the {xlen}-byte FEXTRA field is incomplete"),
            ));
        }
        pos += xlen;
    }
    for (flag, what) in [(FNAME, "file name"), (FCOMMENT, "comment")] {
        if flags & flag != 0 {
            let rest = input.get(pos..).unwrap_or(&[]);
            let end = rest.iter().position(|&b| b == 0).ok_or_else(|| {
                gz_err(
                    input.len(),
                    format!("truncated: the zero-terminated {what} in the header never ends"),
                )
            })?;
            pos += end + 1;
        }
    }
    if flags & FHCRC != 0 {
        let stored = input.get(pos..pos.saturating_add(2)).ok_or_else(|| {
            gz_err(
                input.len(),
                "truncated: the header CRC-16 is missing".into(),
            )
        })?;
        let stored = u16::from_le_bytes([stored[0], stored[1]]);
        // CRC16 = the two low-order bytes of the CRC-32 of the header so far (RFC 1952 §2.3.1).
        let crc = (crc32(&input[start..pos]) & 0xffff) as u16;
        if crc != stored {
            return Err(gz_err(
                pos,
                format!("header CRC-16 mismatch: stored {stored:04x}, computed {crc:04x}"),
            ));
        }
        pos += 2;
    }
    Ok(pos)
}

/// The gzip CRC-32 of `data` (RFC 1952 §8: CRC-32/ISO-HDLC, reflected polynomial 0xEDB88320),
/// by `crc32fast` (SIMD where the target has it, slicing-by-16 otherwise).
#[must_use]
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_of_check_string() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
    }
}
