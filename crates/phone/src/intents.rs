//! Intents between apps: the share sheet (`share` steps; apps accept with `[share]`) and pick
//! and return (`pick` asks an app with `[pick]` to choose something, its `return` step hands the
//! values back to the asking app's action), as Android's `ACTION_SEND` and `ACTION_GET_CONTENT`.

use std::collections::BTreeMap;

use minijinja::Value;

use crate::phone::{Foreground, Frame, Outcome, Overlay, Phone, PhoneError};

/// A `pick` in progress: kept on the frame of the screen opened to pick.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PickRequest {
    /// The app that asked.
    pub from: usize,
    /// Its action that receives what is picked.
    pub action: String,
    /// The event arguments of the asking action (the action receives them too).
    pub args: BTreeMap<String, Value>,
}

/// Values a `return` step handed back: run `action` in `app` (now in front) once the returning
/// action has ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PendingReturn {
    pub app: usize,
    pub action: String,
    pub args: BTreeMap<String, Value>,
}

/// One entry of the chooser sheet.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ChooserTarget {
    /// Run app `app`'s `[share]` action with the shared values.
    Share { app: usize, values: BTreeMap<String, Value> },
    /// Open app `app`'s `[pick]` screen for the request.
    Pick { app: usize, request: PickRequest, mime: String },
    /// The share sheet's Copy: put the text on the clipboard.
    Copy(String),
}

/// The MIME type of shared values: the `mime` given, else text for a text.
fn share_mime(values: &BTreeMap<String, Value>) -> String {
    match values.get("mime").and_then(|v| v.as_str().map(str::to_string)) {
        Some(m) if !m.is_empty() => m,
        _ if values.get("file").is_some_and(|f| !f.is_none() && !f.is_undefined()) => "*/*".into(),
        _ => "text/plain".into(),
    }
}

impl Phone {
    /// A `share` step of app `from`: the share sheet lists every app that accepts the type.
    pub(crate) fn share(&mut self, from: usize, values: BTreeMap<String, Value>, outcome: &mut Outcome) {
        let mime = share_mime(&values);
        let mut targets: Vec<(String, String, ChooserTarget)> = Vec::new();
        for (i, app) in self.apps.iter().enumerate() {
            if app.package.manifest.share.as_ref().is_some_and(|f| f.accepts(&mime)) {
                let m = &app.package.manifest;
                targets.push((
                    m.name.clone(),
                    m.icon.clone(),
                    ChooserTarget::Share { app: i, values: values.clone() },
                ));
            }
        }
        let text = values.get("text").and_then(|t| t.as_str().map(str::to_string)).filter(|t| !t.is_empty());
        if let Some(text) = &text {
            targets.push(("Copy".into(), "content_copy".into(), ChooserTarget::Copy(text.clone())));
        }
        if targets.is_empty() {
            outcome.notes.push(format!("no app accepts `{mime}` from the share sheet"));
            let package = self.apps[from].package.manifest.package.clone();
            self.show_toast("No apps can perform this action".into(), package);
            return;
        }
        self.keyboard = false;
        self.overlay = Some(Overlay::Chooser { title: "Share".into(), preview: text, targets });
    }

    /// A `pick` step of app `from`: the app that picks opens directly when there is one, else a
    /// chooser lists them.
    pub(crate) fn pick(&mut self, from: usize, mime: String, request: PickRequest, outcome: &mut Outcome) {
        let providers: Vec<usize> = (0..self.apps.len())
            .filter(|&i| self.apps[i].package.manifest.pick.as_ref().is_some_and(|f| f.accepts(&mime)))
            .collect();
        match providers.as_slice() {
            [] => {
                outcome.notes.push(format!("no app can pick `{mime}`"));
                let package = self.apps[from].package.manifest.package.clone();
                self.show_toast("No app can perform this action".into(), package);
            }
            [only] => self.open_picker(*only, request, mime),
            many => {
                let targets = many
                    .iter()
                    .map(|&i| {
                        let m = &self.apps[i].package.manifest;
                        (
                            m.name.clone(),
                            m.icon.clone(),
                            ChooserTarget::Pick { app: i, request: request.clone(), mime: mime.clone() },
                        )
                    })
                    .collect();
                self.keyboard = false;
                self.overlay =
                    Some(Overlay::Chooser { title: "Complete action using".into(), preview: None, targets });
            }
        }
    }

