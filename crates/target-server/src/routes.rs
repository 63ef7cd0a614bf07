//! [`Route`]: what each path of the reference server answers.

use std::time::Duration;

use bytes::Bytes;

use crate::State;

/// The body of `/hello`, `/delay/MS` and `/close`: the same 12 bytes as the example apps' "Hello World".
pub const HELLO: &[u8] = b"Hello World\n";

/// Largest size `/bytes/N` and `/chunked/N` serve: 64 GiB.
pub const MAX_SIZE: u64 = 64 << 30;

/// Longest delay `/delay/MS` waits: one hour.
pub const MAX_DELAY_MS: u64 = 3_600_000;

/// Most CPU `/spin/US` burns per request: one second.
pub const MAX_SPIN_US: u64 = 1_000_000;

/// Most hops `/redirect/N` makes.
pub const MAX_REDIRECTS: u64 = 100;

/// The cookie `/login` sets and `/account` asks for, as a `Cookie` header carries it.
pub const SESSION_COOKIE: &str = "shootout-session=signed-in";

/// The body of `/account` for a signed-in client.
pub const SIGNED_IN: &[u8] = b"signed in\n";

/// The body of `/account` for anyone else.
pub const NOT_SIGNED_IN: &[u8] = b"sign in first: POST /login\n";

/// A redirect the target answers: its status, where to, and the cookie it sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// 302 or 303.
    pub status: u16,
    /// The `Location`: a path on the target.
    pub location: String,
    /// A `Set-Cookie` value, for `/login`.
    pub cookie: Option<String>,
}

/// One answer of the reference server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `/`: a short list of the endpoints.
    Index,
    /// `/hello`: 200 with [`HELLO`].
    Hello,
    /// `/bytes/N`: 200 with N bytes, Content-Length framed.
    Bytes(u64),
    /// `/chunked/N`: 200 with N bytes in chunked transfer coding.
    Chunked(u64),
    /// `/delay/MS`: [`HELLO`] after waiting MS milliseconds.
    Delay(Duration),
    /// `/spin/US`: [`HELLO`] after burning US microseconds of CPU on the thread serving it (a CPU-bound app).
    Spin(Duration),
    /// `/spin-exp/US`: [`HELLO`] after burning CPU for a time drawn from an exponential distribution of mean US
    /// microseconds (capped at [`MAX_SPIN_US`]): a server whose service times vary as queueing theory's M/M/1
    /// assumes.
    SpinExp(Duration),
    /// `/status/CODE`: that status, answered as [`StatusAnswer::of`] the code says (not 101, which would switch
    /// to a protocol the target does not have).
    Status(u16),
    /// `/close`: [`HELLO`] with `Connection: close`, then the connection is closed.
    Close,
    /// `/stats`: `{"requests":N}`, the requests served so far (not counting `/stats`).
    Stats,
    /// `/redirect/N`: 302 to `/redirect/N-1`, and `/redirect/1` to `/hello` (N hops in all, at most
    /// [`MAX_REDIRECTS`]).
    Redirect(u32),
    /// `/login` (a form's POST, or any method): 303 to `/account`, setting [`SESSION_COOKIE`].
    Login,
    /// `/account`: 200 with [`SIGNED_IN`] when the request carries [`SESSION_COOKIE`], else 401.
    Account,
    /// Anything else: 404.
    NotFound,
}

