//! [`Ring`]: io_uring as a worker's I/O for plain HTTP/1.1, with one `io_uring_enter` per loop turn.
//!
//! With epoll a keep-alive request costs a `write`, a `read` and a share of `epoll_wait`. With the ring it costs
//! no system call of its own: the loop queues a send for each request, and each connection has one multishot
//! receive armed for its whole life, which hands over every arrival already copied into a buffer the kernel takes
//! from a ring of buffers this worker provides ([`Buffers`]). The queued sends go in, and the arrivals come out,
//! in the single `io_uring_enter` that also waits for the next event or due time ([`Ring::turn`]).
//!
//! A connection is first waited on with a one-shot poll for writability (its connect finishing), then armed for
//! receiving. Sends ask the kernel to send the whole request (`MSG_WAITALL`) and report only failures. A socket is
//! let go through the ring too ([`Ring::release`]): its receive is cancelled and its descriptor closed by queued
//! operations, so a connection per request (no keep-alive) costs the `socket`, `connect` and `setsockopt` calls
//! and nothing more. Each operation carries its slot, the slot's socket generation and what it was ([`Op`]), so a completion
//! for a socket already replaced is known as stale; its buffer goes back to the ring all the same.
//!
//! The ring is set up for one thread (`SINGLE_ISSUER`, `DEFER_TASKRUN`: the kernel does the deferred receive work
//! inside this thread's `io_uring_enter`, not by interrupting it); a kernel too old for those flags gets a plain
//! ring. [`available`] tells whether this machine lets a process have one at all (io_uring can be disabled by
//! sysctl or refused by a seccomp filter): the run then stays with epoll, and says so.

use std::alloc::{self, Layout};
use std::io;
use std::os::fd::{IntoRawFd, RawFd};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Instant;

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use nix::libc::{EBUSY, EINTR, ETIME, MSG_WAITALL, POLLOUT};
use shootout_model::{IoBackend, LoadOptions};

/// Submission queue entries; the completion queue is twice as long, and the kernel keeps what overflows it.
const ENTRIES: u32 = 1024;
/// Receive buffers each worker provides, and their size: 2 MiB in all. When every buffer holds an arrival not yet
/// handled, receives stop with `ENOBUFS` and are armed again on the next turn.
const BUFFERS: u16 = 128;
const BUFFER_SIZE: usize = 16 * 1024;
/// The buffer group id of [`Buffers`] (one group per ring).
const GROUP: u16 = 0;

/// What an operation was, carried in the top byte of its user data (its discriminant, see [`user_data`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    /// A poll for writability: the connect has finished, one way or the other.
    Connected,
    /// A send that failed or sent less than the whole request (successful sends report nothing).
    Sent,
    /// One arrival of a connection's multishot receive (or its end).
    Received,
    /// Letting go of a socket ([`Ring::release`]): only a cancel that found nothing, or a failed close, report.
    Released,
}

/// One completion, copied out of the completion queue.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    /// What the operation was.
    pub op: Op,
    /// The worker's slot it was for.
    pub slot: usize,
    /// The slot's socket generation when it was queued.
    pub generation: u32,
    /// The kernel's result: bytes (received or sent), a poll mask, or a negated errno.
    pub result: i32,
    /// Received: the buffer holding the bytes, to hand back with [`Ring::recycle`] once read.
    pub buffer: Option<u16>,
    /// Received: false when the multishot receive has ended and must be armed again to go on.
    pub more: bool,
}

/// A worker's io_uring instance with its receive buffers.
pub struct Ring {
    ring: IoUring,
    buffers: Buffers,
    /// The completions of the last turn, reused from turn to turn.
    completions: Vec<Completion>,
}

/// Whether this process may use io_uring here: `Err` says why not.
pub fn available() -> io::Result<()> {
    Ring::new().map(drop)
}

