//! The built-in target at the edges of HTTP, through the real `shootout target`: HTTP/1.0 clients with and without
//! keep-alive (issue 37: `ab -k` hung), and statuses that carry no body (issue 39: `/status/204` sent one).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{load, Target};

/// A connection to `target` whose reads give up after five seconds instead of hanging the test.
fn connect(target: &Target) -> TcpStream {
    let stream = TcpStream::connect(target.address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
}

/// Reads one response framed by its Content-Length: its head (lowercased) and its body.
fn read_response(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("the head of an answer within 5 s");
        assert_eq!(n, 1, "the connection closed in the middle of a head: {:?}", String::from_utf8_lossy(&bytes));
        bytes.push(byte[0]);
    }
    let head = String::from_utf8(bytes).unwrap().to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |value| value.trim().parse::<usize>().unwrap());
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    (head, body)
}

/// True when the server closes `stream` (reads end) within five seconds, with nothing more sent.
fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).is_ok() && rest.is_empty()
}

#[test]
fn an_http10_client_asking_for_keepalive_keeps_its_connection() {
    let target = Target::start();
    let mut stream = connect(&target);
    for _ in 0..3 {
        stream.write_all(b"GET /hello HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").unwrap();
        let (head, body) = read_response(&mut stream);
        assert!(head.contains("\r\nconnection: keep-alive\r\n"), "the answer confirms keep-alive: {head}");
        assert_eq!(body, b"Hello World\n");
    }
    // The same connection, now without asking: answered, then closed.
    stream.write_all(b"GET /hello HTTP/1.0\r\n\r\n").unwrap();
    let (head, body) = read_response(&mut stream);
    assert!(!head.contains("keep-alive"), "{head}");
    assert_eq!(body, b"Hello World\n");
    assert!(closed_by_server(&mut stream), "an HTTP/1.0 request without keep-alive ends its connection");
    assert_eq!(target.served(), 4);
}

#[test]
fn an_http10_connection_that_did_not_ask_for_keepalive_is_closed_after_the_answer() {
    let target = Target::start();
    let mut stream = connect(&target);
    stream.write_all(b"GET /hello HTTP/1.0\r\nHost: test\r\n\r\n").unwrap();
    let started = Instant::now();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("the server closes the connection, the end of an HTTP/1.0 answer");
    assert!(started.elapsed() < Duration::from_secs(2), "closed at once, not after a timeout");
    let text = String::from_utf8(response).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\nHello World\n"), "{text}");
}

#[test]
fn an_http10_client_gets_a_chunked_path_by_content_length() {
    // HTTP/1.0 has no chunked coding: the same bytes, framed by their length.
    let target = Target::start();
    let mut stream = connect(&target);
    stream.write_all(b"GET /chunked/5000 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
    let (head, body) = read_response(&mut stream);
    assert!(head.contains("\r\ncontent-length: 5000\r\n") && !head.contains("transfer-encoding"), "{head}");
    let pattern: Vec<u8> = (0..5000).map(|i| b'a' + (i % 26) as u8).collect();
    assert!(body == pattern, "the body is the pattern, abc…z repeated");
    let wire = exchange(&target, "GET /chunked/5 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert!(
        wire.contains("\r\nTransfer-Encoding: chunked\r\n") && wire.ends_with("\r\n\r\n5\r\nabcde\r\n0\r\n\r\n"),
        "{wire}"
    );
}

/// Runs ApacheBench with `args` against `/hello` of `target` (20 s at most): its report, or None when ab is not
/// installed.
fn ab(target: &Target, args: &[&str]) -> Option<String> {
    if Command::new("ab").arg("-V").stdout(Stdio::null()).status().is_err() {
        assert!(std::env::var_os("CI").is_none(), "under CI the ab check must run: apt-get install apache2-utils");
        eprintln!("skipping the ab check: ab is not installed (apt-get install apache2-utils)");
        return None;
    }
    let mut child = Command::new("ab")
        .args(args)
        .arg(target.url("/hello"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ab {args:?} did not finish within 20 s against the target");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "ab {args:?}: {report}{}", String::from_utf8_lossy(&output.stderr));
    Some(report)
}

/// The number ab reports after `label` (e.g. `Complete requests:`).
fn ab_figure(report: &str, label: &str) -> u64 {
    let line = report.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label:?} in {report}"));
    line[label.len()..].trim().parse().unwrap()
}

#[test]
fn ab_with_and_without_keepalive_finishes_against_the_target() {
    let target = Target::start();
    let Some(kept) = ab(&target, &["-k", "-n", "100", "-c", "2"]) else { return };
    assert_eq!(ab_figure(&kept, "Complete requests:"), 100, "{kept}");
    assert_eq!(ab_figure(&kept, "Failed requests:"), 0, "{kept}");
    assert_eq!(ab_figure(&kept, "Keep-Alive requests:"), 100, "{kept}");
    let Some(closed) = ab(&target, &["-n", "100", "-c", "2"]) else { return };
    assert_eq!(ab_figure(&closed, "Complete requests:"), 100, "{closed}");
    assert_eq!(ab_figure(&closed, "Failed requests:"), 0, "{closed}");
    assert_eq!(target.served(), 200);
}

/// Sends `requests` on one connection and reads everything the target sends until it closes it.
fn exchange(target: &Target, requests: &str) -> String {
    let mut stream = connect(target);
    stream.write_all(requests.as_bytes()).unwrap();
    let mut wire = Vec::new();
    stream.read_to_end(&mut wire).expect("the target closes the connection after the last answer");
    String::from_utf8(wire).unwrap()
}

/// The target's answer to `GET /hello` with `Connection: close`, byte for byte.
const HELLO_AND_CLOSE: &str =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: close\r\n\r\nHello World\n";

#[test]
fn no_content_and_not_modified_go_without_a_body_on_the_wire() {
    let target = Target::start();
    for (code, reason) in [(204, "No Content"), (304, "Not Modified")] {
        // A /hello right behind it on the same connection: any body would sit between the two heads.
        let wire = exchange(
            &target,
            &format!("GET /status/{code} HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"),
        );
        assert_eq!(wire, format!("HTTP/1.1 {code} {reason}\r\n\r\n{HELLO_AND_CLOSE}"));
    }
}

#[test]
fn an_interim_status_is_followed_by_the_final_answer() {
    let target = Target::start();
    let wire = exchange(&target, "GET /status/103 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert_eq!(wire, format!("HTTP/1.1 103 Early Hints\r\n\r\n{HELLO_AND_CLOSE}"));
    // HTTP/1.0 has no interim answers: the final one alone.
    let wire = exchange(&target, "GET /status/100 HTTP/1.0\r\n\r\n");
    assert_eq!(wire, HELLO_AND_CLOSE);
}

#[test]
fn statuses_without_a_body_load_as_complete_transactions() {
    let target = Target::start();
    for protocol in [&[][..], &["--http2"][..]] {
        for (path, status) in
            [("/status/204", "204"), ("/status/304", "304"), ("/status/100", "200"), ("/status/103", "200")]
        {
            let url = target.url(path);
            let result = load(&[protocol, &["-n", "50", "-c", "2", &url][..]].concat());
            let what = format!("{protocol:?} {path}: {:?} {:?}", result.status_counts, result.errors);
            assert_eq!(result.requests.total, 50, "{what}");
            assert_eq!(result.requests.failed, 0, "{what}");
            assert!(result.errors.is_empty(), "no malformed answers: {what}");
            assert_eq!(result.status_counts.get(status), Some(&50), "{what}");
        }
    }
    assert_eq!(target.served(), 2 * 4 * 50);
}
