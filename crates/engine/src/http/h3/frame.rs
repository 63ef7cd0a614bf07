//! HTTP/3 framing (RFC 9114 §7): variable-length integers, the frame and stream types and error codes the client
//! meets, and [`Frames`], which reads the frames of one stream as its bytes arrive in pieces of any size.
//!
//! DATA payloads stream through (handed on as they arrive, never gathered); every other frame is gathered whole,
//! up to [`MAX_FRAME`]; frames of types the client does not know (reserved "grease" types included) are skipped.

/// Frame types (RFC 9114 §7.2).
pub mod kind {
    /// DATA: a body's bytes.
    pub const DATA: u64 = 0x00;
    /// HEADERS: a QPACK field section.
    pub const HEADERS: u64 = 0x01;
    /// SETTINGS: the first frame of a control stream.
    pub const SETTINGS: u64 = 0x04;
    /// PUSH_PROMISE (never asked for: the client sends no MAX_PUSH_ID).
    pub const PUSH_PROMISE: u64 = 0x05;
    /// GOAWAY: the last stream the server will process.
    pub const GOAWAY: u64 = 0x07;
}

/// Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2).
pub mod stream_type {
    /// The control stream.
    pub const CONTROL: u64 = 0x00;
    /// A push stream.
    pub const PUSH: u64 = 0x01;
    /// QPACK's encoder stream.
    pub const ENCODER: u64 = 0x02;
    /// QPACK's decoder stream.
    pub const DECODER: u64 = 0x03;
}

/// Error codes (RFC 9114 §8.1).
pub mod code {
    /// No error: a graceful close.
    pub const NO_ERROR: u64 = 0x100;
    /// The peer broke the protocol in a way no more specific code names.
    pub const GENERAL_PROTOCOL_ERROR: u64 = 0x101;
    /// A stream the connection needs was closed.
    pub const CLOSED_CRITICAL_STREAM: u64 = 0x104;
    /// A frame where it is not allowed.
    pub const FRAME_UNEXPECTED: u64 = 0x105;
    /// A frame that does not parse.
    pub const FRAME_ERROR: u64 = 0x106;
    /// The server did not process the request at all: safe to send again.
    pub const REQUEST_REJECTED: u64 = 0x10b;
    /// The request was cancelled (the client gives up on a stream with it).
    pub const REQUEST_CANCELLED: u64 = 0x10c;
    /// A malformed message.
    pub const MESSAGE_ERROR: u64 = 0x10e;
    /// QPACK: a field section the decoder cannot read (RFC 9204 §6).
    pub const QPACK_DECOMPRESSION_FAILED: u64 = 0x200;
}

/// The name of an HTTP/3 or QPACK error code, or its number in hex.
pub fn error_name(error: u64) -> String {
    let name = match error {
        0x100 => "H3_NO_ERROR",
        0x101 => "H3_GENERAL_PROTOCOL_ERROR",
        0x102 => "H3_INTERNAL_ERROR",
        0x103 => "H3_STREAM_CREATION_ERROR",
        0x104 => "H3_CLOSED_CRITICAL_STREAM",
        0x105 => "H3_FRAME_UNEXPECTED",
        0x106 => "H3_FRAME_ERROR",
        0x107 => "H3_EXCESSIVE_LOAD",
        0x108 => "H3_ID_ERROR",
        0x109 => "H3_SETTINGS_ERROR",
        0x10a => "H3_MISSING_SETTINGS",
        0x10b => "H3_REQUEST_REJECTED",
        0x10c => "H3_REQUEST_CANCELLED",
        0x10d => "H3_REQUEST_INCOMPLETE",
        0x10e => "H3_MESSAGE_ERROR",
        0x10f => "H3_CONNECT_ERROR",
        0x110 => "H3_VERSION_FALLBACK",
        0x200 => "QPACK_DECOMPRESSION_FAILED",
        0x201 => "QPACK_ENCODER_STREAM_ERROR",
        0x202 => "QPACK_DECODER_STREAM_ERROR",
        _ => return format!("0x{error:x}"),
    };
    name.to_string()
}

/// The largest frame other than DATA the client gathers (its field sections and control frames).
pub const MAX_FRAME: u64 = 1 << 20;

