//! Opaque log cursors. A cursor names one process and one sequence number; it is validated on the
//! way in so that a cursor of another process, a malformed one or one from the future is refused
//! with `InvalidCursor` instead of silently reading the wrong thing. The encoding is
//! `pvc1_<process id>_<seq>` in hex behind a short checksum, so that hand-edited cursors fail.

use crate::core::error::{CoreError, CoreResult};

const PREFIX: &str = "pvc1";

fn checksum(process_id: &str, seq: u64) -> u32 {
    // FNV-1a: not security, only a guard against typos and truncated copies.
    let mut h: u32 = 0x811c9dc5;
    for b in process_id.bytes().chain(seq.to_le_bytes()) {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

pub fn encode(process_id: &str, seq: u64) -> String {
    format!("{PREFIX}.{process_id}.{seq:x}.{:08x}", checksum(process_id, seq))
}

/// Parses `cursor` for `process_id`, whose newest sequence number is `last_seq`.
pub fn decode(cursor: &str, process_id: &str, last_seq: u64) -> CoreResult<u64> {
    let bad = |why: &str| CoreError::InvalidCursor(format!("{why}: {}", shorten(cursor)));
    let mut parts = cursor.split('.');
    let (Some(prefix), Some(id), Some(seq), Some(sum), None) =
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("malformed cursor"));
    };
    if prefix != PREFIX {
        return Err(bad("malformed cursor"));
    }
    if seq.is_empty() || seq.len() > 16 || sum.len() != 8 {
        return Err(bad("malformed cursor"));
    }
    let seq = u64::from_str_radix(seq, 16).map_err(|_| bad("malformed cursor"))?;
    let sum = u32::from_str_radix(sum, 16).map_err(|_| bad("malformed cursor"))?;
    if checksum(id, seq) != sum {
        return Err(bad("malformed cursor"));
    }
    if id != process_id {
        return Err(bad("cursor belongs to another process"));
    }
    if seq > last_seq {
        return Err(bad("cursor is from the future"));
    }
    Ok(seq)
}

fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(80).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trips() {
        let c = encode("p7", 42);
        assert_eq!(decode(&c, "p7", 42), Ok(42));
    }

    #[test]
    fn refuses_other_process_future_and_malformed() {
        let c = encode("p7", 3);
        assert!(matches!(decode(&c, "p8", 10), Err(CoreError::InvalidCursor(m)) if m.contains("another process")));
        assert!(matches!(decode(&c, "p7", 2), Err(CoreError::InvalidCursor(m)) if m.contains("future")));
        for bad in ["", "x", "pvc1.p7.3", "pvc1.p7.3.00000000", "pvc1.p7.zz.00000000", &c[..c.len() - 1]] {
            assert!(decode(bad, "p7", 10).is_err(), "{bad:?} accepted");
        }
    }

    proptest! {
        #[test]
        fn no_input_panics(s in ".{0,64}") {
            let _ = decode(&s, "p1", u64::MAX);
        }

        #[test]
        fn mutated_cursors_are_refused(seq in 0u64..1_000_000, pos in 0usize..30, ch in "[0-9a-z.]") {
            let c = encode("p1", seq);
            let pos = pos % c.len();
            let mut m = c.clone();
            m.replace_range(pos..pos + 1, &ch);
            if m != c {
                prop_assert!(decode(&m, "p1", u64::MAX).is_err());
            }
        }
    }
}
