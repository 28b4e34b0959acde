//! A sparse file stays sparse in a checkpoint and in what is restored from it.
use super::*;
use std::io::{Read, Seek, SeekFrom, Write};

const GIB: u64 = 1 << 30;

/// (offset, bytes) written into an otherwise empty 1 GiB file: a start, a middle that is not
/// block-aligned, and the very end.
fn pieces() -> Vec<(u64, Vec<u8>)> {
    vec![(0, vec![1u8; 4096]), (300 << 20 | 123, b"in the middle".to_vec()), (GIB - 2048, vec![9u8; 2048])]
}

fn same_content(a: &Path, b: &Path) -> bool {
    let (mut fa, mut fb) = (std::fs::File::open(a).unwrap(), std::fs::File::open(b).unwrap());
    let (mut ba, mut bb) = (vec![0u8; 4 << 20], vec![0u8; 4 << 20]);
    loop {
        let n = fa.read(&mut ba).unwrap();
        let mut m = 0;
        while m < n {
            let k = fb.read(&mut bb[m..n]).unwrap();
            if k == 0 {
                return false;
            }
            m += k;
        }
        if n == 0 {
            return fb.read(&mut bb).unwrap() == 0;
        }
        if ba[..n] != bb[..n] {
            return false;
        }
    }
}

fn allocated(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().blocks() * 512
}

#[test]
fn a_sparse_gigabyte_stays_sparse_through_capture_and_restore() {
    let base = tmp("sparse");
    let (wd, cps, back) = (base.join("wd"), base.join(".checkpoints"), base.join("back"));
    std::fs::create_dir_all(&wd).unwrap();
    std::fs::create_dir_all(&back).unwrap();
    let mut f = std::fs::File::create(wd.join("disk.img")).unwrap();
    f.set_len(GIB).unwrap();
    for (off, data) in pieces() {
        f.seek(SeekFrom::Start(off)).unwrap();
        f.write_all(&data).unwrap();
    }
    drop(f);
    std::fs::write(wd.join("small"), "not sparse").unwrap();
    let src_blocks = allocated(&wd.join("disk.img"));
    assert!(src_blocks < 1 << 20, "the source is sparse: {src_blocks} bytes allocated");

    let report = capture(&wd, &cps, "box", None, 2).unwrap();
    assert_eq!(report.bytes, GIB + 10, "bytes counts the file's size");
    restore(&cps.join("box"), &back, 2).unwrap();
    for copy in [cps.join("box/disk.img"), back.join("disk.img")] {
        let bytes = allocated(&copy);
        assert!(bytes <= src_blocks + (1 << 20), "{} takes {bytes} bytes on disk", copy.display());
        assert_eq!(std::fs::metadata(&copy).unwrap().len(), GIB);
        assert!(same_content(&wd.join("disk.img"), &copy), "{} has the same content", copy.display());
    }
    assert_eq!(std::fs::read(back.join("small")).unwrap(), b"not sparse");
    remove_tree(&base).unwrap();
}
