//! The simulated phone behind an RFB (VNC) server: `phonebench vnc-server`.
//!
//! [`VncPhone`] is the [`RfbScreen`] the server shows: the picture is the episode's screenshot
//! (the same pixels `phonebench screenshot` writes), and what a VNC client does becomes agent
//! actions of the episode, so a pixels-only agent built for VNC is scored like any other:
//! - button 1 pressed and released becomes a tap, a long press or a swipe (by distance and the
//!   time it was held, [`GestureTracker`]); the scroll wheel becomes a scroll at the pointer;
//! - printable keys are gathered into one `type` action, typed when anything else happens, when
//!   the client asks for the whole screen, or [`TYPING_PAUSE`] after the last key (viewers keep
//!   asking for changes all the time; a human's typing is not cut at every key); Return,
//!   BackSpace, Delete and Tab are those keys, Escape is Back and Home is Home; modifier keys
//!   alone do nothing;
//! - with [`VncPhone::answer_from_clipboard`], text the client puts on its clipboard
//!   (ClientCutText) is the episode's answer, which ends it (off by default: many viewers send
//!   the local clipboard unasked).
//!
//! The episode ends when the client leaves ([`VncPhone::finish`] says the agent is done) or when
//! its own rules end it (step budget, repetition); input after that is ignored and the last
//! screen stays on show. When our side fails (the screen cannot be drawn),
//! [`VncPhone::fail`] ends it unscored instead.

use std::sync::Arc;

use phonebench_actions::{Action, Direction, FinishStatus, Key, Point, Swipe, Target};
use phonebench_vnc::{Gesture, GestureTracker, RfbScreen, char_for_keysym, keysym};
use serde_json::{Value, json};

use crate::session::{Acted, PhoneSession, verdict_json};

/// Most bytes of typed text gathered before they are typed as one action.
const MAX_PENDING_TEXT: usize = 4096;

/// Typed text waits this long after its last key before it is typed, unless something else
/// happens first.
pub const TYPING_PAUSE: std::time::Duration = std::time::Duration::from_millis(400);

/// The phone an RFB server shows: one episode (a task's or a free phone's).
pub struct VncPhone {
    session: PhoneSession,
    runtime: Arc<tokio::runtime::Runtime>,
    size: (u16, u16),
    gestures: GestureTracker,
    /// Printable keys not typed yet.
    pending_text: String,
    /// When the last of them came.
    last_key: Option<std::time::Instant>,
    /// Clipboard text is the answer.
    clipboard_answer: bool,
    /// A client got past the handshake.
    connected: bool,
    /// Changes whenever the screen may have: after every action.
    version: u64,
    /// The picture of `version`, once drawn.
    picture: Option<(u64, Arc<Vec<u8>>)>,
    /// One line per action taken, for the log.
    turns: Vec<Value>,
    name: String,
}

impl VncPhone {
    /// Shows `session`'s episode (installed already); `runtime` runs its MCP calls and the
    /// episode's end. Fails when the screen cannot be drawn or is too large for RFB.
    pub fn new(
        session: PhoneSession,
        runtime: Arc<tokio::runtime::Runtime>,
        name: String,
    ) -> Result<VncPhone, String> {
        let mut phone = VncPhone {
            session,
            runtime,
            size: (0, 0),
            gestures: GestureTracker::default(),
            pending_text: String::new(),
            last_key: None,
            clipboard_answer: false,
            connected: false,
            version: 0,
            picture: None,
            turns: Vec::new(),
            name,
        };
        let pixmap = phone.session.screen_pixmap(false)?;
        let too_large = |n: u32| format!("the screen ({n} px) is larger than RFB's 65535");
        phone.size = (
            u16::try_from(pixmap.width()).map_err(|_| too_large(pixmap.width()))?,
            u16::try_from(pixmap.height()).map_err(|_| too_large(pixmap.height()))?,
        );
        // The first client's first picture: already drawn, kept rather than taken again.
        phone.picture = Some((phone.version, Arc::new(pixmap.take())));
        Ok(phone)
    }

    /// The session (its verdict once the episode ended).
    pub fn session(&self) -> &PhoneSession {
        &self.session
    }

    /// Makes text the client puts on its clipboard the episode's answer (which ends it).
    pub fn answer_from_clipboard(mut self, on: bool) -> VncPhone {
        self.clipboard_answer = on;
        self
    }

    /// Whether a client got past the handshake (one that did not has not touched the episode).
    pub fn connected(&self) -> bool {
        self.connected
    }

    /// Ends the episode unscored: our side failed (`why`), not the agent.
    pub fn fail(&mut self, why: String) {
        self.runtime.block_on(self.session.end_unscored(why));
        self.version += 1;
    }

    /// Closes the episode's task servers.
    pub fn close(mut self) {
        self.runtime.block_on(self.session.close());
    }

    /// The actions taken so far, with what came of each, as JSON lines' values.
    pub fn turns(&self) -> &[Value] {
        &self.turns
    }

