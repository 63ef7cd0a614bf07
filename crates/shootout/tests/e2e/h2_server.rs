//! A purpose-built misbehaving HTTP/2 server (h2c with prior knowledge): raw frames over a std listener on
//! 127.0.0.1:0, one thread per connection, no HPACK decoding (a request is one header block, whatever it says;
//! the answer is `:status 200` from the static table and a 2-byte body). What it does wrong is chosen per test
//! ([`Behaviour`]), and it counts what it did ([`Seen`]) so that a test compares shootout's result with the
//! server's side of the story.
//!
//! Answers are held and sent in batches: once the bytes of a read are taken, when `batch` streams (or as many as
//! the server allows at once, if fewer) wait for an answer, or when the client has been quiet for [`QUIET`]. So
//! the client keeps many streams open at once, and the server sees how many.
//!
//! Every thread ends when the server is dropped, or after [`LIFETIME`] at the latest.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the client may be quiet before the streams that wait are answered.
const QUIET: Duration = Duration::from_millis(5);
/// No thread of the server lives longer than this.
const LIFETIME: Duration = Duration::from_secs(60);

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const MAX_CONCURRENT_STREAMS: u16 = 0x3;
/// The RST_STREAM error code of a stream the server did not process.
pub const REFUSED_STREAM: u32 = 0x7;
/// The RST_STREAM error code of a server that failed.
pub const INTERNAL_ERROR: u32 = 0x2;

/// What the server does wrong.
#[derive(Debug, Clone)]
pub enum Behaviour {
    /// Resets the n-th stream of each connection (n from 1) with the code of the first `(every, code)` whose
    /// `every` divides n; answers the others.
    Reset(Vec<(u64, u32)>),
    /// Once the `n`-th stream of a connection arrived: GOAWAY (NO_ERROR) naming it as the last stream the server
    /// will answer; it answers those and ignores every stream above.
    GoawayAfter(u64),
    /// As [`Behaviour::GoawayAfter`], but then answers nothing more: the streams it kept wait until the client
    /// gives up on them.
    GoawayAndHold(u64),
    /// Allows `from` streams at once, then, once `after` streams arrived on a connection, lowers that to `to`
    /// with a new SETTINGS.
    LowerStreams {
        /// The first limit.
        from: u32,
        /// Streams on a connection before the limit is lowered.
        after: u64,
        /// The lowered limit.
        to: u32,
    },
}

/// What the server did, over all its connections. Read it after [`H2Server::settle`].
#[derive(Debug, Default)]
pub struct Seen {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Streams opened by the client (request header blocks).
    pub streams: AtomicU64,
    /// Streams answered with 200.
    pub answered: AtomicU64,
    /// Streams reset, per error code.
    pub resets: Mutex<BTreeMap<u32, u64>>,
    /// GOAWAYs sent.
    pub goaways: AtomicU64,
    /// Streams above a GOAWAY's last stream, never answered.
    pub ignored: AtomicU64,
    /// Streams kept (at or below a GOAWAY's last stream) and never answered ([`Behaviour::GoawayAndHold`]).
    pub held: AtomicU64,
    /// Streams the client reset itself (it gave up on them).
    pub cancelled: AtomicU64,
    /// The most streams waiting for an answer at once, while the first limit held.
    pub peak_before: AtomicU64,
    /// Lowered limits the client acknowledged.
    pub lowered_acks: AtomicU64,
    /// The most streams waiting at once when a stream arrived after the client acknowledged the lowered limit.
    pub peak_after: AtomicU64,
    /// What the client did that the server did not expect.
    pub surprises: Mutex<Vec<String>>,
}

impl Seen {
    /// The resets sent, per error code.
    pub fn resets(&self) -> BTreeMap<u32, u64> {
        self.resets.lock().unwrap().clone()
    }

    /// A counter's value.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::SeqCst)
    }
}

/// The server; its threads stop when it is dropped.
pub struct H2Server {
    serving: Serving,
    seen: Arc<Seen>,
}

impl H2Server {
    /// Starts a server that behaves as `behaviour`, answering in batches of `batch` streams.
    pub fn start(behaviour: Behaviour, batch: usize) -> H2Server {
        let seen = Arc::new(Seen::default());
        let shared = seen.clone();
        let serving = Serving::start(move |stream, stop| {
            shared.connections.fetch_add(1, Ordering::SeqCst);
            Connection::new(stream, &shared, &behaviour, batch).run(stop);
        });
        H2Server { serving, seen }
    }

    /// The server's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.serving.address)
    }

    /// Waits (up to 5 s) until no connection is being served, so that every count is final (shootout has exited:
    /// each connection thread reads what was sent until the end of its socket), and returns the counts.
    pub fn settle(&self) -> &Seen {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.serving.live.load(Ordering::SeqCst) > 0 {
            assert!(Instant::now() < deadline, "a connection of the HTTP/2 test server did not end");
            std::thread::sleep(Duration::from_millis(2));
        }
        let surprises = self.seen.surprises.lock().unwrap();
        assert!(surprises.is_empty(), "the client surprised the server: {surprises:?}");
        drop(surprises);
        &self.seen
    }
}

