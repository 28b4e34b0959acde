//! Memory for the log's large chunks, recycled. A flood arrives in reads of up to 256 KiB; copied
//! each into a fresh allocation of that size, most came from pages the allocator had just given
//! back, and the copy faulted them in again (perf: 56% of a reader's page faults, 1 GiB flood).
//! Chunks from 192 KiB up (a read that filled, or nearly filled, its buffer) go into blocks of
//! 256 KiB kept in a small free list, so a block holds at most a third more than its bytes;
//! smaller ones are plain allocations. A stream's read buffer is itself a block once a read has
//! filled it, and a large read becomes the log's chunk as it is, without a copy.

use bytes::Bytes;
use std::sync::Mutex;

pub(super) const SIZE: usize = 256 * 1024;
/// The smallest chunk given a block of its own: a block holds at most a third more than its
/// bytes, so the log's byte bound stays close to the memory it holds.
const MIN: usize = SIZE / 4 * 3;
/// Free blocks kept: 4 MiB at most.
const KEEP: usize = 16;

/// Free blocks, each `SIZE` bytes long and initialised.
static FREE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A block and how many of its bytes are the chunk's.
struct Block(Vec<u8>, usize);

impl AsRef<[u8]> for Block {
    fn as_ref(&self) -> &[u8] {
        &self.0[..self.1]
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        if free.len() < KEEP {
            free.push(v);
        }
    }
}

/// A block to fill: a free one, or a new one (zeroed, so that every block is initialised).
fn fresh() -> Vec<u8> {
    FREE.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_else(|| vec![0u8; SIZE])
}

pub(super) fn chunk(data: &[u8]) -> Bytes {
    if !(MIN..=SIZE).contains(&data.len()) {
        return Bytes::copy_from_slice(data);
    }
    let mut v = fresh();
    v[..data.len()].copy_from_slice(data);
    Bytes::from_owner(Block(v, data.len()))
}

/// A buffer that a stream's reads go into: small at first (most children write little), a
/// block once a read has filled it.
pub struct ReadBuf(Vec<u8>);

impl Drop for ReadBuf {
    fn drop(&mut self) {
        if self.0.len() == SIZE {
            drop(Block(std::mem::take(&mut self.0), 0));
        }
    }
}

impl ReadBuf {
    pub fn small(len: usize) -> Self {
        ReadBuf(vec![0u8; len])
    }

    pub fn block() -> Self {
        ReadBuf(fresh())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }

    /// The first `n` bytes as a chunk: the block itself for a large read, else a copy.
    pub(super) fn take(&mut self, n: usize) -> Bytes {
        if self.0.len() == SIZE && (MIN..=SIZE).contains(&n) {
            let full = std::mem::replace(&mut self.0, fresh());
            return Bytes::from_owner(Block(full, n));
        }
        chunk(&self.0[..n])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunks_keep_their_bytes_whether_in_blocks_or_not() {
        let big: Vec<u8> = (0..250_000u32).map(|i| (i % 251) as u8).collect();
        let first = super::chunk(&big);
        assert_eq!(&first[..], &big[..]);
        drop(first);
        // The next large chunk may land in the block just freed: it holds its own bytes only.
        let other: Vec<u8> = (0..200_000u32).map(|i| (i % 7) as u8).collect();
        let second = super::chunk(&other);
        assert_eq!(&second[..], &other[..]);
        // A slice outlives the chunk it came from, and its block is not reused meanwhile.
        let part = second.slice(10..20);
        drop(second);
        let third = super::chunk(&big);
        assert_eq!(&part[..], &other[10..20]);
        assert_eq!(&third[..], &big[..]);
        assert_eq!(&super::chunk(b"abc")[..], b"abc");
    }

    #[test]
    fn a_large_read_is_taken_whole_and_the_buffer_filled_again_is_another() {
        let mut buf = super::ReadBuf::block();
        buf.bytes_mut()[..200_000].fill(7);
        let first = buf.take(200_000);
        assert!(first.iter().all(|&b| b == 7) && first.len() == 200_000);
        // The next read goes into another block: the chunk taken keeps its bytes.
        buf.bytes_mut()[..200_000].fill(9);
        let second = buf.take(200_000);
        assert!(first.iter().all(|&b| b == 7) && second.iter().all(|&b| b == 9));
        // A small read is copied out; the block stays the buffer.
        buf.bytes_mut()[..3].copy_from_slice(b"abc");
        assert_eq!(&buf.take(3)[..], b"abc");
        assert_eq!(buf.len(), super::SIZE);
    }
}
