//! Response bodies of every framing are read to their end, and any size streams through in constant memory.

use std::process::Stdio;

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
fn a_gigabyte_response_streams_in_flat_memory() {
    let target = Target::start();
    let mut child = shootout()
        .args(["load", "--json", "-n", "1", "-c", "1", &target.url("/bytes/1073741824")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = std::thread::spawn({
        let mut out = child.stdout.take().unwrap();
        move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut out, &mut text).unwrap();
            text
        }
    });
    // The child's own peak, VmHWM, read while it runs: its high-water mark only grows, so the last reading is
    // its peak to within the last few milliseconds. (The rusage of wait4 would not do: a child started with vfork,
    // as std starts it, inherits at exec the test process's own peak, which depends on the other tests.)
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
            peak_kib = peak_kib.max(hwm.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(status.success(), "shootout exited with {status}");
    let result: shootout_model::LoadResult = serde_json::from_str(&stdout.join().unwrap()).unwrap();
    assert_eq!(result.requests.ok, 1);
    assert!(result.bytes_received >= 1 << 30);
    assert!(peak_kib > 1024, "the peak was read while it ran");
    let peak_mib = peak_kib / 1024;
    assert!(peak_mib < 40, "peak RSS {peak_mib} MiB for a 1 GiB body");
}