    /// Ends the episode as the agent's own finish (typing what is pending first) unless it has
    /// ended already; the verdict (or why there is none) as JSON.
    pub fn finish(&mut self) -> Value {
        self.flush_text();
        if self.session.episode().is_some() {
            self.act(Action::Finish { status: FinishStatus::Complete, reason: None });
        }
        let steps = self.session.steps_taken();
        match (self.session.task(), self.session.verdict(), self.session.unscored()) {
            (Some(task), Some(verdict), _) => {
                let mut v = verdict_json(task, verdict);
                v["event"] = json!("verdict");
                v["steps"] = json!(steps);
                v
            }
            (_, _, Some(why)) => json!({ "event": "unscored", "why": why, "steps": steps }),
            _ => {
                json!({ "event": "ended", "steps": steps, "end": crate::session::end_text(self.session.end()) })
            }
        }
    }

    /// Takes one action in the episode (nothing once it is over).
    fn act(&mut self, action: Action) {
        if self.session.episode().is_none() {
            return;
        }
        // The canonical JSON is what the trajectory records as the agent's words.
        let raw = serde_json::to_string(&action).unwrap_or_default();
        let acted = self.runtime.block_on(self.session.act(raw, Ok(action.clone())));
        self.version += 1;
        let outcome = match acted {
            Acted::Going { message, .. } => json!({ "going": true, "message": message }),
            Acted::Over { message, .. } => json!({ "going": false, "message": message }),
            Acted::Unscored(why) => json!({ "going": false, "unscored": why }),
            Acted::NoEpisode(why) => json!({ "going": false, "message": why }),
        };
        self.turns.push(json!({ "event": "action", "action": action, "outcome": outcome }));
    }

    fn flush_text(&mut self) {
        self.last_key = None;
        if !self.pending_text.is_empty() {
            let text = std::mem::take(&mut self.pending_text);
            self.act(Action::Type { text, target: None, clear: false, enter: false });
        }
    }

    fn gesture(&mut self, gesture: Gesture) {
        self.flush_text();
        let point = |x: u16, y: u16| Target::Point(Point { x: i32::from(x), y: i32::from(y) });
        let action = match gesture {
            Gesture::Tap { x, y } => Action::Tap { target: point(x, y) },
            Gesture::LongPress { x, y } => Action::LongPress { target: point(x, y) },
            Gesture::Swipe { from, to, .. } => Action::Swipe(Swipe::Between {
                from: Point { x: i32::from(from.0), y: i32::from(from.1) },
                to: Point { x: i32::from(to.0), y: i32::from(to.1) },
            }),
            Gesture::Scroll { x, y, down } => Action::Scroll {
                direction: if down { Direction::Down } else { Direction::Up },
                target: Some(point(x, y)),
            },
        };
        self.act(action);
    }
}

impl RfbScreen for VncPhone {
    fn size(&self) -> (u16, u16) {
        self.size
    }

    fn picture(&mut self) -> Result<(u64, Arc<Vec<u8>>), String> {
        if self.last_key.is_some_and(|t| t.elapsed() >= TYPING_PAUSE) {
            self.flush_text();
        }
        if let Some((version, picture)) = &self.picture
            && *version == self.version
        {
            return Ok((*version, Arc::clone(picture)));
        }
        let pixmap = self.session.screen_pixmap(false)?;
        if (pixmap.width(), pixmap.height()) != (u32::from(self.size.0), u32::from(self.size.1)) {
            return Err(format!(
                "the screen changed size to {}x{}, which this server does not announce",
                pixmap.width(),
                pixmap.height()
            ));
        }
        // Every pixel is opaque, so tiny-skia's premultiplied RGBA is plain RGBA.
        let picture = Arc::new(pixmap.take());
        self.picture = Some((self.version, Arc::clone(&picture)));
        Ok((self.version, picture))
    }

    fn pointer(&mut self, x: u16, y: u16, buttons: u8) {
        let now = std::time::Instant::now();
        if let Some(gesture) = self.gestures.pointer(x, y, buttons, now) {
            self.gesture(gesture);
        }
    }

    fn key(&mut self, keysym: u32, down: bool) {
        if !down {
            return;
        }
        let key = match keysym {
            keysym::RETURN | keysym::KP_ENTER => Key::Enter,
            keysym::BACKSPACE => Key::Backspace,
            keysym::DELETE => Key::Delete,
            keysym::TAB => Key::Tab,
            keysym::ESCAPE => Key::Back,
            keysym::HOME => Key::Home,
            _ => {
                if let Some(c) = char_for_keysym(keysym).filter(|c| !c.is_control()) {
                    self.pending_text.push(c);
                    self.last_key = Some(std::time::Instant::now());
                    // A client that types without ever looking is typed for in bounded pieces.
                    if self.pending_text.len() >= MAX_PENDING_TEXT {
                        self.flush_text();
                    }
                }
                // Modifiers, function keys and the rest: nothing on a phone.
                return;
            }
        };
        self.flush_text();
        self.act(Action::Key { key });
    }

    fn cut_text(&mut self, text: &str) {
        if self.clipboard_answer {
            self.flush_text();
            self.act(Action::Answer { text: text.to_string() });
        }
    }

    fn connected(&mut self) {
        self.connected = true;
    }

    fn full_update_requested(&mut self) {
        // A client asking to see the screen now sees what it typed.
        self.flush_text();
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