/// A listener on 127.0.0.1:0 whose connections are each handled on a thread of their own; every thread stops
/// when it is dropped (the handler is given the stop flag to watch), or after [`LIFETIME`].
pub struct Serving {
    /// Where it listens.
    pub address: SocketAddr,
    /// Connections accepted and not yet handled to the end.
    pub live: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl Serving {
    /// Starts accepting; `handle` serves one connection, and should return soon once the flag is set.
    pub fn start<F>(handle: F) -> Serving
    where
        F: Fn(TcpStream, &AtomicBool) + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let live = Arc::new(AtomicU64::new(0));
        let acceptor = std::thread::spawn({
            let (stop, live) = (stop.clone(), live.clone());
            move || accept(&listener, &stop, &live, handle)
        });
        Serving { address, live, stop, acceptor: Some(acceptor) }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Hands each connection to `handle` on a thread of its own (counted in `live` from its accept to its end) until
/// `stop` is set (or [`LIFETIME`] passed), then waits for those threads.
fn accept<F>(listener: &TcpListener, stop: &Arc<AtomicBool>, live: &Arc<AtomicU64>, handle: F)
where
    F: Fn(TcpStream, &AtomicBool) + Send + Sync + 'static,
{
    let handle = Arc::new(handle);
    let started = Instant::now();
    let mut threads = Vec::new();
    while !stop.load(Ordering::SeqCst) && started.elapsed() < LIFETIME {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).unwrap();
                live.fetch_add(1, Ordering::SeqCst);
                let (handle, stop, live) = (handle.clone(), stop.clone(), live.clone());
                threads.push(std::thread::spawn(move || {
                    handle(stream, &stop);
                    live.fetch_sub(1, Ordering::SeqCst);
                }));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => panic!("accept failed: {e}"),
        }
    }
    stop.store(true, Ordering::SeqCst);
    for thread in threads {
        let _ = thread.join();
    }
}

/// A stream waiting for its answer: its id and its place on the connection (from 1).
type Waiting = (u32, u64);

/// One connection's state.
struct Connection<'a> {
    stream: TcpStream,
    seen: &'a Seen,
    behaviour: &'a Behaviour,
    batch: usize,
    input: Vec<u8>,
    out: Vec<u8>,
    preface_read: bool,
    waiting: Vec<Waiting>,
    /// Streams opened on this connection.
    opened: u64,
    /// The last stream a GOAWAY said it answers.
    last: Option<u32>,
    /// The streams allowed at once now.
    limit: u32,
    /// SETTINGS ACKs from the client: the first acknowledges the server's first SETTINGS, the second the lowered
    /// limit.
    acks: u32,
    lowered: bool,
    /// Answers nothing more.
    holding: bool,
}

