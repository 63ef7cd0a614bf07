//! How a request that got no usable HTTP response is classified.
//!
//! HTTP responses with a status of 400 or more are *not* errors of this kind: they are answers, counted apart as
//! HTTP errors. These kinds are transport failures, where no complete response arrived.

use serde::{Deserialize, Serialize};

/// The reason a request failed at the transport level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The server actively refused the TCP connection (nothing listening on the port).
    ConnectRefused,
    /// The TCP connection was not established within `--connect-timeout`.
    ConnectTimeout,
    /// Any other failure to connect (for example no free local port, or an unreachable address).
    ConnectOther,
    /// The complete response did not arrive within `--timeout` of the request being due.
    ReadTimeout,
    /// The connection was reset (RST) while the request was being sent or the response read; over HTTP/3, the
    /// server closed the connection with an error code of its own (H3_EXCESSIVE_LOAD, say).
    Reset,
    /// The server closed the connection (FIN; over HTTP/3, CONNECTION_CLOSE without an error) before the
    /// response was complete.
    Closed,
    /// The response broke the protocol: not valid HTTP/1.x (bad status line, bad headers, bad chunk framing, extra
    /// bytes; a head too large or with too many headers is counted apart), or, over HTTP/2, a frame or header block the client cannot accept (a connection error).
    Malformed,
    /// The response's head (status line and headers) ran past the client's limit of 64 KiB before it ended: the
    /// response may be valid HTTP, but the client will not hold a head that long.
    HeadTooLarge,
    /// The response had more headers than the client's limit of 64 (many `Set-Cookie` lines, say): it may be
    /// valid HTTP, but the client does not read that many.
    TooManyHeaders,
    /// The request was never sent: in the open model, no connection was free within `--timeout` of when it was
    /// due (all were busy and `--max-connections` was reached); in a run that left requests unsent, its
    /// connection was still not ready (connecting, shaking hands, or waiting for a stream) 2 s after sending time
    /// ended. Its waiting time is still recorded as latency.
    NotSent,
    /// Results written before failed checks were counted apart (`failed_checks`): a response that arrived but
    /// failed its check. A response that fails a check is now a response like any other.
    CheckFailed,
    /// HTTPS: the TLS handshake failed (a certificate that does not verify, no common protocol) or a TLS record
    /// was invalid.
    Tls,
    /// HTTP/2: the server reset the stream with REFUSED_STREAM: it did not process the request at all.
    StreamRefused,
    /// HTTP/2: the server reset the stream (RST_STREAM) with any other error code.
    StreamReset,
    /// HTTP/2: the server's GOAWAY left the stream unprocessed; the connection is opened again for what follows.
    Goaway,
    /// HTTP/2: the request body was still waiting for the server's flow-control window at `--timeout`.
    FlowStalled,
    /// The request's URL (a redirect's `Location`, or a value taken from a response) was on another server than
    /// the run's: it was not sent (load goes only where the user said). The hosts are named in `off_origin`.
    OffOrigin,
    /// A redirect past `--max-redirects` hops in a row (a loop, or a chain too long): it was not followed.
    TooManyRedirects,
    /// Interrupted (Ctrl-C, SIGTERM, SIGHUP): the request was still unanswered when the second given to the requests
    /// in flight ran out; or, in a run so overdriven that it left requests unsent, still unanswered 2 s after
    /// sending time ended. The time it had waited by then is its latency: at least that long.
    Unanswered,
}

impl ErrorKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [ErrorKind; 19] = [
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::ConnectOther,
        ErrorKind::ReadTimeout,
        ErrorKind::Reset,
        ErrorKind::Closed,
        ErrorKind::Malformed,
        ErrorKind::HeadTooLarge,
        ErrorKind::TooManyHeaders,
        ErrorKind::NotSent,
        ErrorKind::CheckFailed,
        ErrorKind::Tls,
        ErrorKind::StreamRefused,
        ErrorKind::StreamReset,
        ErrorKind::Goaway,
        ErrorKind::FlowStalled,
        ErrorKind::OffOrigin,
        ErrorKind::TooManyRedirects,
        ErrorKind::Unanswered,
    ];

    /// The snake_case name used in JSON and in the text summary.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::ConnectOther => "connect_other",
            ErrorKind::ReadTimeout => "read_timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::Malformed => "malformed",
            ErrorKind::HeadTooLarge => "head_too_large",
            ErrorKind::TooManyHeaders => "too_many_headers",
            ErrorKind::NotSent => "not_sent",
            ErrorKind::CheckFailed => "check_failed",
            ErrorKind::Tls => "tls",
            ErrorKind::StreamRefused => "stream_refused",
            ErrorKind::StreamReset => "stream_reset",
            ErrorKind::Goaway => "goaway",
            ErrorKind::FlowStalled => "flow_stalled",
            ErrorKind::OffOrigin => "off_origin",
            ErrorKind::TooManyRedirects => "too_many_redirects",
            ErrorKind::Unanswered => "unanswered",
        }
    }

    /// Position of this kind in [`ErrorKind::ALL`], for counters kept in fixed arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// True for failures that happened before any request bytes could be sent.
    pub fn is_connect(self) -> bool {
        matches!(self, ErrorKind::ConnectRefused | ErrorKind::ConnectTimeout | ErrorKind::ConnectOther)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_matches_position_in_all() {
        for (i, kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
    }

    #[test]
    fn serde_name_is_as_str() {
        for kind in ErrorKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
    }
}
