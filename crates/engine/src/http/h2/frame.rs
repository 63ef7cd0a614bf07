//! HTTP/2 framing (RFC 9113 §4, §6): the 9-byte frame header, the frame types and flags the client meets, and
//! writers for the frames it sends. Nothing here allocates; writers append to the connection's output buffer.

/// The connection preface every client sends first.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Length of a frame header.
pub const HEADER_LEN: usize = 9;
/// The frame size every peer accepts until it says otherwise (SETTINGS_MAX_FRAME_SIZE).
pub const DEFAULT_MAX_FRAME: u32 = 16_384;
/// The flow-control window every stream and the connection start with.
pub const DEFAULT_WINDOW: u32 = 65_535;
/// The largest window a WINDOW_UPDATE may open.
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

/// Frame types.
pub mod kind {
    /// Body bytes of a stream.
    pub const DATA: u8 = 0x0;
    /// A header block opening (or trailing) a stream.
    pub const HEADERS: u8 = 0x1;
    /// Stream priority (ignored).
    pub const PRIORITY: u8 = 0x2;
    /// A stream ended by one side, with an error code.
    pub const RST_STREAM: u8 = 0x3;
    /// Connection settings.
    pub const SETTINGS: u8 = 0x4;
    /// Server push (refused: the client disables it).
    pub const PUSH_PROMISE: u8 = 0x5;
    /// A round trip check, answered at once.
    pub const PING: u8 = 0x6;
    /// The connection is shutting down.
    pub const GOAWAY: u8 = 0x7;
    /// More flow-control credit.
    pub const WINDOW_UPDATE: u8 = 0x8;
    /// The rest of a header block.
    pub const CONTINUATION: u8 = 0x9;
}

/// Frame flags.
pub mod flag {
    /// DATA, HEADERS: the last frame of the stream from this side.
    pub const END_STREAM: u8 = 0x1;
    /// SETTINGS, PING: an acknowledgement.
    pub const ACK: u8 = 0x1;
    /// HEADERS, CONTINUATION: the header block is complete.
    pub const END_HEADERS: u8 = 0x4;
    /// DATA, HEADERS: a pad length byte leads the payload.
    pub const PADDED: u8 = 0x8;
    /// HEADERS: a priority block follows the pad length.
    pub const PRIORITY: u8 = 0x20;
}

/// SETTINGS identifiers.
pub mod setting {
    /// The size of the HPACK dynamic table the sender's decoder keeps.
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    /// Whether the peer may push.
    pub const ENABLE_PUSH: u16 = 0x2;
    /// How many streams the sender lets the peer open at once.
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    /// The window each new stream starts with.
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    /// The largest frame payload the sender accepts.
    pub const MAX_FRAME_SIZE: u16 = 0x5;
}

/// The names of the error codes of RST_STREAM and GOAWAY (RFC 9113 §7), indexed by code, as results show them.
const ERROR_NAMES: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

/// The name of an error code, or `0x…` (lowercase hex) for a code RFC 9113 does not define.
pub fn error_name(code: u32) -> String {
    ERROR_NAMES.get(code as usize).map_or_else(|| format!("0x{code:x}"), |name| (*name).to_string())
}

/// The error code a client sends when it gives up on a stream.
pub const CANCEL: u32 = 0x8;
/// The error code of a stream the server did not process at all.
pub const REFUSED_STREAM: u32 = 0x7;
/// The error code of a peer that broke the protocol.
pub const PROTOCOL_ERROR: u32 = 0x1;

/// A parsed frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Payload length.
    pub len: u32,
    /// Frame type.
    pub kind: u8,
    /// Flags.
    pub flags: u8,
    /// Stream identifier (0 for the connection).
    pub stream: u32,
}

impl Header {
    /// Reads a header from its 9 bytes.
    pub fn parse(bytes: &[u8; HEADER_LEN]) -> Header {
        Header {
            len: u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]),
            kind: bytes[3],
            flags: bytes[4],
            stream: u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) & MAX_WINDOW,
        }
    }

    /// True when `flag` is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// Appends a frame header.