impl Route {
    /// The route for a request target (the query string is ignored).
    pub fn of(target: &str) -> Route {
        let path = target.split('?').next().unwrap_or("");
        let mut parts = path.trim_start_matches('/').splitn(2, '/');
        let head = parts.next().unwrap_or("");
        let arg = parts.next();
        let number = || arg.and_then(|a| a.parse::<u64>().ok());
        match (head, arg) {
            ("", None) => Route::Index,
            ("hello", None) => Route::Hello,
            ("close", None) => Route::Close,
            ("stats", None) => Route::Stats,
            ("login", None) => Route::Login,
            ("account", None) => Route::Account,
            ("redirect", Some(_)) => number()
                .filter(|n| (1..=MAX_REDIRECTS).contains(n))
                .map_or(Route::NotFound, |n| Route::Redirect(n as u32)),
            ("bytes", Some(_)) => number().filter(|&n| n <= MAX_SIZE).map_or(Route::NotFound, Route::Bytes),
            ("chunked", Some(_)) => number().filter(|&n| n <= MAX_SIZE).map_or(Route::NotFound, Route::Chunked),
            ("delay", Some(_)) => number()
                .filter(|&ms| ms <= MAX_DELAY_MS)
                .map_or(Route::NotFound, |ms| Route::Delay(Duration::from_millis(ms))),
            ("spin", Some(_)) => number()
                .filter(|&us| us <= MAX_SPIN_US)
                .map_or(Route::NotFound, |us| Route::Spin(Duration::from_micros(us))),
            ("spin-exp", Some(_)) => number()
                .filter(|&us| us <= MAX_SPIN_US)
                .map_or(Route::NotFound, |us| Route::SpinExp(Duration::from_micros(us))),
            ("status", Some(_)) => number()
                .filter(|code| (100..=999).contains(code) && *code != 101)
                .map_or(Route::NotFound, |code| Route::Status(code as u16)),
            _ => Route::NotFound,
        }
    }
}

impl Route {
    /// The redirect it answers, if it is one.
    pub fn moved(self) -> Option<Moved> {
        match self {
            Route::Redirect(1) => Some(Moved { status: 302, location: "/hello".into(), cookie: None }),
            Route::Redirect(n) => Some(Moved { status: 302, location: format!("/redirect/{}", n - 1), cookie: None }),
            Route::Login => Some(Moved {
                status: 303,
                location: "/account".into(),
                cookie: Some(format!("{SESSION_COOKIE}; Path=/; HttpOnly")),
            }),
            _ => None,
        }
    }
}

/// True when a `Cookie` header's value carries [`SESSION_COOKIE`].
pub fn signed_in(cookie: &[u8]) -> bool {
    cookie.split(|&b| b == b';').any(|pair| pair.trim_ascii() == SESSION_COOKIE.as_bytes())
}

/// A time drawn from an exponential distribution of mean `mean` (inverse transform of a uniform draw from a
/// per-thread xorshift generator), capped at [`MAX_SPIN_US`].
pub fn exponential(mean: Duration) -> Duration {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new(seed());
    }
    fn seed() -> u64 {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos());
        (nanos as u64 ^ ((std::process::id() as u64) << 32)) | 1
    }
    let bits = STATE.with(|state| {
        let mut x = state.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        state.set(x);
        x
    });
    // A uniform draw in (0, 1]: never 0, whose logarithm is infinite.
    let uniform = ((bits >> 11) + 1) as f64 / (1u64 << 53) as f64;
    mean.mul_f64(-uniform.ln()).min(Duration::from_micros(MAX_SPIN_US))
}

/// Keeps the calling thread computing until it has used `work` of CPU time (its own CPU clock, so that a
/// neighbour taking the core makes the answer later, not cheaper).
pub fn spin(work: Duration) {
    use nix::time::{clock_gettime, ClockId};
    let now = || clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map(Duration::from).unwrap_or_default();
    let until = now() + work;
    let mut x = 0u64;
    while now() < until {
        for i in 0..256u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
    }
}

