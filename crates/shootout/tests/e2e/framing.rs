//! Response bodies of every framing are read to their end, and any size streams through in constant memory.

use std::process::Stdio;

use nix::libc;

use crate::support::{fault_server, load, shootout, Fault, Target};

#[test]
fn content_length_bodies() {
    let target = Target::start();
    let result = load(&["-n", "20", "-c", "2", &target.url("/bytes/100000")]);
    assert_eq!(result.requests.ok, 20);
    assert!(result.bytes_received >= 20 * 100_000);
    assert!(result.bytes_received < 20 * 100_300, "only the body and a short head per response");
    assert_eq!(result.connections.opened, 2);
}

#[test]
fn chunked_bodies() {
    let target = Target::start();
    let result = load(&["-n", "20", "-c", "2", &target.url("/chunked/100000")]);
    assert_eq!(result.requests.ok, 20);
    assert!(result.bytes_received >= 20 * 100_000);
    assert_eq!(result.connections.opened, 2, "chunked framing keeps the connection");
}

#[test]
fn close_delimited_bodies() {
    let address = fault_server(Fault::CloseDelimited(50_000));
    let result = load(&["-n", "30", "-c", "3", &format!("http://{address}/")]);
    assert_eq!(result.requests.ok, 30);
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    assert!(result.bytes_received >= 30 * 50_000);
    assert_eq!(result.connections.opened, 30, "each body ends with its connection");
}

#[test]
#[allow(clippy::zombie_processes)] // reaped below with wait4, to read its peak memory
fn a_gigabyte_response_streams_in_flat_memory() {
    let target = Target::start();
    let child = shootout()
        .args(["load", "--json", "-n", "1", "-c", "1", &target.url("/bytes/1073741824")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    // Reap it ourselves to read its own peak memory (wait_with_output cannot give the rusage).
    let stdout = std::thread::spawn({
        let mut out = child.stdout.unwrap();
        move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut out, &mut text).unwrap();
            text
        }
    });
    // Neither nix nor rustix wraps wait4, the only call that reaps one given child and returns its rusage
    // (getrusage(RUSAGE_CHILDREN) would mix in every child the other tests reap), so it stays a libc call.
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child with valid out-pointers.
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    assert_eq!(status, 0, "shootout exited with {status}");
    let result: shootout_model::LoadResult = serde_json::from_str(&stdout.join().unwrap()).unwrap();
    assert_eq!(result.requests.ok, 1);
    assert!(result.bytes_received >= 1 << 30);
    let peak_mib = usage.ru_maxrss / 1024;
    assert!(peak_mib < 40, "peak RSS {peak_mib} MiB for a 1 GiB body");
}
