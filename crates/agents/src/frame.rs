//! One message a line: each message is a JSON document on one line, so that any byte stream carries them (an
//! agent's stdin and stdout through ssh or srun, or the TCP connection a Kubernetes pod dials back) and a person
//! can read a captured exchange. A line longer than [`MOST_BYTES`] is refused before it is all read, so a peer
//! that speaks something else cannot make the other side hold an unbounded buffer.

use std::io::{self, BufRead, Read, Write};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The longest message line taken, in bytes: far above the largest message (a run's totals with its raw
/// histograms, a few hundred KiB), far below what would hurt.
pub const MOST_BYTES: usize = 16 << 20;

/// Why a message could not be read; each names the peer.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream failed.
    #[error("{peer}: {source}")]
    Io {
        /// Who was being read.
        peer: String,
        /// What the system said.
        source: io::Error,
    },
    /// A line over [`MOST_BYTES`].
    #[error("{peer} sent a line of more than {MOST_BYTES} bytes: it does not speak shootout's agent protocol")]
    TooLong {
        /// Who sent it.
        peer: String,
    },
    /// The stream ended inside a message.
    #[error("{peer} stopped in the middle of a message")]
    Truncated {
        /// Who sent it.
        peer: String,
    },
    /// A line that is not a message.
    #[error("{peer} sent something that is not a message of shootout's agent protocol ({reason}): {start}")]
    NotAMessage {
        /// Who sent it.
        peer: String,
        /// What the JSON reader said.
        reason: String,
        /// The start of the line, for the user to recognise (a shell's banner, an error of ssh…).
        start: String,
    },
}

/// Writes `message` as one line and flushes it.
pub fn write<W: Write, T: Serialize>(out: &mut W, message: &T) -> io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// Reads the next message from `peer`; `None` when the stream has ended between messages.
pub fn read<R: BufRead, T: DeserializeOwned>(input: &mut R, peer: &str) -> Result<Option<T>, FrameError> {
    let mut line = Vec::new();
    let read = input
        .take(MOST_BYTES as u64 + 1)
        .read_until(b'\n', &mut line)
        .map_err(|source| FrameError::Io { peer: peer.to_string(), source })?;
    if read == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(if line.len() > MOST_BYTES {
            FrameError::TooLong { peer: peer.to_string() }
        } else {
            FrameError::Truncated { peer: peer.to_string() }
        });
    }
    serde_json::from_slice(&line).map(Some).map_err(|e| {
        let text = String::from_utf8_lossy(&line);
        FrameError::NotAMessage {
            peer: peer.to_string(),
            reason: e.to_string(),
            start: text.trim_end().chars().take(80).collect(),
        }
    })
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use serde::Deserialize;

    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Message {
        Ping { seq: u32 },
        Note(String),
    }

    #[test]
    fn messages_round_trip_one_a_line() {
        let mut stream = Vec::new();
        write(&mut stream, &Message::Ping { seq: 7 }).unwrap();
        write(&mut stream, &Message::Note("two\nlines".into())).unwrap();
        assert_eq!(stream.iter().filter(|&&b| b == b'\n').count(), 2, "a newline inside a string is escaped");
        let mut input = Cursor::new(stream);
        assert_eq!(read::<_, Message>(&mut input, "agent 0").unwrap(), Some(Message::Ping { seq: 7 }));
        assert_eq!(read::<_, Message>(&mut input, "agent 0").unwrap(), Some(Message::Note("two\nlines".into())));
        assert!(read::<_, Message>(&mut input, "agent 0").unwrap().is_none(), "the end between messages");
    }

    #[test]
    fn what_is_not_a_message_is_named_with_its_peer() {
        let banner = read::<_, Message>(&mut Cursor::new(b"Welcome to load1!\n".to_vec()), "agent 2 (load1)");
        let e = banner.unwrap_err().to_string();
        assert!(
            e.starts_with("agent 2 (load1) sent something that is not a message") && e.ends_with(": Welcome to load1!"),
            "{e}"
        );
        let cut = read::<_, Message>(&mut Cursor::new(b"{\"Ping\":{\"se".to_vec()), "agent 1");
        assert!(matches!(cut, Err(FrameError::Truncated { .. })));
    }

    #[test]
    fn an_endless_line_is_refused_without_reading_it_all() {
        let endless = std::io::repeat(b'x');
        let e = read::<_, Message>(&mut std::io::BufReader::new(endless), "agent 3").unwrap_err();
        assert!(matches!(e, FrameError::TooLong { .. }), "{e}");
    }
}
