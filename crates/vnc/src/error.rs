//! The one error type of both ends.

use std::io;

/// What went wrong talking RFB. Every variant says what we were doing.
#[derive(Debug, thiserror::Error)]
pub enum VncError {
    /// The socket failed (connection refused, reset, closed early...).
    #[error("VNC: {doing}: {source}")]
    Io {
        /// What we were doing, e.g. "reading ServerInit".
        doing: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The peer did not answer in time.
    #[error("VNC: timed out {doing}")]
    Timeout {
        /// What we were waiting for.
        doing: String,
    },
    /// The peer broke the protocol (unknown message or encoding, bad length, bad version...).
    #[error("VNC protocol: {0}")]
    Protocol(String),
    /// Authentication failed; the server's reason when it gave one.
    #[error("VNC authentication failed: {0}")]
    AuthFailed(String),
    /// The screen being served failed to give its picture.
    #[error("VNC screen: {0}")]
    Screen(String),
}

impl VncError {
    /// An I/O error while `doing`, with timeouts (`WouldBlock`/`TimedOut`) as [`VncError::Timeout`].
    pub(crate) fn io(doing: &str, source: io::Error) -> VncError {
        match source.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                VncError::Timeout { doing: doing.to_string() }
            }
            _ => VncError::Io { doing: doing.to_string(), source },
        }
    }

    /// Whether this is the peer closing the connection (clean end of a session).
    pub fn is_eof(&self) -> bool {
        matches!(self, VncError::Io { source, .. } if source.kind() == io::ErrorKind::UnexpectedEof)
    }
}
