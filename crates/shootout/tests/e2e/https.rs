//! HTTPS through rustls: certificates verified by default, `--insecure` and `--cacert`, handshakes timed apart
//! from latency, connections kept alive.

use crate::support::{describe, load, shootout, Target};

#[test]
fn keepalive_over_tls_with_handshakes_timed_apart() {
    let target = Target::start_with(&["--tls"]);
    let result = load(&["-k", "-n", "500", "-c", "4", "-t", "2", &target.url("/hello")]);
    assert_eq!(result.requests.ok, 500, "{:?}", result.errors);
    assert_eq!(result.connections.opened, 4, "connections are reused");
    let handshakes = result.tls_handshake.expect("https results time the handshakes");
    assert_eq!(handshakes.count, 4);
    assert!(handshakes.mean_us > 0.0);
    assert_eq!(target.served(), 500);

    let output =
        shootout().args(["load", "--json", "-k", "-n", "20", "-c", "2", &target.url("/hello")]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    crate::support::assert_valid(&serde_json::from_slice(&output.stdout).unwrap());
}

#[test]
fn bodies_spanning_many_records() {
    let target = Target::start_with(&["--tls"]);
    let sized = load(&["-k", "-n", "20", "-c", "2", &target.url("/bytes/1000000")]);
    assert_eq!(sized.requests.ok, 20, "{:?}", sized.errors);
    assert!(sized.bytes_received >= 20_000_000);
    let chunked = load(&["-k", "-n", "20", "-c", "2", &target.url("/chunked/300000")]);
    assert_eq!(chunked.requests.ok, 20, "{:?}", chunked.errors);
}

#[test]
fn an_unknown_certificate_is_refused_with_the_way_out() {
    let target = Target::start_with(&["--tls"]);
    let output = shootout().args(["load", "-n", "10", &target.url("/hello")]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("TLS handshake with") && stderr.contains("--insecure"), "{stderr}");
    assert_eq!(target.served(), 0);
}

#[test]
fn a_private_ca_is_trusted_with_cacert() {
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let dir = std::env::temp_dir();
    let (cert, key) = (
        dir.join(format!("shootout-{}-cert.pem", std::process::id())),
        dir.join(format!("shootout-{}-key.pem", std::process::id())),
    );
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let target = Target::start_with(&["--tls", "--cert", &cert, "--key", &key]);
    let result = load(&["--cacert", &cert, "-n", "50", "-c", "2", &target.url("/hello")]);
    assert_eq!(result.requests.ok, 50, "{:?}", result.errors);
    assert_eq!(result.options.cacert.as_deref(), Some(cert.as_str()));
}
