//! How close a rebuilt app is to its recording, measured on the simulated phone:
//!
//! - **screens**: each generated screen is opened and its UI tree compared with the recorded
//!   screen it copies, by the same structural similarity that decides page identity
//!   (`phonebench_traces::analyze::similarity`: weighted Jaccard of element tokens);
//! - **transitions**: each recorded transition between two pages of the app that a tap caused
//!   is replayed: open the source screen, find the recorded element on the generated screen (by
//!   id, text, description), tap it, and check that the target screen is in front. When the
//!   source screen cannot be opened on its own (a dialog that closes back to its opener), it is
//!   reached through the recorded transition into it first. Transitions by keys or app
//!   launches are counted apart: a rebuilt app does not decide them.

use std::collections::BTreeMap;
use std::path::Path;

use phonebench_actions::{Action, Point, Target};
use phonebench_apps::{AppPackage, Catalog};
use phonebench_phone::{Phone, PhoneConfig};
use phonebench_traces::analyze::{similarity, structure};
use phonebench_traces::read::find_element;
use phonebench_traces::{ElementRef, Trace};
use phonebench_uitree::UiTree;
use serde::Serialize;

use crate::SynthError;
use crate::app::{SynthApp, SynthTransition};

/// One generated screen compared with its recording.
#[derive(Debug, Clone, Serialize)]
pub struct ScreenFidelity {
    /// Screen name.
    pub screen: String,
    /// Structural similarity to the recorded screen (0–1).
    pub similarity: f64,
    /// Why it could not be opened, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One recorded transition replayed.
#[derive(Debug, Clone, Serialize)]
pub struct TransitionCheck {
    /// From screen.
    pub from: String,
    /// To screen.
    pub to: String,
    /// Whether the generated app went there.
    pub reproduced: bool,
    /// What happened instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The figures.
#[derive(Debug, Clone, Serialize)]
pub struct Fidelity {
    /// Per screen.
    pub screens: Vec<ScreenFidelity>,
    /// Mean structural similarity over the screens that opened.
    pub mean_similarity: f64,
    /// Screens that opened without an error.
    pub screens_open: usize,
    /// Tap transitions replayed.
    pub transitions: Vec<TransitionCheck>,
    /// Of those, reproduced.
    pub reproduced: usize,
    /// Recorded transitions by keys or launches (not replayed).
    pub not_replayable: usize,
}

impl Fidelity {
    /// Share of tap transitions reproduced (1 when there are none).
    pub fn transition_share(&self) -> f64 {
        if self.transitions.is_empty() { 1.0 } else { self.reproduced as f64 / self.transitions.len() as f64 }
    }
}

/// A phone with only the package at `dir`.
pub fn phone_for(dir: &Path) -> Result<Phone, SynthError> {
    let package = AppPackage::load(dir).map_err(|e| SynthError::Load(e.to_string()))?;
    let catalog = Catalog::new(vec![package]).map_err(|e| SynthError::Load(e.to_string()))?;
    Phone::new(catalog, PhoneConfig::default()).map_err(|e| SynthError::Load(e.to_string()))
}

/// The crash dialog's message, if the screen failed to render.
pub fn crash_message(tree: &UiTree) -> Option<String> {
    tree.iter().find(|(_, n)| n.text.contains("keeps stopping")).map(|(_, _)| {
        tree.iter()
            .filter(|(_, n)| n.resource_id == "android:id/message")
            .map(|(_, n)| n.text.clone())
            .next()
            .unwrap_or_else(|| "the screen keeps stopping".into())
    })
}

fn tap(phone: &mut Phone, element: &ElementRef) -> Result<(), String> {
    let tree = phone.tree().map_err(|e| e.to_string())?.clone();
    let element = ElementRef { bounds: None, ..element.clone() };
    let node = find_element(&tree, &element)
        .ok_or_else(|| format!("no element like `{}` on the screen", element.label()))?;
    let (x, y) = tree.node(node).bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).map_err(|e| e.to_string())?;
    Ok(())
}

fn screen_now(phone: &Phone) -> String {
    phone.current_screen().map(|(_, s)| s.to_string()).unwrap_or_else(|| "(no app in front)".into())
}

/// Measures a generated app (see the module doc).
pub fn measure(app: &SynthApp, traces: &[Trace]) -> Result<Fidelity, SynthError> {
    let mut phone = phone_for(&app.dir)?;
    let none = BTreeMap::new();
    let mut screens = Vec::new();
    for s in &app.screens {
        let (t, i) = s.representative;
        let recorded = structure(&traces[t].screens[i].tree);
        let opened = phone
            .reset()
            .map_err(|e| e.to_string())
            .and_then(|_| phone.start_app(&app.id, Some(&s.name), &none).map_err(|e| e.to_string()));
        let result = opened.and_then(|_| phone.tree().cloned().map_err(|e| e.to_string()));
        match result {
            Ok(tree) => match crash_message(&tree) {
                Some(message) => screens.push(ScreenFidelity {
                    screen: s.name.clone(),
                    similarity: 0.0,
                    error: Some(message),
                }),
                None => screens.push(ScreenFidelity {
                    screen: s.name.clone(),
                    similarity: similarity(&structure(&tree), &recorded),
                    error: None,
                }),
            },
            Err(e) => {
                screens.push(ScreenFidelity { screen: s.name.clone(), similarity: 0.0, error: Some(e) })
            }
        }
    }
    let open: Vec<&ScreenFidelity> = screens.iter().filter(|s| s.error.is_none()).collect();
    let mean_similarity = if open.is_empty() {
        0.0
    } else {
        open.iter().map(|s| s.similarity).sum::<f64>() / open.len() as f64
    };
    let mut transitions = Vec::new();
    let mut not_replayable = 0;
    for tr in &app.transitions {
        let Some(trigger) =
            tr.trigger.as_ref().filter(|_| matches!(tr.action.as_str(), "tap" | "long_press" | "double_tap"))
        else {
            not_replayable += 1;
            continue;
        };
        let check = replay(&mut phone, app, tr, trigger, &app.transitions);
        transitions.push(check);
    }
    let reproduced = transitions.iter().filter(|t| t.reproduced).count();
    Ok(Fidelity {
        screens_open: open.len(),
        screens,
        mean_similarity,
        transitions,
        reproduced,
        not_replayable,
    })
}

fn replay(
    phone: &mut Phone,
    app: &SynthApp,
    tr: &SynthTransition,
    trigger: &ElementRef,
    all: &[SynthTransition],
) -> TransitionCheck {
    let none = BTreeMap::new();
    let attempt = |phone: &mut Phone, via: Option<&SynthTransition>| -> Result<String, String> {
        phone.reset().map_err(|e| e.to_string())?;
        match via {
            None => phone.start_app(&app.id, Some(&tr.from), &none).map_err(|e| e.to_string())?,
            Some(v) => {
                phone.start_app(&app.id, Some(&v.from), &none).map_err(|e| e.to_string())?;
                tap(phone, v.trigger.as_ref().ok_or("no trigger")?)?;
                if screen_now(phone) != tr.from {
                    return Err(format!("could not reach {} (at {})", tr.from, screen_now(phone)));
                }
            }
        }
        tap(phone, trigger)?;
        Ok(screen_now(phone))
    };
    let mut note = None;
    match attempt(phone, None) {
        Ok(screen) if screen == tr.to => {
            return TransitionCheck {
                from: tr.from.clone(),
                to: tr.to.clone(),
                reproduced: true,
                note: None,
            };
        }
        Ok(screen) => note = Some(format!("went to {screen}")),
        Err(e) => note = Some(e).or(note),
    }
    // Through a recorded way into the source screen.
    for via in all.iter().filter(|v| v.to == tr.from && v.from != tr.from && v.trigger.is_some() && v.wired) {
        match attempt(phone, Some(via)) {
            Ok(screen) if screen == tr.to => {
                return TransitionCheck {
                    from: tr.from.clone(),
                    to: tr.to.clone(),
                    reproduced: true,
                    note: Some(format!("reached through {}", via.from)),
                };
            }
            Ok(screen) => {
                note = Some(format!("{}; through {}: went to {screen}", note.unwrap_or_default(), via.from))
            }
            Err(e) => note = Some(format!("{}; through {}: {e}", note.unwrap_or_default(), via.from)),
        }
    }
    TransitionCheck { from: tr.from.clone(), to: tr.to.clone(), reproduced: false, note }
}
