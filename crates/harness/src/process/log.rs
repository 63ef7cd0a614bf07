//! [`BoundedLog`]: a server's output into its log file, bounded. The first [`HEAD`] bytes go to the file as they
//! come; past them, only the last [`TAIL`] bytes are kept, in memory, and written when the output ends (the
//! server stopped) after a line that says how many bytes were dropped between. A server that writes gigabytes (a
//! debug log, `yes`) costs the disk 8 MiB and the runner 4 MiB, and its log still shows how it started and how
//! it ended. [`open_for_append`] is how every log (a server's, a service's, a container's) is opened: never through
//! a symbolic link.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes of a server's output written to its log as they come.
pub const HEAD: u64 = 4 << 20;
/// Bytes of the end of a server's output kept once the head is written.
pub const TAIL: usize = 4 << 20;

/// The log of one server's output, fed through a pipe by a thread of its own.
#[derive(Debug)]
pub struct BoundedLog {
    sink: Arc<Mutex<Sink>>,
    reader: Option<JoinHandle<()>>,
}

/// Where the output goes.
#[derive(Debug)]
struct Sink {
    file: File,
    /// Bytes written to the file so far, of the head.
    written: u64,
    /// The last bytes past the head.
    tail: VecDeque<u8>,
    /// Bytes past the head that are no longer in `tail`.
    dropped: u64,
    /// The tail has been written: nothing more goes to the file.
    closed: bool,
}

impl Sink {
    fn take(&mut self, bytes: &[u8]) {
        if self.closed {
            return;
        }
        let room = HEAD.saturating_sub(self.written).min(bytes.len() as u64) as usize;
        if room > 0 {
            let _ = self.file.write_all(&bytes[..room]);
            self.written += room as u64;
        }
        let rest = &bytes[room..];
        self.tail.extend(rest);
        let over = self.tail.len().saturating_sub(TAIL);
        self.tail.drain(..over);
        self.dropped += over as u64;
    }

    /// Writes what the tail holds, after a line for what was dropped, once.
    fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        if self.dropped > 0 {
            let _ = writeln!(
                self.file,
                "\n[shootout: {} bytes of output dropped here; a log keeps the first {} MiB and the last {} MiB]",
                self.dropped,
                HEAD >> 20,
                TAIL >> 20
            );
        }
        let (a, b) = self.tail.as_slices();
        let _ = self.file.write_all(a).and_then(|()| self.file.write_all(b));
    }
}

/// Opens the log at `path` to append to it, creating it; a symbolic link there is refused (ELOOP), not written
/// through to the file it names.
pub fn open_for_append(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new().create(true).append(true).custom_flags(nix::libc::O_NOFOLLOW).open(path)
}

impl BoundedLog {
    /// Opens `path` for appending and starts the thread that feeds it; returns the log and the pipe's write end,
    /// for the server's standard output and error (clone it for the second).
    pub fn open(path: &Path) -> io::Result<(BoundedLog, PipeWriter)> {
        let file = open_for_append(path)?;
        let (reader, writer) = io::pipe()?;
        let sink = Arc::new(Mutex::new(Sink { file, written: 0, tail: VecDeque::new(), dropped: 0, closed: false }));
        let feeding = sink.clone();
        let reader = std::thread::Builder::new().name("server log".into()).spawn(move || feed(reader, &feeding))?;
        Ok((BoundedLog { sink, reader: Some(reader) }, writer))
    }

    /// The output has ended, or will not be waited for longer than `within`: writes the tail.
    pub fn finish(mut self, within: Duration) {
        let deadline = Instant::now() + within;
        if let Some(reader) = self.reader.take() {
            while !reader.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if let Ok(mut sink) = self.sink.lock() {
            sink.close();
        }
    }

    /// Waits, `within` at most, until everything the process wrote is in the log: its output's pipe closes when
    /// it and what it started have exited, and the thread that feeds the log has then read it to its end.
    pub fn settle(&self, within: Duration) {
        let deadline = Instant::now() + within;
        if let Some(reader) = &self.reader {
            while !reader.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }

    /// The last lines of the output past the head, when some came (the file holds the rest).
    pub fn tail_text(&self) -> Option<String> {
        let sink = self.sink.lock().ok()?;
        (!sink.tail.is_empty()).then(|| String::from_utf8_lossy(&sink.tail.iter().copied().collect::<Vec<u8>>()).into())
    }
}

impl Drop for BoundedLog {
    fn drop(&mut self) {
        if let Ok(mut sink) = self.sink.lock() {
            sink.close();
        }
    }
}

/// Reads the pipe to its end (every writer gone) into the sink, then closes it.
fn feed(mut reader: PipeReader, sink: &Mutex<Sink>) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => match sink.lock() {
                Ok(mut sink) => sink.take(&buffer[..n]),
                Err(_) => break,
            },
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if let Ok(mut sink) = sink.lock() {
        sink.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn a_flood_keeps_its_head_and_its_tail_and_says_what_was_dropped() {
        let path = std::env::temp_dir().join(format!("shootout-log-{}.log", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let (log, writer) = BoundedLog::open(&path).unwrap();
        let errors = writer.try_clone().unwrap();
        // 20 MiB of numbered lines on stdout, then a last line on stderr.
        let script = "seq 1 2500000; echo the-end >&2";
        let mut child = Command::new("sh")
            .args(["-c", script])
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(errors))
            .spawn()
            .unwrap();
        child.wait().unwrap();
        log.finish(Duration::from_secs(10));
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(text.starts_with("1\n2\n3\n"), "the head");
        assert!(text.ends_with("2499999\n2500000\nthe-end\n"), "the tail");
        let total: u64 = (1..=2_500_000u64).map(|n| n.to_string().len() as u64 + 1).sum::<u64>() + 8;
        let dropped = total - HEAD - TAIL as u64;
        assert!(text.contains(&format!("[shootout: {dropped} bytes of output dropped here;")), "exact count");
        assert!(text.len() as u64 <= HEAD + TAIL as u64 + 200);
    }
}
