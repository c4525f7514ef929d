//! The size bound every observation keeps, and the sink the renderers write through.
//!
//! A screen comes from a device or an app we do not control: a dump can be a million nodes deep
//! or carry megabytes of text. Every format therefore writes whole units (a line, an element, a
//! node) through a [`Sink`] that refuses the first unit that would take the text past its limit,
//! and everything after it: the text is a prefix of the full rendering, cut at a unit boundary,
//! and the cut is recorded ([`crate::Observation::truncated`]). Rendering is linear in the
//! output: a unit that does not fit is not built further than it takes to see that.

use std::fmt;

/// The largest observation text, in bytes (4 MiB), unless a caller asks for another limit
/// ([`crate::render_with_limit`]). The largest real screens we know render to under 100 kB in any
/// format; 4 MiB is already about a million tokens, more than any model reads.
pub const MAX_OBSERVATION_BYTES: usize = 4 << 20;

/// `sphinx-tree` indents one tab per depth up to this depth, and no further: upstream indents
/// without a bound, which makes the text quadratic in a deep tree's size. Real screens are under
/// 30 levels deep.
pub const MAX_INDENT_DEPTH: usize = 64;

/// Writes whole units to `out` while they fit within `limit` bytes.
pub(crate) struct Sink<'a> {
    out: &'a mut dyn FnMut(&str),
    written: usize,
    limit: usize,
    full: bool,
    scratch: String,
}

impl<'a> Sink<'a> {
    /// A sink writing at most `limit` bytes to `out`.
    pub(crate) fn new(out: &'a mut dyn FnMut(&str), limit: usize) -> Self {
        Sink { out, written: 0, limit, full: false, scratch: String::new() }
    }

    /// Writes the unit `write` produces if it fits with `reserve` bytes left over (for what must
    /// still follow it, such as a closing bracket); otherwise writes nothing, now or later, and
    /// returns false.
    pub(crate) fn unit(
        &mut self,
        reserve: usize,
        write: impl FnOnce(&mut dyn fmt::Write) -> fmt::Result,
    ) -> bool {
        if self.full {
            return false;
        }
        let room = self.limit.saturating_sub(self.written).saturating_sub(reserve);
        self.scratch.clear();
        let ok = write(&mut Capped { buf: &mut self.scratch, room }).is_ok() && self.scratch.len() <= room;
        if !ok {
            self.full = true;
            return false;
        }
        self.emit_scratch();
        true
    }

    /// Writes `text` whatever the limit: only for the few bytes a unit reserved.
    pub(crate) fn reserved(&mut self, text: &str) {
        (self.out)(text);
        self.written = self.written.saturating_add(text.len());
    }

    fn emit_scratch(&mut self) {
        (self.out)(&self.scratch);
        self.written = self.written.saturating_add(self.scratch.len());
    }

    /// Whether a unit was refused.
    pub(crate) fn truncated(&self) -> bool {
        self.full
    }

    /// Bytes written so far.
    pub(crate) fn written(&self) -> usize {
        self.written
    }
}

/// A `fmt::Write` into a buffer that fails once the buffer would grow past `room` bytes, so a
/// unit too large to fit is abandoned early instead of being built whole.
struct Capped<'b> {
    buf: &'b mut String,
    room: usize,
}

impl fmt::Write for Capped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.buf.len().saturating_add(s.len()) > self.room {
            return Err(fmt::Error);
        }
        self.buf.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_written_whole_until_one_does_not_fit() {
        let mut text = String::new();
        let mut push = |s: &str| text.push_str(s);
        let mut sink = Sink::new(&mut push, 10);
        assert!(sink.unit(0, |w| w.write_str("abcd")));
        assert!(sink.unit(1, |w| w.write_str("efgh")));
        // 8 written, 1 reserved: "ij" does not fit, and nothing after it is written.
        assert!(!sink.unit(1, |w| w.write_str("ij")));
        assert!(!sink.unit(0, |w| w.write_str("k")));
        assert!(sink.truncated());
        sink.reserved("]");
        assert_eq!(sink.written(), 9);
        assert_eq!(text, "abcdefgh]");
    }
}