pub fn write_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let len = len as u32;
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a SETTINGS frame carrying `values`.
pub fn write_settings(out: &mut Vec<u8>, values: &[(u16, u32)]) {
    write_header(out, values.len() * 6, kind::SETTINGS, 0, 0);
    for (id, value) in values {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends a WINDOW_UPDATE opening `increment` more bytes on `stream` (0: the connection).
pub fn write_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    write_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// Appends an RST_STREAM for `stream` with `code`.
pub fn write_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    write_header(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

/// Appends a GOAWAY with `code` (the client has processed no stream of the server's).
pub fn write_goaway(out: &mut Vec<u8>, code: u32) {
    write_header(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

/// Appends a header block for `stream`: one HEADERS frame, followed by CONTINUATION frames when the block is
/// larger than the peer's `max_frame`. `end_stream` when no body follows.
pub fn write_headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max_frame: usize) {
    let mut chunks = block.chunks(max_frame.max(1)).peekable();
    let mut kind = kind::HEADERS;
    let mut flags = if end_stream { flag::END_STREAM } else { 0 };
    if chunks.peek().is_none() {
        write_header(out, 0, kind, flags | flag::END_HEADERS, stream);
        return;
    }
    while let Some(chunk) = chunks.next() {
        if chunks.peek().is_none() {
            flags |= flag::END_HEADERS;
        }
        write_header(out, chunk.len(), kind, flags, stream);
        out.extend_from_slice(chunk);
        kind = kind::CONTINUATION;
        flags = 0;
    }
}

/// Appends `body` as DATA frames of at most `max_frame` bytes on `stream`, the last one with END_STREAM when
/// `end_stream`.
pub fn write_data(out: &mut Vec<u8>, stream: u32, body: &[u8], end_stream: bool, max_frame: usize) {
    let mut chunks = body.chunks(max_frame.max(1)).peekable();
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        write_header(out, chunk.len(), kind::DATA, if last && end_stream { flag::END_STREAM } else { 0 }, stream);
        out.extend_from_slice(chunk);
    }
    if body.is_empty() && end_stream {
        write_header(out, 0, kind::DATA, flag::END_STREAM, stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let mut out = Vec::new();
        write_header(&mut out, 70_000, kind::DATA, flag::END_STREAM, 0x7fff_ffff);
        let header = Header::parse(out[..9].try_into().unwrap());
        assert_eq!(header, Header { len: 70_000, kind: kind::DATA, flags: flag::END_STREAM, stream: 0x7fff_ffff });
        assert!(header.has(flag::END_STREAM) && !header.has(flag::PADDED));
    }

    #[test]
    fn large_blocks_continue() {
        let mut out = Vec::new();
        write_headers(&mut out, 3, &[7; 25], true, 10);
        let first = Header::parse(out[..9].try_into().unwrap());
        assert_eq!((first.len, first.kind, first.flags), (10, kind::HEADERS, flag::END_STREAM));
        let second = Header::parse(out[19..28].try_into().unwrap());
        assert_eq!((second.len, second.kind, second.flags), (10, kind::CONTINUATION, 0));
        let third = Header::parse(out[38..47].try_into().unwrap());
        assert_eq!((third.len, third.kind, third.flags), (5, kind::CONTINUATION, flag::END_HEADERS));
        assert_eq!(out.len(), 3 * 9 + 25);
    }

    #[test]
    fn data_is_split_and_ended_once() {
        let mut out = Vec::new();
        write_data(&mut out, 1, &[1; 5], true, 3);
        let first = Header::parse(out[..9].try_into().unwrap());
        let second = Header::parse(out[12..21].try_into().unwrap());
        assert_eq!((first.len, first.flags, second.len, second.flags), (3, 0, 2, flag::END_STREAM));
    }

    #[test]
    fn error_codes_are_named_as_rfc_9113_names_them() {
        assert_eq!(error_name(0), "NO_ERROR");
        assert_eq!(error_name(REFUSED_STREAM), "REFUSED_STREAM");
        assert_eq!(error_name(CANCEL), "CANCEL");
        assert_eq!(error_name(0xd), "HTTP_1_1_REQUIRED");
        assert_eq!(error_name(0xe), "0xe", "the first code without a name");
        assert_eq!(error_name(0xdead_beef), "0xdeadbeef");
    }
}