/// What a route answers, whatever the protocol carries it: HTTP/2 and HTTP/3 write it as they frame it.
#[derive(Debug)]
pub struct Answer {
    /// An interim status sent before the final answer (a 1xx route).
    pub interim: Option<u16>,
    /// The final status.
    pub status: u16,
    /// Its header fields, Content-Length included where the body has a length to give.
    pub headers: Vec<(&'static str, String)>,
    /// Its body.
    pub body: Body,
}

/// A body to send.
#[derive(Debug)]
pub enum Body {
    /// These bytes (none for an empty answer).
    Fixed(Bytes),
    /// This many bytes of the server's repeating pattern, sent as the client takes them.
    Pattern(u64),
}

/// The answer of `route` to a client `signed_in` or not (over HTTP/2 and HTTP/3; HTTP/1.1 writes its own bytes).
pub fn answer(route: Route, signed_in: bool, state: &State) -> Answer {
    let fixed = |status: u16, content_type: &str, body: Bytes| Answer {
        interim: None,
        status,
        headers: vec![("content-type", content_type.to_string()), ("content-length", body.len().to_string())],
        body: Body::Fixed(body),
    };
    match route {
        Route::Hello | Route::Close | Route::Delay(_) => fixed(200, "text/plain", Bytes::from_static(HELLO)),
        Route::Spin(work) => {
            spin(work);
            fixed(200, "text/plain", Bytes::from_static(HELLO))
        }
        Route::SpinExp(mean) => {
            spin(exponential(mean));
            fixed(200, "text/plain", Bytes::from_static(HELLO))
        }
        Route::Index => fixed(200, "text/plain", Bytes::from_static(INDEX.as_bytes())),
        Route::Stats => fixed(200, "application/json", format!("{{\"requests\":{}}}", state.requests()).into()),
        Route::Status(code) => match StatusAnswer::of(code) {
            StatusAnswer::Interim => {
                Answer { interim: Some(code), ..fixed(200, "text/plain", Bytes::from_static(HELLO)) }
            }
            StatusAnswer::Empty => {
                Answer { interim: None, status: code, headers: Vec::new(), body: Body::Fixed(Bytes::new()) }
            }
            StatusAnswer::Body => fixed(code, "text/plain", format!("{code} {}\n", reason(code)).into()),
        },
        Route::NotFound => {
            fixed(404, "text/plain", Bytes::from_static(b"not found: try GET / for the list of paths\n"))
        }
        Route::Account if signed_in => fixed(200, "text/plain", Bytes::from_static(SIGNED_IN)),
        Route::Account => fixed(401, "text/plain", Bytes::from_static(NOT_SIGNED_IN)),
        Route::Redirect(_) | Route::Login => {
            let moved = route.moved().expect("a redirect");
            let mut headers = vec![("location", moved.location)];
            if let Some(cookie) = moved.cookie {
                headers.push(("set-cookie", cookie));
            }
            headers.push(("content-length", "0".into()));
            Answer { interim: None, status: moved.status, headers, body: Body::Fixed(Bytes::new()) }
        }
        Route::Bytes(size) | Route::Chunked(size) => Answer {
            interim: None,
            status: 200,
            headers: vec![("content-type", "application/octet-stream".into()), ("content-length", size.to_string())],
            body: Body::Pattern(size),
        },
    }
}

/// How `/status/CODE` is answered, by what the code allows after its head (RFC 9110 §8.6, §15.2, §15.3.5, §15.4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusAnswer {
    /// 1xx: an interim head alone (nothing but its status line), then a final 200 with [`HELLO`], as a server
    /// sending 103 Early Hints does. An HTTP/1.0 client, which knows no interim answers, gets the 200 alone.
    Interim,
    /// 204 and 304: a head with neither body nor `Content-Length`.
    Empty,
    /// Every other code: its status with a short body, `CODE REASON\n`.
    Body,
}

impl StatusAnswer {
    /// How `code` is answered.
    pub fn of(code: u16) -> StatusAnswer {
        match code {
            100..=199 => StatusAnswer::Interim,
            204 | 304 => StatusAnswer::Empty,
            _ => StatusAnswer::Body,
        }
    }
}