/// What the workers of a run do their I/O with: io_uring where it serves the run (plain HTTP/1.1, `tls` false, see
/// [`LoadOptions::io_uring_unfit`]; TLS and HTTP/2 go through epoll) and the machine allows it (`available`),
/// unless `--io` chose. `--io io_uring` where it cannot be had is an error (the line to print) rather than a quiet
/// fall back.
pub fn choose(options: &LoadOptions, tls: bool, available: fn() -> io::Result<()>) -> Result<IoBackend, String> {
    let unfit = options.io_uring_unfit(tls);
    match options.io {
        Some(IoBackend::Epoll) => Ok(IoBackend::Epoll),
        Some(IoBackend::IoUring) => match unfit {
            Some(unfit) => Err(unfit),
            None => available().map(|()| IoBackend::IoUring).map_err(|e| {
                format!("--io io_uring: this machine refuses io_uring ({e}); leave --io out to use epoll")
            }),
        },
        _ if unfit.is_none() && available().is_ok() => Ok(IoBackend::IoUring),
        _ => Ok(IoBackend::Epoll),
    }
}

impl Ring {
    /// A ring for the calling thread, with its buffers registered.
    pub fn new() -> io::Result<Ring> {
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(ENTRIES)
            .or_else(|_| IoUring::new(ENTRIES))?;
        let buffers = Buffers::new()?;
        // SAFETY: the ring of buffers stays mapped, and its buffers allocated, as long as `Ring` lives, and the
        // kernel's io_uring instance is dropped (fields drop in declaration order) before them.
        unsafe { ring.submitter().register_buf_ring_with_flags(buffers.ring as u64, BUFFERS, GROUP, 0)? };
        Ok(Ring { ring, buffers, completions: Vec::with_capacity(ENTRIES as usize) })
    }

    /// Queues a one-shot poll for `fd` to become writable (its connect to finish).
    pub fn poll_connected(&mut self, fd: RawFd, slot: usize, generation: u32) {
        let entry = opcode::PollAdd::new(types::Fd(fd), POLLOUT as u32).build();
        self.push(entry.user_data(user_data(Op::Connected, slot, generation)));
    }

    /// Queues a send of all of `bytes`, which must stay where they are until the next turn's `io_uring_enter` has
    /// taken them (a request's bytes live in the workload, or in its connection, until its response).
    pub fn send(&mut self, fd: RawFd, bytes: &[u8], slot: usize, generation: u32) {
        let entry = opcode::Send::new(types::Fd(fd), bytes.as_ptr(), bytes.len() as u32)
            .flags(MSG_WAITALL)
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS);
        self.push(entry.user_data(user_data(Op::Sent, slot, generation)));
    }

    /// Arms `fd`'s multishot receive: every arrival comes back as a [`Completion`] with its buffer.
    pub fn receive(&mut self, fd: RawFd, slot: usize, generation: u32) {
        let entry = opcode::RecvMulti::new(types::Fd(fd), GROUP).build();
        self.push(entry.user_data(user_data(Op::Received, slot, generation)));
    }

    /// Submits what was queued and waits until a completion is there or `until` comes (at once when it has
    /// passed); returns the completions, to be given back with [`Ring::give_back`] once handled.
    pub fn turn(&mut self, until: Instant) -> io::Result<Vec<Completion>> {
        let left = until.saturating_duration_since(Instant::now());
        let timeout = types::Timespec::from(left);
        let args = types::SubmitArgs::new().timespec(&timeout);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(ETIME) | Some(EINTR) | Some(EBUSY)) => {}
            Err(e) => return Err(e),
        }
        let mut completions = std::mem::take(&mut self.completions);
        completions.clear();
        completions.extend(self.ring.completion().map(|entry| {
            let data = entry.user_data();
            Completion {
                op: Op::from_tag((data >> 56) as u8),
                slot: (data & 0xff_ffff) as usize,
                generation: (data >> 24) as u32,
                result: entry.result(),
                buffer: cqueue::buffer_select(entry.flags()),
                more: cqueue::more(entry.flags()),
            }
        }));
        Ok(completions)
    }

    /// Hands the queued operations to the kernel now, when there are any: before the bytes of a queued send are
    /// rewritten.
    pub fn submit_pending(&mut self) {
        if !self.ring.submission().is_empty() {
            let _ = self.ring.submit();
        }
    }

    /// Lets go of slot `slot`'s socket (of generation `generation`) without a system call: queued operations
    /// cancel its multishot receive, which would otherwise hold the connection open, and then close the
    /// descriptor. Operations queued before for the same descriptor go in first, and the descriptor's number
    /// cannot be handed to a new socket before the close has run.
    pub fn release(&mut self, socket: mio::net::TcpStream, slot: usize, generation: u32) {
        let released = user_data(Op::Released, slot, generation);
        let cancel = opcode::AsyncCancel::new(user_data(Op::Received, slot, generation)).build();
        self.push(cancel.flags(squeue::Flags::SKIP_SUCCESS).user_data(released));
        let close = opcode::Close::new(types::Fd(socket.into_raw_fd())).build();
        self.push(close.flags(squeue::Flags::SKIP_SUCCESS).user_data(released));
    }

    /// Takes back the vector [`Ring::turn`] handed out, to reuse it.
    pub fn give_back(&mut self, completions: Vec<Completion>) {
        self.completions = completions;
    }

    /// The first `len` bytes of receive buffer `buffer`.
    pub fn bytes(&self, buffer: u16, len: usize) -> &[u8] {
        &self.buffers.slab[usize::from(buffer) * BUFFER_SIZE..][..len.min(BUFFER_SIZE)]
    }

    /// Hands receive buffer `buffer` back to the kernel.
    pub fn recycle(&mut self, buffer: u16) {
        self.buffers.give(buffer);
    }

    fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: every entry refers to a socket and bytes that outlive its operation (see `send`), and to
            // the buffer group registered in `new`.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            // The queue is full: hand it to the kernel now (completions stay queued for the next turn).
            let _ = self.ring.submit();
        }
    }
}

