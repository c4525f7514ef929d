//! The cursor and selection of text fields: a tap places the cursor at the character nearest
//! the touch (measured with the same fonts layout and screenshots use), typing inserts there or
//! replaces the selection, Backspace and Delete remove around it, the cursor keys move it, and
//! "Select all" selects the whole text. Positions are in characters; a field nobody placed a
//! cursor in has it at the end (Android puts it there when a field gains focus).

use phonebench_text::{Fonts, TextStyle};

use crate::phone::{MAX_FIELD_CHARS, Outcome, Phone, PhoneError, admit_text};
use crate::render::NodeInfo;

impl Phone {
    /// Field `field`'s selection on the top screen, ordered and within its text.
    pub(crate) fn selection_of(&self, field: &str) -> (usize, usize) {
        let len = self.field_text(field).chars().count();
        match self.top_frame().and_then(|f| f.selection.get(field)) {
            Some(&(a, b)) => (a.min(b).min(len), a.max(b).min(len)),
            None => (len, len),
        }
    }

    pub(crate) fn set_selection(&mut self, field: &str, start: usize, end: usize) {
        if let Some(frame) = self.top_frame_mut() {
            frame.selection.insert(field.to_string(), (start, end));
        }
    }

    /// A tap on text field `info` at `point`: the cursor goes to the nearest character boundary.
    pub(crate) fn place_cursor(&mut self, info: &NodeInfo, point: (i32, i32)) {
        let Some(field) = info.id.clone() else { return };
        let text = self.field_text(&field);
        let Some(screen) = &self.screen else { return };
        let Some(index) = screen.infos.iter().position(|i| i == info) else { return };
        let Some(paint) = screen.paints.get(index) else { return };
        let Some(look) = paint.text else { return };
        let content = paint.content;
        if text.is_empty() {
            self.set_selection(&field, 0, 0);
            return;
        }
        let style =
            TextStyle { size_px: look.size_px, bold: look.bold, line_height: phonebench_pixels::LINE_HEIGHT };
        let x = (point.0 as f32 - content.x).max(0.0);
        // A single-line field draws its line centred; taps anywhere on it hit that line.
        let multiline = info.input == crate::view::InputType::Multiline || text.contains('\n');
        let y = if multiline { (point.1 as f32 - content.y).max(0.0) } else { look.size_px * 0.6 };
        let width = multiline.then_some(content.w.max(1.0));
        let offset = {
            let mut fonts = Fonts::lock_shared();
            let Some(buffer) = fonts.layout(&text, &style, width) else { return };
            match buffer.hit(x, y) {
                Some(cursor) => {
                    // Lines of the buffer are the text's hard lines; `index` is a byte in one.
                    let mut chars = 0;
                    for (i, line) in text.split('\n').enumerate() {
                        if i == cursor.line {
                            chars +=
                                line.get(..cursor.index.min(line.len())).map_or(0, |s| s.chars().count());
                            break;
                        }
                        chars += line.chars().count() + 1;
                    }
                    chars
                }
                None => text.chars().count(),
            }
        };
        self.set_selection(&field, offset, offset);
    }

    /// Typing into the focused field `field`: `typed` replaces the selection (or goes in at the
    /// cursor), and the cursor follows it.
    pub(crate) fn insert_text(
        &mut self,
        field: &str,
        typed: &str,
        clear: bool,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        let text = if clear { String::new() } else { self.field_text(field) };
        let (start, end) = if clear { (0, 0) } else { self.selection_of(field) };
        let before: String = text.chars().take(start).collect();
        let after: String = text.chars().skip(end).collect();
        let head = admit_text(before, typed, outcome);
        let cursor = head.chars().count();
        let mut value = head + &after;
        if value.chars().count() > MAX_FIELD_CHARS {
            value = value.chars().take(MAX_FIELD_CHARS).collect();
        }
        self.set_field(field, value, outcome)?;
        self.set_selection(field, cursor.min(MAX_FIELD_CHARS), cursor.min(MAX_FIELD_CHARS));
        Ok(())
    }

    /// Backspace (`forward` false) or Delete (`forward` true) in field `field`: the selection
    /// goes, or the character before (after) the cursor.
    pub(crate) fn delete_text(
        &mut self,
        field: &str,
        forward: bool,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        let text = self.field_text(field);
        let len = text.chars().count();
        let (mut start, mut end) = self.selection_of(field);
        if start == end {
            if forward {
                end = (end + 1).min(len);
            } else {
                start = start.saturating_sub(1);
            }
        }
        let value: String = text.chars().take(start).chain(text.chars().skip(end)).collect();
        self.set_field(field, value, outcome)?;
        self.set_selection(field, start, start);
        Ok(())
    }

    /// The cursor keys (`MOVE_HOME`, `MOVE_END`, `DPAD_LEFT`, `DPAD_RIGHT`); false for others.
    pub(crate) fn move_cursor(&mut self, code: &str) -> bool {
        let Some(field) = self.top_frame().and_then(|f| f.focused.clone()) else { return false };
        let len = self.field_text(&field).chars().count();
        let (start, end) = self.selection_of(&field);
        let to = match code {
            "MOVE_HOME" => 0,
            "MOVE_END" => len,
            "DPAD_LEFT" if start != end => start,
            "DPAD_LEFT" => start.saturating_sub(1),
            "DPAD_RIGHT" if start != end => end,
            "DPAD_RIGHT" => (end + 1).min(len),
            _ => return false,
        };
        self.set_selection(&field, to, to);
        true
    }

    /// The selected text of `field`, or all of it when nothing is selected.
    pub(crate) fn selected_text(&self, field: &str) -> String {
        let (start, end) = self.selection_of(field);
        let text = self.field_text(field);
        if start == end { text } else { text.chars().skip(start).take(end - start).collect() }
    }
}