/// Appends `value` as a QUIC variable-length integer (RFC 9000 §16), in its shortest form.
pub fn put_varint(out: &mut Vec<u8>, value: u64) {
    if value < 1 << 6 {
        out.push(value as u8);
    } else if value < 1 << 14 {
        out.extend_from_slice(&(value as u16 | 0x4000).to_be_bytes());
    } else if value < 1 << 30 {
        out.extend_from_slice(&(value as u32 | 0x8000_0000).to_be_bytes());
    } else {
        out.extend_from_slice(&(value | 0xc000_0000_0000_0000).to_be_bytes());
    }
}

/// The variable-length integer at the start of `bytes` and its length, or `None` when `bytes` holds only part of
/// it.
pub fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let first = *bytes.first()?;
    let len = 1usize << (first >> 6);
    let bytes = bytes.get(..len)?;
    let mut value = u64::from(first & 0x3f);
    for &byte in &bytes[1..] {
        value = (value << 8) | u64::from(byte);
    }
    Some((value, len))
}

/// Appends a frame header: its type and the length of its payload.
pub fn put_header(out: &mut Vec<u8>, kind: u64, len: usize) {
    put_varint(out, kind);
    put_varint(out, len as u64);
}

/// A frame the stream is too broken to read on from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(pub &'static str);