    /// Opens app `app`'s pick screen for `request` (back returns to the asking app).
    fn open_picker(&mut self, app: usize, request: PickRequest, mime: String) {
        let Some(screen) = self.apps[app].package.manifest.pick.as_ref().and_then(|f| f.screen.clone())
        else {
            return;
        };
        let from = request.from;
        let mut frame = Frame::new(&screen, BTreeMap::from([("mime".to_string(), Value::from(mime))]));
        frame.opened_from = Some(from);
        frame.pick = Some(request);
        self.apps[app].stack.push(frame);
        self.switch_to(app);
    }

    /// The chooser's entry `i` was tapped.
    pub(crate) fn choose(&mut self, i: usize, outcome: &mut Outcome) -> Result<(), PhoneError> {
        let Some(Overlay::Chooser { targets, .. }) = self.overlay.take() else { return Ok(()) };
        let Some((_, _, target)) = targets.into_iter().nth(i) else { return Ok(()) };
        match target {
            ChooserTarget::Copy(text) => {
                self.clipboard = Some(text);
                let package = match self.foreground {
                    Foreground::App(a) => self.apps[a].package.manifest.package.clone(),
                    _ => crate::system::SYSTEMUI.to_string(),
                };
                self.show_toast("Copied".into(), package);
            }
            ChooserTarget::Pick { app, request, mime } => self.open_picker(app, request, mime),
            ChooserTarget::Share { app, values } => {
                let Some(action) =
                    self.apps[app].package.manifest.share.as_ref().and_then(|f| f.action.clone())
                else {
                    return Ok(());
                };
                let from = match self.foreground {
                    Foreground::App(a) if a != app => Some(a),
                    _ => None,
                };
                self.launch(app);
                if from.is_some() {
                    self.apps[app].return_to = from;
                }
                self.run_action(&action, values, outcome)?;
            }
        }
        Ok(())
    }

    /// A `return` step in app `app`: closes the screens opened to pick (and any above them)
    /// and brings the asking app back; its action runs once this action has ended.
    pub(crate) fn return_picked(
        &mut self,
        app: usize,
        values: BTreeMap<String, Value>,
    ) -> Result<(), String> {
        let stack = &mut self.apps[app].stack;
        let Some(at) = stack.iter().rposition(|f| f.pick.is_some()) else {
            return Err("`return` ran on a screen that was not opened by another app's `pick`".into());
        };
        let request = stack[at].pick.clone().ok_or("no pick request")?;
        stack.truncate(at);
        let mut args = request.args;
        args.extend(values);
        self.keyboard = false;
        self.overlay = None;
        self.switch_to(request.from);
        self.pending_return = Some(PendingReturn { app: request.from, action: request.action, args });
        Ok(())
    }

    /// Runs the asking app's action with what a `return` handed back (after the returning
    /// action ended, so a failure is the asking app's own).
    pub(crate) fn finish_return(&mut self, outcome: &mut Outcome) -> Result<(), PhoneError> {
        if let Some(pending) = self.pending_return.take() {
            if self.foreground != Foreground::App(pending.app) {
                self.switch_to(pending.app);
            }
            self.run_action(&pending.action, pending.args, outcome)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_values_name_their_type() {
        let v = |pairs: &[(&str, &str)]| -> BTreeMap<String, Value> {
            pairs.iter().map(|(k, v)| (k.to_string(), Value::from(*v))).collect()
        };
        assert_eq!(share_mime(&v(&[("text", "hi")])), "text/plain");
        assert_eq!(share_mime(&v(&[("file", "3"), ("mime", "image/jpeg")])), "image/jpeg");
        assert_eq!(share_mime(&v(&[("file", "3")])), "*/*");
    }
}
