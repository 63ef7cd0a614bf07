//! HTTP/2 through the binary: counts equal to what the server saw with many streams per connection, in the
//! clear and over TLS, closed and open model; GOAWAY'd connections opened again and counted; a 1 GiB body with
//! flat memory; a scenario mix whose body checks read HTTP/2 responses; and one clear line for a server that does
//! not speak HTTP/2.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use shootout_model::{ErrorKind, Protocol};

use crate::support::{fault_server, load, shootout, Fault, Target};

#[test]
fn many_streams_per_connection_count_what_the_server_saw() {
    let target = Target::start();
    let result = load(&["--http2", "--streams", "10", "-c", "4", "-t", "2", "-n", "20000", &target.url("/hello")]);
    assert_eq!((result.options.protocol, result.options.streams), (Protocol::Http2, 10));
    assert_eq!(result.requests.ok, 20_000);
    assert_eq!(result.latency.count, 20_000);
    assert_eq!(target.served(), 20_000, "the server saw what shootout reported");
    assert_eq!(result.connections.opened, 4, "4 connections carry the 40 streams");
    let setup = result.http2_setup.expect("HTTP/2 results time each connection's setup");
    assert_eq!(setup.count, 4, "each connection's SETTINGS exchange is timed apart");
    assert!(result.tls_handshake.is_none());
    assert!(result.bytes_received >= 20_000 * 12);
}

#[test]
fn over_tls_h2_is_chosen_through_alpn() {
    let target = Target::start_with(&["--tls"]);
    let result = load(&["--http2", "-k", "--streams", "8", "-c", "2", "-n", "3000", &target.url("/hello")]);
    assert_eq!(result.requests.ok, 3000);
    assert_eq!(target.served(), 3000);
    let setup = result.http2_setup.expect("HTTP/2 results time each connection's setup");
    assert_eq!((result.connections.opened, setup.count), (2, 2), "TLS handshake and SETTINGS, timed together");
}

#[test]
fn the_open_model_takes_free_streams_then_new_connections() {
    let target = Target::start();
    let args = ["--http2", "--streams", "5", "-R", "2000", "-d", "1s", "--max-connections", "4", "-t", "1"];
    let result = load(&[&args[..], &[&target.url("/hello")]].concat());
    assert_eq!(result.requests.failed, 0);
    assert!((1900..=2100).contains(&result.requests.total), "{} requests at 2000/s for 1 s", result.requests.total);
    assert_eq!(target.served(), result.requests.total);
    assert!(result.connections.opened <= 4, "{} connections", result.connections.opened);
}

#[test]
fn a_goaway_connection_is_opened_again_and_counted() {
    // The target ends the connection with GOAWAY after answering /close. Streams the server did not take fail
    // as `goaway`; everything it answered is counted.
    let target = Target::start();
    let result = load(&["--http2", "--streams", "3", "-c", "2", "-n", "300", &target.url("/close")]);
    assert_eq!(result.requests.total, 300);
    assert_eq!(result.requests.ok, target.served(), "what the server answered");
    let other: u64 = result.errors.iter().filter(|(kind, _)| **kind != ErrorKind::Goaway).map(|(_, n)| *n).sum();
    assert_eq!(other, 0, "only streams left unprocessed by a GOAWAY fail: {:?}", result.errors);
    assert!(result.connections.closed_by_server >= 2, "{:?}", result.connections);
    assert!(result.connections.opened > result.connections.closed_by_server / 2, "{:?}", result.connections);
}

#[test]
fn a_one_gib_body_streams_through_in_flat_memory() {
    const GIB: u64 = 1 << 30;
    let target = Target::start();
    let mut child = shootout()
        .args(["load", "--json", "--http2", "-c", "1", "-n", "1", "--timeout", "60s"])
        .arg(target.url(&format!("/bytes/{GIB}")))
        .stdout(Stdio::piped())
        .spawn()
        .expect("shootout runs");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    // The peak resident memory of the process since it started (VmHWM), read while it runs. (wait4's maxrss
    // would also count the memory of this test process at the moment it spawned the child.)
    let mut peak_kib = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let status_file = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        let hwm = status_file.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().split(' ').next());
        peak_kib = peak_kib.max(hwm.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = reader.join().unwrap().unwrap();
    assert!(status.success(), "{text}");
    let result: shootout_model::LoadResult = serde_json::from_str(&text).unwrap();
    assert_eq!(result.requests.ok, 1);
    assert!(result.bytes_received > GIB, "{} bytes", result.bytes_received);
    eprintln!("1 GiB over HTTP/2: client peak RSS {peak_kib} KiB");
    assert!(peak_kib > 0, "the peak was read");
    assert!(peak_kib < 48 * 1024, "the body is counted and dropped, not kept: peak RSS {peak_kib} KiB");
}

#[test]
fn a_server_without_http2_is_one_clear_line() {
    let http1_only = fault_server(Fault::CloseDelimited(10));
    let output =
        shootout().args(["load", "--http2", "-n", "10"]).arg(format!("http://{http1_only}/")).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("does not speak HTTP/2") && stderr.contains("HTTP/1.x"), "{stderr}");
    assert!(stderr.contains("drop --http2"), "the way out: {stderr}");
}

#[test]
fn streams_need_http2_and_http2_keeps_connections() {
    let streams = shootout().args(["load", "--streams", "4", "-n", "1", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(streams.status.code(), Some(2));
    let output =
        shootout().args(["load", "--http2", "--no-keepalive", "-n", "1", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("drop --no-keepalive"));
}

#[test]
fn an_http2_result_follows_the_schema() {
    let target = Target::start();
    let output = shootout()
        .args(["load", "--json", "--http2", "--streams", "4", "-c", "2", "-n", "500"])
        .arg(target.url("/hello"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", crate::support::describe(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    crate::support::assert_valid(&document);
    assert_eq!(document["options"]["protocol"], "http2");
    assert_eq!(document["options"]["streams"], 4);
}

#[test]
fn a_scenario_mix_with_body_checks_runs_over_streams() {
    let target = Target::start();
    let file = std::env::temp_dir().join(format!("shootout-{}-h2-mix.toml", std::process::id()));
    std::fs::write(
        &file,
        "[[request]]\nname = \"hello\"\nurl = \"/hello\"\nweight = 3\nexpect = { status = 200, body = \"Hello\" }\n\n\
         [[request]]\nname = \"wrong\"\nurl = \"/hello\"\nweight = 1\nexpect = { body = \"Goodbye\" }\n",
    )
    .unwrap();
    let file = file.display().to_string();
    let result = load(&["--http2", "--streams", "8", "--scenario", &file, "-n", "4000", "-c", "2", &target.url("")]);
    let named = |name: &str| result.by_request.iter().find(|r| r.name == name).unwrap();
    let (hello, wrong) = (named("hello"), named("wrong"));
    assert_eq!(hello.requests.total + wrong.requests.total, 4000);
    assert_eq!(hello.requests.checks_failed, 0, "every body read over HTTP/2 holds Hello: {:?}", result.errors);
    assert_eq!(result.requests.checks_failed, wrong.requests.total, "each wrong one is caught");
    assert_eq!(result.status_counts.get("200"), Some(&4000), "a response that fails its check is a response");
    let share = hello.requests.total as f64 / 4000.0;
    assert!((share - 0.75).abs() < 0.03, "hello got {share} of the mix, weight 3 of 4");
    assert_eq!(target.served(), 4000);
}