impl Drop for Ring {
    /// Runs what is still queued, so the descriptors of sockets let go last are closed, not leaked.
    fn drop(&mut self) {
        self.submit_pending();
    }
}

/// The ring of receive buffers shared with the kernel (`IORING_REGISTER_PBUF_RING`): a page-aligned array of
/// `BUFFERS` entries, each giving a buffer's address, length and id, and a slab holding the buffers. The kernel
/// takes entries from the head; [`Buffers::give`] puts a used buffer back at the tail.
struct Buffers {
    ring: *mut types::BufRingEntry,
    slab: Box<[u8]>,
    tail: u16,
}

impl Buffers {
    fn new() -> io::Result<Buffers> {
        let layout = Buffers::layout();
        // SAFETY: the layout has a non-zero size.
        let ring = unsafe { alloc::alloc_zeroed(layout) }.cast::<types::BufRingEntry>();
        if ring.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        let mut buffers =
            Buffers { ring, slab: vec![0; usize::from(BUFFERS) * BUFFER_SIZE].into_boxed_slice(), tail: 0 };
        (0..BUFFERS).for_each(|id| buffers.give(id));
        Ok(buffers)
    }

    fn layout() -> Layout {
        Layout::from_size_align(usize::from(BUFFERS) * std::mem::size_of::<types::BufRingEntry>(), 4096)
            .expect("a valid layout")
    }