/// What [`Frames::next`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// Bytes of a DATA payload (a frame's payload may come in several pieces).
    Data(&'a [u8]),
    /// A whole frame of another known type, with its payload.
    Whole(u64, &'a [u8]),
}

/// Where reading stands within the current frame.
#[derive(Debug, Clone, Copy)]
enum At {
    /// Between frames: `have` bytes of the next header gathered.
    Header { have: usize },
    /// Inside a DATA payload, `left` bytes still to come.
    Data { left: u64 },
    /// Gathering the payload of a frame of `kind`, `left` bytes still to come.
    Whole { kind: u64, left: u64 },
    /// Skipping the payload of a frame of unknown type.
    Skip { left: u64 },
}

/// Reads the frames of one stream, piece by piece.
#[derive(Debug)]
pub struct Frames {
    at: At,
    head: [u8; 16],
    payload: Vec<u8>,
}

impl Default for Frames {
    fn default() -> Self {
        Frames { at: At::Header { have: 0 }, head: [0; 16], payload: Vec::new() }
    }
}

impl Frames {
    /// Ready for a stream's first frame.
    pub fn reset(&mut self) {
        self.at = At::Header { have: 0 };
        self.payload.clear();
    }

    /// True between frames: the stream may end here.
    pub fn between(&self) -> bool {
        matches!(self.at, At::Header { have: 0 })
    }

    /// The next frame, or piece of DATA, in `bytes[*pos..]`; `*pos` moves past what was read. `Ok(None)`: the
    /// bytes ran out first.
    pub fn next<'a>(&'a mut self, bytes: &'a [u8], pos: &mut usize) -> Result<Option<Frame<'a>>, Unreadable> {
        loop {
            let rest = &bytes[*pos..];
            match self.at {
                At::Header { have } => {
                    if rest.is_empty() {
                        return Ok(None);
                    }
                    let take = rest.len().min(self.head.len() - have);
                    self.head[have..have + take].copy_from_slice(&rest[..take]);
                    let gathered = &self.head[..have + take];
                    let Some((kind, a)) = varint(gathered) else {
                        *pos += take;
                        self.at = At::Header { have: have + take };
                        continue;
                    };
                    let Some((len, b)) = varint(&gathered[a..]) else {
                        *pos += take;
                        self.at = At::Header { have: have + take };
                        continue;
                    };
                    *pos += a + b - have;
                    self.at = match kind {
                        kind::DATA => At::Data { left: len },
                        kind::HEADERS | kind::SETTINGS | kind::GOAWAY | kind::PUSH_PROMISE => {
                            if len > MAX_FRAME {
                                return Err(Unreadable("a frame larger than the client reads (1 MiB)"));
                            }
                            self.payload.clear();
                            At::Whole { kind, left: len }
                        }
                        // Frames of HTTP/2 that HTTP/3 forbids (RFC 9114 §7.2.8).
                        0x02 | 0x06 | 0x08 | 0x09 => return Err(Unreadable("an HTTP/2 frame type HTTP/3 forbids")),
                        _ => At::Skip { left: len },
                    };
                    if let At::Whole { kind, left: 0 } = self.at {
                        self.at = At::Header { have: 0 };
                        return Ok(Some(Frame::Whole(kind, &[])));
                    }
                }
                At::Data { left } => {
                    if left == 0 {
                        self.at = At::Header { have: 0 };
                        continue;
                    }
                    if rest.is_empty() {
                        return Ok(None);
                    }
                    let take = rest.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    *pos += take;
                    self.at = if take as u64 == left {
                        At::Header { have: 0 }
                    } else {
                        At::Data { left: left - take as u64 }
                    };
                    return Ok(Some(Frame::Data(&rest[..take])));
                }
                At::Whole { kind, left } => {
                    if rest.is_empty() {
                        return Ok(None);
                    }
                    let take = rest.len().min(left as usize);
                    self.payload.extend_from_slice(&rest[..take]);
                    *pos += take;
                    if take as u64 == left {
                        self.at = At::Header { have: 0 };
                        return Ok(Some(Frame::Whole(kind, &self.payload)));
                    }
                    self.at = At::Whole { kind, left: left - take as u64 };
                }
                At::Skip { left } => {
                    let take = rest.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    *pos += take;
                    self.at = if take as u64 == left {
                        At::Header { have: 0 }
                    } else {
                        At::Skip { left: left - take as u64 }
                    };
                    if rest.is_empty() && left > 0 {
                        return Ok(None);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_length() {
        for value in
            [0, 37, 63, 64, 15_293, 16_383, 16_384, 494_878_333, (1 << 30) - 1, 1 << 30, 151_288_809_941_952_652]
        {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(varint(&out), Some((value, out.len())), "{value}");
            assert_eq!(varint(&out[..out.len() - 1]), None, "{value} cut short");
        }
        // RFC 9000 §A.1's examples.
        assert_eq!(varint(&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c]), Some((151_288_809_941_952_652, 8)));
        assert_eq!(varint(&[0x9d, 0x7f, 0x3e, 0x7d]), Some((494_878_333, 4)));
        assert_eq!(varint(&[0x7b, 0xbd]), Some((15_293, 2)));
        assert_eq!(varint(&[0x25]), Some((37, 1)));
    }

    /// Every frame of `bytes`, read in pieces of `piece` bytes, the pieces of DATA in a row joined.
    fn read(bytes: &[u8], piece: usize) -> Vec<(u64, Vec<u8>)> {
        let mut frames = Frames::default();
        let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
        for chunk in bytes.chunks(piece) {
            let mut pos = 0;
            while let Some(frame) = frames.next(chunk, &mut pos).unwrap() {
                match frame {
                    Frame::Data(d) => match out.last_mut() {
                        Some((kind::DATA, joined)) => joined.extend_from_slice(d),
                        _ => out.push((kind::DATA, d.to_vec())),
                    },
                    Frame::Whole(k, payload) => out.push((k, payload.to_vec())),
                }
            }
        }
        assert!(frames.between(), "every frame ended");
        out
    }

    #[test]
    fn frames_read_alike_whatever_the_pieces() {
        let mut bytes = Vec::new();
        put_header(&mut bytes, kind::HEADERS, 3);
        bytes.extend_from_slice(b"abc");
        put_header(&mut bytes, 0x21, 5); // a reserved type: skipped
        bytes.extend_from_slice(b"grease");
        bytes.pop();
        put_header(&mut bytes, kind::DATA, 300);
        bytes.extend(std::iter::repeat_n(7u8, 300));
        put_header(&mut bytes, kind::DATA, 0);
        put_header(&mut bytes, kind::HEADERS, 0);
        let expected = vec![(kind::HEADERS, b"abc".to_vec()), (kind::DATA, vec![7; 300]), (kind::HEADERS, vec![])];
        for piece in [1, 2, 3, 7, 64, 1000] {
            assert_eq!(read(&bytes, piece), expected, "pieces of {piece}");
        }
    }

    #[test]
    fn forbidden_and_oversized_frames_are_unreadable() {
        let mut bytes = Vec::new();
        put_header(&mut bytes, 0x08, 4); // HTTP/2's WINDOW_UPDATE
        assert!(Frames::default().next(&bytes, &mut 0).is_err());
        let mut bytes = Vec::new();
        put_header(&mut bytes, kind::HEADERS, (MAX_FRAME + 1) as usize);
        assert!(Frames::default().next(&bytes, &mut 0).is_err());
    }
}
