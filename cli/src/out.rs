//! Standard output that survives a gag.
//!
//! halo2curves 0.9.0 (under nova-snark) prints debug lines to stdout whenever
//! it checks a G2 point. The CLI therefore silences file descriptor 1 for the
//! whole run and writes its own output through a duplicate of the original
//! stdout taken first, so `--json` output stays parseable.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::sync::{Mutex, OnceLock};

static OUT: OnceLock<Mutex<Option<File>>> = OnceLock::new();

/// Duplicate stdout (call once, before silencing fd 1).
pub fn init() {
    let dup = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(File::from);
    let _ = OUT.set(Mutex::new(dup));
}

/// Write one line to the real stdout (falls back to `println!`).
pub fn line(s: &str) {
    let mut done = false;
    if let Some(m) = OUT.get() {
        if let Ok(mut g) = m.lock() {
            if let Some(f) = g.as_mut() {
                done = writeln!(f, "{s}").and_then(|_| f.flush()).is_ok();
            }
        }
    }
    if !done {
        println!("{s}");
    }
}

/// `println!` to the real stdout.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => { $crate::out::line(&format!($($t)*)) };
}