    /// Publishes buffer `id` at the tail of the ring.
    fn give(&mut self, id: u16) {
        // SAFETY: the index is within the ring (BUFFERS is a power of two), which `new` allocated.
        let entry = unsafe { &mut *self.ring.add(usize::from(self.tail & (BUFFERS - 1))) };
        entry.set_addr(self.slab.as_ptr() as u64 + (usize::from(id) * BUFFER_SIZE) as u64);
        entry.set_len(BUFFER_SIZE as u32);
        entry.set_bid(id);
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail field lives in the first entry's reserved bytes, and the kernel reads it concurrently,
        // hence the atomic store, which also orders the entry's writes before it.
        unsafe {
            let tail = types::BufRingEntry::tail(self.ring).cast_mut();
            AtomicU16::from_ptr(tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { alloc::dealloc(self.ring.cast(), Buffers::layout()) };
    }
}

impl Op {
    /// Every operation, in the order of their discriminants.
    const ALL: [Op; 4] = [Op::Connected, Op::Sent, Op::Received, Op::Released];

    /// The operation whose discriminant is `tag` (the top byte of a user data).
    fn from_tag(tag: u8) -> Op {
        Op::ALL.get(usize::from(tag)).copied().unwrap_or(Op::Released)
    }
}

/// Packs what an operation was, its slot (24 bits) and its socket generation into its user data.
fn user_data(op: Op, slot: usize, generation: u32) -> u64 {
    u64::from(op as u8) << 56 | u64::from(generation) << 24 & 0x00ff_ffff_ff00_0000 | (slot as u64 & 0xff_ffff)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;
    use std::time::Duration;

    use shootout_model::settings::LoadSettings;
    use shootout_model::Protocol;

    use super::*;

    fn options(url: &str, io: Option<IoBackend>, protocol: Option<Protocol>) -> LoadOptions {
        LoadSettings { url: url.into(), io, protocol, ..LoadSettings::default() }.build(1).unwrap()
    }

    fn refused() -> io::Result<()> {
        Err(io::Error::from_raw_os_error(nix::libc::EPERM))
    }

    #[test]
    fn plain_http1_takes_the_ring_where_allowed_and_falls_back_to_epoll_where_refused() {
        let plain = options("http://127.0.0.1:1/", None, None);
        assert_eq!(choose(&plain, false, || Ok(())), Ok(IoBackend::IoUring));
        assert_eq!(choose(&plain, false, refused), Ok(IoBackend::Epoll), "refused: epoll, and the result says so");
        let tls = options("https://127.0.0.1:1/", None, None);
        assert_eq!(choose(&tls, true, || Ok(())), Ok(IoBackend::Epoll), "TLS goes through epoll");
        let h2 = options("http://127.0.0.1:1/", None, Some(Protocol::Http2));
        assert_eq!(choose(&h2, false, || Ok(())), Ok(IoBackend::Epoll), "HTTP/2 goes through epoll");
        let epoll = options("http://127.0.0.1:1/", Some(IoBackend::Epoll), None);
        assert_eq!(choose(&epoll, false, || Ok(())), Ok(IoBackend::Epoll));
        let uring = options("http://127.0.0.1:1/", Some(IoBackend::IoUring), None);
        let error = choose(&uring, false, refused).unwrap_err();
        assert!(error.starts_with("--io io_uring: this machine refuses io_uring"), "{error}");
        // Options not built by the CLI's settings meet the same rule, in the same words.
        let mut h2 = options("http://127.0.0.1:1/", None, Some(Protocol::Http2));
        h2.io = Some(IoBackend::IoUring);
        assert_eq!(choose(&h2, false, || Ok(())).unwrap_err(), h2.io_uring_unfit(false).unwrap());
    }

    #[test]
    fn user_data_carries_the_operation_slot_and_generation_back() {
        for op in Op::ALL {
            let data = user_data(op, 0xab_cdef, 0xffff_ff12);
            assert_eq!(Op::from_tag((data >> 56) as u8), op);
            assert_eq!((data & 0xff_ffff, (data >> 24) as u32), (0xab_cdef, 0xffff_ff12), "{op:?}");
        }
    }

    #[test]
    fn arrivals_come_back_in_provided_buffers_with_their_slot_and_generation() {
        if let Err(e) = available() {
            assert!(
                std::env::var_os("CI").is_none(),
                "under CI this test must run, but io_uring is not available: {e}"
            );
            return eprintln!("io_uring is not available here: nothing to check");
        }
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let mut ring = Ring::new().unwrap();
        ring.receive(client.as_raw_fd(), 7, 3);
        ring.send(client.as_raw_fd(), b"ping", 7, 3);
        let mut got = [0; 4];
        ring.turn(Instant::now()).unwrap();
        server.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping", "the queued send went out with the turn");
        // More than one buffer's worth, so it arrives in several.
        let sent: Vec<u8> = (0..3 * BUFFER_SIZE).map(|i| (i % 251) as u8).collect();
        server.write_all(&sent).unwrap();
        let mut received = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while received.len() < sent.len() && Instant::now() < deadline {
            let completions = ring.turn(Instant::now() + Duration::from_millis(50)).unwrap();
            for done in &completions {
                assert_eq!((done.op, done.slot, done.generation), (Op::Received, 7, 3));
                let buffer = done.buffer.expect("bytes come in a buffer");
                received.extend_from_slice(ring.bytes(buffer, done.result as usize));
                ring.recycle(buffer);
            }
            ring.give_back(completions);
        }
        assert_eq!(received, sent, "every byte, in order");
        // The server closes: the receive ends with 0 and no buffer.
        drop(server);
        let completions = ring.turn(Instant::now() + Duration::from_secs(1)).unwrap();
        let end = completions.iter().find(|done| done.result == 0).expect("the end of the stream");
        assert!(end.buffer.is_none() && !end.more);
        client.flush().unwrap();
    }
}
