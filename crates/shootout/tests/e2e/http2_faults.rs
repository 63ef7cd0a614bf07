//! HTTP/2 servers that misbehave, through the binary (issue 12): resets counted per error code as the server sent
//! them, GOAWAY'd connections drained, counted and opened again, a limit on concurrent streams lowered
//! mid-connection and kept from the moment it is acknowledged, and a TLS server that will not choose h2 refused
//! in one line before the run. Counts are compared with what the server itself saw and did.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConnection;
use shootout_model::{ErrorKind, LoadResult};

use crate::h2_server::{Behaviour, H2Server, Seen, Serving, INTERNAL_ERROR, REFUSED_STREAM};
use crate::support::{describe, load, self_signed_tls, shootout};

fn errors(result: &LoadResult, kind: ErrorKind) -> u64 {
    result.errors.get(&kind).copied().unwrap_or(0)
}

/// Runs `shootout load ARGS -o FILE URL` against a server that resets every 5th stream of a connection with
/// INTERNAL_ERROR, every 7th (not 5th) with REFUSED_STREAM, and every 11th (neither) with 0x1f, a code RFC 9113
/// does not name; checks the result's counts against the resets the server sent, and returns the result and the
/// summary printed.
fn resets_counted_as_sent(args: &[&str]) -> (LoadResult, String) {
    let rules = vec![(5, INTERNAL_ERROR), (7, REFUSED_STREAM), (11, 0x1f)];
    let server = H2Server::start(Behaviour::Reset(rules), 4);
    let file = tempfile::NamedTempFile::new().unwrap();
    let output = shootout().arg("load").args(args).arg("-o").arg(file.path()).arg(server.url()).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let seen = server.settle();
    let document: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
    crate::support::assert_valid(&document);
    let result: LoadResult = serde_json::from_value(document).unwrap();

    let sent = seen.resets();
    let sent_with = |code| sent.get(&code).copied().unwrap_or(0);
    assert!(sent.values().all(|&n| n > 0) && sent.len() == 3, "the server used every code: {sent:?}");
    assert_eq!(errors(&result, ErrorKind::StreamReset), sent_with(INTERNAL_ERROR) + sent_with(0x1f));
    assert_eq!(errors(&result, ErrorKind::StreamRefused), sent_with(REFUSED_STREAM));
    let by_name: BTreeMap<String, u64> = [
        ("INTERNAL_ERROR".to_string(), sent_with(INTERNAL_ERROR)),
        ("REFUSED_STREAM".to_string(), sent_with(REFUSED_STREAM)),
        ("0x1f".to_string(), sent_with(0x1f)),
    ]
    .into();
    assert_eq!(result.stream_resets, by_name);
    assert_eq!(result.errors.len(), 2, "no other failure: {:?}", result.errors);
    assert_eq!(result.requests.ok, Seen::get(&seen.answered));
    assert_eq!((result.requests.total, Seen::get(&seen.streams)), (600, 600), "every request reached the server");
    assert_eq!(result.requests.ok + result.requests.failed, Seen::get(&seen.streams));
    assert_eq!(Seen::get(&seen.cancelled), 0, "shootout gave up on no stream");
    (result, String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn resets_are_counted_per_error_code_as_the_server_sent_them() {
    let (result, summary) = resets_counted_as_sent(&["--http2", "--streams", "4", "-c", "2", "-t", "2", "-n", "600"]);
    let errors = summary.lines().position(|l| l.starts_with("Errors:")).unwrap_or_else(|| panic!("{summary}"));
    let line = summary.lines().nth(errors + 1).unwrap();
    let [internal, refused, unnamed] = ["INTERNAL_ERROR", "REFUSED_STREAM", "0x1f"].map(|c| result.stream_resets[c]);
    let expected = format!("0x1f: {unnamed}, INTERNAL_ERROR: {internal}, REFUSED_STREAM: {refused}");
    assert_eq!(line.split_once(':').map(|(label, codes)| (label, codes.trim())), Some(("Stream resets", &*expected)));
}

#[test]
fn resets_from_several_agents_add_up_exactly() {
    let (result, _) =
        resets_counted_as_sent(&["--http2", "--streams", "4", "--agents", "local:2", "-c", "2", "-n", "600"]);
    assert_eq!(result.agents.len(), 2);
    let shares: Vec<u64> = result.agents.iter().map(|a| a.measured.as_ref().unwrap().requests.total).collect();
    assert_eq!(shares, [300, 300], "each agent sent its share; the merged counts are the server's");
}

#[test]
fn goaway_connections_finish_what_the_server_kept_and_are_opened_again() {
    // After the 7th stream of each connection the server says GOAWAY with that stream as the last it answers;
    // streams shootout had already opened above it are never answered.
    let server = H2Server::start(Behaviour::GoawayAfter(7), 4);
    let result = load(&["--http2", "--streams", "4", "-c", "2", "-t", "2", "-n", "300", &server.url()]);
    let seen = server.settle();
    assert_eq!((result.requests.total, Seen::get(&seen.streams)), (300, 300), "the run finished its count");
    assert_eq!(result.requests.ok, Seen::get(&seen.answered));
    assert_eq!(errors(&result, ErrorKind::Goaway), Seen::get(&seen.ignored), "exactly the streams it dropped");
    assert_eq!(result.requests.failed, Seen::get(&seen.ignored), "no other failure: {:?}", result.errors);
    assert!(Seen::get(&seen.ignored) > 0, "streams above the last one were sent, and dropped");
    assert!(result.stream_resets.is_empty());
    assert_eq!(result.connections.closed_by_server, Seen::get(&seen.goaways), "each GOAWAY'd connection drained");
    // A connection carries its 7 streams and at most 3 more that were dropped; the last one of each of the two may
    // end with the run, before its 7th.
    assert!(Seen::get(&seen.goaways) >= 300 / (7 + 3) - 2, "{} GOAWAYs", Seen::get(&seen.goaways));
    assert_eq!(Seen::get(&seen.connections), result.connections.opened + 1, "the check before the run is one more");
    assert_eq!(Seen::get(&seen.cancelled), 0);
}

#[test]
fn a_goaway_connection_whose_kept_streams_time_out_is_replaced() {
    // After the 4th stream of each connection the server says GOAWAY with that stream as the last it answers, and
    // then answers nothing more. Once shootout has given up on the streams it kept (at --timeout), the connection
    // is done, and the requests that follow go on a new one instead of waiting on it until they time out too.
    let server = H2Server::start(Behaviour::GoawayAndHold(4), 2);
    let args = ["--http2", "--streams", "2", "-c", "1", "-t", "1", "-n", "20", "--timeout", "200ms"];
    let result = load(&[&args[..], &[&server.url()]].concat());
    let seen = server.settle();
    assert_eq!((result.requests.total, Seen::get(&seen.streams)), (20, 20), "every request reached the server");
    assert_eq!(result.requests.ok, Seen::get(&seen.answered));
    let (held, dropped) = (Seen::get(&seen.held), Seen::get(&seen.ignored));
    assert_eq!(errors(&result, ErrorKind::ReadTimeout), held, "exactly the streams the server held");
    assert_eq!(errors(&result, ErrorKind::Goaway), dropped);
    assert_eq!(result.requests.failed, held + dropped, "no other failure: {:?}", result.errors);
    assert_eq!(result.connections.closed_by_server, Seen::get(&seen.goaways), "each GOAWAY'd connection is done");
    assert!(Seen::get(&seen.goaways) >= 20 / (4 + 1) - 1, "{} GOAWAYs", Seen::get(&seen.goaways));
}

#[test]
fn a_lowered_stream_limit_is_kept_once_acknowledged() {
    // 10 streams at once, then 2 after the 30th stream. Answers wait until as many streams as allowed are open
    // (or the client is quiet), so shootout always has all it may open.
    let server = H2Server::start(Behaviour::LowerStreams { from: 10, after: 30, to: 2 }, 10);
    let output = shootout()
        .args(["load", "--json", "--http2", "--streams", "10", "-c", "1", "-t", "1", "-n", "200"])
        .arg(server.url())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let seen = server.settle();
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(document.get("stream_resets").is_none(), "left out when nothing was reset");
    let result: LoadResult = serde_json::from_value(document).unwrap();
    assert_eq!((result.requests.ok, result.requests.failed), (200, 0), "{:?}", result.errors);
    assert_eq!((Seen::get(&seen.streams), Seen::get(&seen.answered)), (200, 200));
    assert_eq!(Seen::get(&seen.lowered_acks), 1, "shootout acknowledged the lowered limit");
    assert_eq!(Seen::get(&seen.peak_before), 10, "all 10 streams were open at once before");
    assert_eq!(Seen::get(&seen.peak_after), 2, "never more than 2 after the acknowledgement, and 2 were used");
    assert_eq!(result.connections.opened, 1);
}

#[test]
fn a_tls_server_that_will_not_choose_h2_is_one_clear_line() {
    let mut config = self_signed_tls("127.0.0.1");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let config = Arc::new(config);
    let handshakes = Arc::new(AtomicU64::new(0));
    let counted = handshakes.clone();
    let server = Serving::start(move |mut tcp, _| {
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
        let mut tls = ServerConnection::new(config.clone()).unwrap();
        while tls.is_handshaking() {
            if tls.complete_io(&mut tcp).is_err() {
                return;
            }
        }
        counted.fetch_add(1, Ordering::SeqCst);
        let _ = tcp.read(&mut [0u8; 1024]); // until the client leaves (or 5 s)
    });
    let url = format!("https://{}/", server.address);
    let output = shootout().args(["load", "--http2", "-k", "-n", "10", &url]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "shootout: --http2: the server at {} does not speak HTTP/2: it chose http/1.1 through ALPN, not h2; \
             enable HTTP/2 on the server, or drop --http2",
            server.address
        )
    );
    drop(server); // waits for its threads: the handshake is counted once the client's last flight is read
    assert_eq!(handshakes.load(Ordering::SeqCst), 1, "one handshake completed, the check's: no request was sent");
}
