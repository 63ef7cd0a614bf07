//! A purpose-built server for session tests: `POST /login` sets a session cookie and returns a token in JSON;
//! `GET /account` answers 200 only with that cookie and `Authorization: Bearer <the token of that session>`;
//! `GET /logout` needs the cookie. It counts the requests it answered with 200, per path.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Counts of successful answers, per path.
#[derive(Default)]
pub struct Counts {
    pub login: AtomicU64,
    pub account: AtomicU64,
    pub logout: AtomicU64,
    pub refused: AtomicU64,
}

/// Starts the server; it lives until the test process ends.
pub fn start() -> (SocketAddr, Arc<Counts>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let counts = Arc::new(Counts::default());
    let sessions: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let served = counts.clone();
    std::thread::spawn(move || {
        let next = Arc::new(AtomicU64::new(0));
        for stream in listener.incoming().flatten() {
            let (counts, sessions, next) = (served.clone(), sessions.clone(), next.clone());
            std::thread::spawn(move || serve(stream, &counts, &sessions, &next));
        }
    });
    (address, counts)
}

fn serve(mut stream: TcpStream, counts: &Counts, sessions: &Mutex<HashMap<String, String>>, next: &AtomicU64) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let (head_len, path, cookie, bearer, body_len) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut request = httparse::Request::new(&mut headers);
            if let Ok(httparse::Status::Complete(n)) = request.parse(&buffer) {
                let value = |name: &str| {
                    request
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).into_owned())
                };
                let cookie = value("cookie").and_then(|c| c.strip_prefix("sid=").map(str::to_string));
                let bearer = value("authorization").and_then(|a| a.strip_prefix("Bearer ").map(str::to_string));
                let length = value("content-length").and_then(|l| l.parse().ok()).unwrap_or(0usize);
                break (n, request.path.unwrap_or("").to_string(), cookie, bearer, length);
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        };
        while buffer.len() < head_len + body_len {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        buffer.drain(..head_len + body_len);
        let known = |sid: &Option<String>| sid.as_ref().and_then(|s| sessions.lock().unwrap().get(s).cloned());
        let (status, extra, body) = match path.as_str() {
            "/login" => {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let (sid, token) = (format!("s{n}"), format!("t{n}"));
                sessions.lock().unwrap().insert(sid.clone(), token.clone());
                counts.login.fetch_add(1, Ordering::Relaxed);
                (200, format!("Set-Cookie: sid={sid}; Path=/; HttpOnly\r\n"), format!("{{\"token\":\"{token}\"}}"))
            }
            "/account" if known(&cookie).is_some() && known(&cookie) == bearer => {
                counts.account.fetch_add(1, Ordering::Relaxed);
                (200, String::new(), "account of alice".to_string())
            }
            "/logout" if known(&cookie).is_some() => {
                counts.logout.fetch_add(1, Ordering::Relaxed);
                (200, String::new(), "bye".to_string())
            }
            _ => {
                counts.refused.fetch_add(1, Ordering::Relaxed);
                (401, String::new(), "who are you?".to_string())
            }
        };
        let response = format!("HTTP/1.1 {status} X\r\n{extra}Content-Length: {}\r\n\r\n{body}", body.len());
        if stream.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}
