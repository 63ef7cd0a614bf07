//! HTTP/3 servers that misbehave, through the binary, from a purpose-built server ([`crate::h3_server`]): a
//! server that ends its control stream has the connection closed by the client at once and its requests
//! counted as malformed, not left to time out; a server that answers before it reads a request's body, and
//! stops it, gets that side reset so its streams are freed and every request goes through.

use std::time::{Duration, Instant};

use shootout_model::ErrorKind;

use crate::h3_server::{Behaviour, H3Server, Seen, MAX_STREAMS};
use crate::support::load;

#[test]
fn a_server_that_ends_its_control_stream_fails_its_requests_at_once_as_malformed() {
    let server = H3Server::start(Behaviour::ClosesControlStream);
    let started = Instant::now();
    let result =
        load(&["--http3", "-k", "-c", "2", "--streams", "2", "-n", "20", "--timeout", "20s", &server.url("/")]);
    assert!(started.elapsed() < Duration::from_secs(15), "not left to the timeout: {:?}", started.elapsed());
    assert_eq!(result.requests.total, 20);
    assert_eq!(result.errors.get(&ErrorKind::Malformed).copied(), Some(20), "{:?}", result.errors);
    assert!(Seen::get(&server.seen.connections) >= 2, "each broken connection was opened again");
}

#[test]
fn a_request_stopped_before_its_body_is_sent_is_reset_and_its_stream_freed() {
    let server = H3Server::start(Behaviour::AnswersBeforeTheBody);
    let body = std::env::temp_dir().join(format!("shootout-h3-body-{}", std::process::id()));
    std::fs::write(&body, vec![b'x'; 256 * 1024]).unwrap();
    let requests = 10 * u64::from(MAX_STREAMS);
    let result = load(&[
        "--http3",
        "-k",
        "-c",
        "1",
        "--streams",
        "2",
        "-n",
        &requests.to_string(),
        "--timeout",
        "3s",
        "--body-file",
        body.to_str().unwrap(),
        &server.url("/upload"),
    ]);
    std::fs::remove_file(&body).unwrap();
    assert_eq!(result.requests.failed, 0, "no stream waited for credit that never came: {:?}", result.errors);
    assert_eq!(result.status_counts.get("404").copied(), Some(requests));
    assert_eq!(Seen::get(&server.seen.answered), requests, "the server answered every request");
    assert_eq!(result.connections.opened, 1, "one connection carried them all");
}