/// The reason phrase for a status code (a generic one for codes without a well-known phrase).
pub fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// The text of `/`.
pub const INDEX: &str = "shootout target: a reference HTTP/1.1 and HTTP/2 server\n\
GET /hello          200, \"Hello World\\n\" (12 bytes)\n\
GET /bytes/N        200, N bytes (Content-Length)\n\
GET /chunked/N      200, N bytes (chunked)\n\
GET /delay/MS       200, \"Hello World\\n\" after MS milliseconds\n\
GET /spin/US        200, \"Hello World\\n\" after US microseconds of the server's CPU\n\
GET /spin-exp/US    the same after an exponentially distributed time of mean US microseconds\n\
GET /status/CODE    that status (1xx: then 200; 204, 304: no body)\n\
GET /close          200, then the server closes the connection\n\
GET /stats          {\"requests\":N}: requests served so far, /stats excluded\n\
GET /redirect/N     302 to /redirect/N-1, and /redirect/1 to /hello\n\
POST /login         303 to /account, setting the cookie shootout-session=signed-in\n\
GET /account        200 with that cookie, else 401\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_routes() {
        assert_eq!(Route::of("/"), Route::Index);
        assert_eq!(Route::of("/hello?x=1"), Route::Hello);
        assert_eq!(Route::of("/bytes/1024"), Route::Bytes(1024));
        assert_eq!(Route::of("/chunked/7"), Route::Chunked(7));
        assert_eq!(Route::of("/delay/250"), Route::Delay(Duration::from_millis(250)));
        assert_eq!(Route::of("/spin/500"), Route::Spin(Duration::from_micros(500)));
        assert_eq!(Route::of("/spin-exp/500"), Route::SpinExp(Duration::from_micros(500)));
        assert_eq!(Route::of("/spin/2000000"), Route::NotFound);
        assert_eq!(Route::of("/status/503"), Route::Status(503));
        assert_eq!(Route::of("/redirect/3").moved().unwrap().location, "/redirect/2");
        assert_eq!(Route::of("/redirect/1").moved().unwrap().location, "/hello");
        assert_eq!(Route::of("/redirect/0"), Route::NotFound);
        assert_eq!(Route::of("/login").moved().unwrap().status, 303);
        assert!(signed_in(b"a=1; shootout-session=signed-in") && !signed_in(b"shootout-session=no"));
        assert_eq!(Route::of("/status/42"), Route::NotFound);
        assert_eq!(Route::of("/status/101"), Route::NotFound);
        assert_eq!(Route::of("/bytes/lots"), Route::NotFound);
        assert_eq!(Route::of("/nope"), Route::NotFound);
    }

    #[test]
    fn statuses_without_a_body_are_answered_without_one() {
        assert_eq!(StatusAnswer::of(100), StatusAnswer::Interim);
        assert_eq!(StatusAnswer::of(103), StatusAnswer::Interim);
        assert_eq!(StatusAnswer::of(204), StatusAnswer::Empty);
        assert_eq!(StatusAnswer::of(304), StatusAnswer::Empty);
        for code in [200, 201, 205, 301, 404, 503] {
            assert_eq!(StatusAnswer::of(code), StatusAnswer::Body, "{code}");
        }
    }

    #[test]
    fn exponential_times_have_the_mean_and_the_spread_of_the_distribution() {
        let mean = Duration::from_micros(2000);
        let draws: Vec<f64> = (0..20_000).map(|_| exponential(mean).as_secs_f64() * 1e6).collect();
        let average = draws.iter().sum::<f64>() / draws.len() as f64;
        // An exponential's standard deviation equals its mean; so is its median ln 2 times the mean.
        let deviation = (draws.iter().map(|d| (d - average).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        let mut sorted = draws.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        assert!((average - 2000.0).abs() < 100.0, "mean {average}");
        assert!((deviation - 2000.0).abs() < 150.0, "deviation {deviation}");
        assert!((median - 2000.0 * std::f64::consts::LN_2).abs() < 100.0, "median {median}");
    }
}
