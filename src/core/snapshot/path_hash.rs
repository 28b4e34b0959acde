//! The hash of the tables a checkpoint walk looks every path up in (a record's entries, a
//! directory's names).

use std::sync::OnceLock;

/// The hash of a record's table. A capture or a restore looks up every file of the tree, and
/// std's SipHash of a path took as long as the lookup's other work; this one takes 8 bytes at a
/// step. Keyed once per process at random, so a tree's names cannot be chosen to collide.
#[derive(Clone, Copy)]
pub(super) struct PathHash(u64);

impl Default for PathHash {
    fn default() -> Self {
        use std::hash::BuildHasher;
        static KEY: OnceLock<u64> = OnceLock::new();
        PathHash(*KEY.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(0x7072_6f63_7669_736fu64)))
    }
}

impl std::hash::BuildHasher for PathHash {
    type Hasher = PathHasher;
    fn build_hasher(&self) -> PathHasher {
        PathHasher(self.0)
    }
}

pub(super) struct PathHasher(u64);

impl PathHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl std::hash::Hasher for PathHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(last));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        // Every bit of the state into the low ones (the table's index) and the high ones (its
        // tags): murmur3's finalizer.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}
