//! What a persistent sandbox's supervisor (`lib/persistent/`) asks of the kernel: a lock held on
//! the lock file of its id for its whole life (`lockfile`), the credentials of whoever
//! connects to its socket (`credentials`), a wider send buffer on that socket (`sockbuf`), and
//! the descriptors of its processes' shared output handed to its clients (`fdpass`).
//!
//! May use: nothing else of the core.

pub mod credentials;
pub mod fdpass;
pub mod lockfile;
pub mod sockbuf;