impl<'a> Connection<'a> {
    fn new(stream: TcpStream, seen: &'a Seen, behaviour: &'a Behaviour, batch: usize) -> Connection<'a> {
        let limit = match behaviour {
            Behaviour::LowerStreams { from, .. } => *from,
            _ => u32::MAX,
        };
        Connection {
            stream,
            seen,
            behaviour,
            batch: batch.max(1),
            input: Vec::new(),
            out: Vec::new(),
            preface_read: false,
            waiting: Vec::new(),
            opened: 0,
            last: None,
            limit,
            acks: 0,
            lowered: false,
            holding: false,
        }
    }

    /// Serves until the client closes, the stop flag is set, or [`LIFETIME`] passed.
    fn run(mut self, stop: &AtomicBool) {
        let _ = self.stream.set_read_timeout(Some(QUIET));
        let _ = self.stream.set_write_timeout(Some(Duration::from_secs(5)));
        let _ = self.stream.set_nodelay(true);
        let settings: Vec<(u16, u32)> = match self.behaviour {
            Behaviour::LowerStreams { from, .. } => vec![(MAX_CONCURRENT_STREAMS, *from)],
            _ => Vec::new(),
        };
        write_settings(&mut self.out, &settings);
        let started = Instant::now();
        let mut chunk = vec![0u8; 64 * 1024];
        while !stop.load(Ordering::SeqCst) && started.elapsed() < LIFETIME {
            if !self.flush() {
                return;
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => {
                    self.input.extend_from_slice(&chunk[..n]);
                    if !self.take_frames() {
                        return;
                    }
                    if self.waiting.len() >= self.batch.min(self.limit as usize) {
                        self.answer_waiting();
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => self.answer_waiting(),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    fn flush(&mut self) -> bool {
        let written = self.stream.write_all(&self.out).is_ok();
        self.out.clear();
        written
    }

    /// Takes every whole frame read so far. False when the client broke the protocol (noted as a surprise).
    fn take_frames(&mut self) -> bool {
        if !self.preface_read {
            if self.input.len() < PREFACE.len() {
                return true;
            }
            if !self.input.starts_with(PREFACE) {
                self.surprise("no HTTP/2 preface".into());
                return false;
            }
            self.input.drain(..PREFACE.len());
            self.preface_read = true;
        }
        let mut at = 0;
        while self.input.len() >= at + 9 {
            let head = &self.input[at..at + 9];
            let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
            let (kind, flags) = (head[3], head[4]);
            let id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
            if self.input.len() < at + 9 + len {
                break;
            }
            let payload = self.input[at + 9..at + 9 + len].to_vec();
            at += 9 + len;
            self.frame(kind, flags, id, &payload);
        }
        self.input.drain(..at);
        true
    }

    fn frame(&mut self, kind: u8, flags: u8, id: u32, payload: &[u8]) {
        match kind {
            SETTINGS if flags & ACK != 0 => {
                self.acks += 1;
                if self.acks == 2 && self.lowered {
                    self.seen.lowered_acks.fetch_add(1, Ordering::SeqCst);
                }
            }
            SETTINGS => write_frame(&mut self.out, SETTINGS, ACK, 0, &[]),
            HEADERS | CONTINUATION if flags & END_HEADERS != 0 => self.request(id),
            HEADERS | CONTINUATION | DATA => {} // a header block that goes on, or a body: not looked at
            RST_STREAM => {
                self.waiting.retain(|&(waiting, _)| waiting != id);
                self.seen.cancelled.fetch_add(1, Ordering::SeqCst);
            }
            PING if flags & ACK == 0 => write_frame(&mut self.out, PING, ACK, 0, payload),
            GOAWAY => self.surprise(format!("GOAWAY from the client: {payload:?}")),
            _ => {} // WINDOW_UPDATE, PRIORITY, a PING's ACK
        }
    }

    /// A request's header block is complete: the stream `id` is open.
    fn request(&mut self, id: u32) {
        self.opened += 1;
        self.seen.streams.fetch_add(1, Ordering::SeqCst);
        if self.last.is_some_and(|last| id > last) {
            self.seen.ignored.fetch_add(1, Ordering::SeqCst);
            return;
        }
        self.waiting.push((id, self.opened));
        let open = self.waiting.len() as u64;
        if !self.lowered {
            self.seen.peak_before.fetch_max(open, Ordering::SeqCst);
        } else if self.acks >= 2 {
            self.seen.peak_after.fetch_max(open, Ordering::SeqCst);
        }
        match *self.behaviour {
            Behaviour::GoawayAfter(n) | Behaviour::GoawayAndHold(n) if self.opened == n => {
                let mut payload = id.to_be_bytes().to_vec();
                payload.extend_from_slice(&0u32.to_be_bytes());
                write_frame(&mut self.out, GOAWAY, 0, 0, &payload);
                self.last = Some(id);
                self.seen.goaways.fetch_add(1, Ordering::SeqCst);
                self.holding = matches!(self.behaviour, Behaviour::GoawayAndHold(_));
                if self.holding {
                    self.seen.held.fetch_add(self.waiting.len() as u64, Ordering::SeqCst);
                }
                self.answer_waiting();
            }
            Behaviour::LowerStreams { after, to, .. } if self.opened == after => {
                write_settings(&mut self.out, &[(MAX_CONCURRENT_STREAMS, to)]);
                self.limit = to;
                self.lowered = true;
            }
            _ => {}
        }
    }

    /// Answers (or resets) every stream that waits, unless holding.
    fn answer_waiting(&mut self) {
        if self.holding {
            return;
        }
        for (id, place) in std::mem::take(&mut self.waiting) {
            let reset = match self.behaviour {
                Behaviour::Reset(rules) => rules.iter().find(|(every, _)| place % every == 0).map(|&(_, code)| code),
                _ => None,
            };
            if let Some(code) = reset {
                write_frame(&mut self.out, RST_STREAM, 0, id, &code.to_be_bytes());
                *self.seen.resets.lock().unwrap().entry(code).or_insert(0) += 1;
                continue;
            }
            // 0x88: `:status 200`, entry 8 of HPACK's static table.
            write_frame(&mut self.out, HEADERS, END_HEADERS, id, &[0x88]);
            write_frame(&mut self.out, DATA, END_STREAM, id, b"ok");
            self.seen.answered.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn surprise(&self, what: String) {
        self.seen.surprises.lock().unwrap().push(what);
    }
}

fn write_frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

fn write_settings(out: &mut Vec<u8>, values: &[(u16, u32)]) {
    let payload: Vec<u8> =
        values.iter().flat_map(|(id, value)| [&id.to_be_bytes()[..], &value.to_be_bytes()].concat()).collect();
    write_frame(out, SETTINGS, 0, 0, &payload);
}
