//! A hang detector shared by the binaries' tests (included by `#[path]`):
//! run a command and fail the test if it has not exited within a generous
//! limit. The limit catches a hang (a FIFO opened, work that grows with a
//! hostile claim); it is not a timing, and nothing asserts how fast it ran.
#![allow(dead_code)]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `cmd`'s output, its stdout and stderr captured; panics naming `what` if
/// it runs past `secs` seconds (the child is killed first).
pub fn output_within(cmd: &mut Command, secs: u64, what: &str) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("{what}: still running after {secs} s (a hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}
