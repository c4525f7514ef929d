//! Android's date and time picker dialogs (`date_picker` / `time_picker` steps) and the text
//! field of an input dialog: their state while open, the views the phone builds for them, and
//! what their buttons do. OK runs the app's action with `:value` (`YYYY-MM-DD` / `HH:MM`); the
//! action also receives the event arguments of the action that opened the picker.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate};
use minijinja::Value;
use phonebench_pixels::Role;

use crate::display::Display;
use crate::phone::{Outcome, Overlay, Phone, PhoneError};
use crate::view::{Align, Axis, Dim, Edges, Handler, InputType, Kind, SystemHandler, TextLook, View};

/// An open date picker: the month shown and the day selected.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DatePicker {
    pub title: Option<String>,
    /// The month shown: (year, month 1–12).
    pub shown: (i32, u32),
    pub selected: NaiveDate,
    pub action: String,
    pub args: BTreeMap<String, Value>,
}

/// An open time picker in its text-input mode.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimePicker {
    pub title: Option<String>,
    pub hour: String,
    pub minute: String,
    /// Which field takes typing: 0 hour, 1 minute.
    pub field: u8,
    pub is24: bool,
    /// 12-hour mode: PM is chosen.
    pub pm: bool,
    pub error: Option<String>,
    pub action: String,
    pub args: BTreeMap<String, Value>,
    /// The focused field's text is selected, as Android selects it on focus: typing replaces it.
    pub fresh: bool,
}

/// Parses `YYYY-MM-DD`.
pub(crate) fn parse_date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()
}

/// Parses `HH:MM` (24-hour) into (hour, minute).
pub(crate) fn parse_time(text: &str) -> Option<(u32, u32)> {
    let (h, m) = text.trim().split_once(':')?;
    let (h, m): (u32, u32) = (h.trim().parse().ok()?, m.trim().parse().ok()?);
    (h < 24 && m < 60).then_some((h, m))
}

fn days_in_month(year: i32, month: u32) -> u32 {
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)
    };
    match (NaiveDate::from_ymd_opt(year, month, 1), next) {
        (Some(first), Some(next)) => (next - first).num_days() as u32,
        _ => 30,
    }
}

impl Phone {
    /// The text an overlay's field holds, when an overlay with a text field is open (the
    /// input dialog's field, the time picker's focused field): typing goes there.
    pub(crate) fn overlay_text_mut(&mut self) -> Option<&mut String> {
        match &mut self.overlay {
            Some(Overlay::Dialog { input: Some(text), .. }) => Some(text),
            Some(Overlay::TimePicker(p)) => {
                if std::mem::take(&mut p.fresh) {
                    // The selected text goes at the first key.
                    if p.field == 0 { p.hour.clear() } else { p.minute.clear() }
                }
                Some(if p.field == 0 { &mut p.hour } else { &mut p.minute })
            }
            _ => None,
        }
    }

    /// The input type of the overlay's field (the time picker's are numbers).
    pub(crate) fn overlay_input(&self) -> Option<InputType> {
        match &self.overlay {
            Some(Overlay::Dialog { input: Some(_), .. }) => Some(InputType::Text),
            Some(Overlay::TimePicker(_)) => Some(InputType::Number),
            _ => None,
        }
    }

    /// A picker's buttons and cells.
    pub(crate) fn picker_event(
        &mut self,
        handler: &SystemHandler,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        match (handler, self.overlay.as_mut()) {
            (SystemHandler::PickerMonth(step), Some(Overlay::DatePicker(p))) => {
                let (y, m) = p.shown;
                let index = y * 12 + m as i32 - 1 + step;
                p.shown = (index.div_euclid(12), index.rem_euclid(12) as u32 + 1);
            }
            (SystemHandler::PickerDay(day), Some(Overlay::DatePicker(p))) => {
                if let Some(date) = NaiveDate::from_ymd_opt(p.shown.0, p.shown.1, *day) {
                    p.selected = date;
                }
            }
            (SystemHandler::PickerField(field), Some(Overlay::TimePicker(p))) => {
                p.field = *field;
                p.fresh = true;
                self.keyboard = true;
            }
            (SystemHandler::PickerAmPm(pm), Some(Overlay::TimePicker(p))) => p.pm = *pm,
            (SystemHandler::PickerCancel, _) => {
                self.overlay = None;
                self.keyboard = false;
            }
            (SystemHandler::PickerOk, Some(Overlay::DatePicker(p))) => {
                let (action, mut args) = (p.action.clone(), p.args.clone());
                args.insert("value".into(), Value::from(p.selected.format("%Y-%m-%d").to_string()));
                self.overlay = None;
                self.run_action(&action, args, outcome)?;
            }
            (SystemHandler::PickerOk, Some(Overlay::TimePicker(p))) => {
                let hour: Option<u32> = p.hour.trim().parse().ok();
                let minute: Option<u32> = p.minute.trim().parse().ok();
                let valid = match (hour, minute) {
                    (Some(h), Some(m)) if m < 60 => {
                        if p.is24 {
                            (h < 24).then_some((h, m))
                        } else {
                            (1..=12).contains(&h).then_some(((h % 12) + if p.pm { 12 } else { 0 }, m))
                        }
                    }
                    _ => None,
                };
                match valid {
                    Some((h, m)) => {
                        let (action, mut args) = (p.action.clone(), p.args.clone());
                        args.insert("value".into(), Value::from(format!("{h:02}:{m:02}")));
                        self.overlay = None;
                        self.keyboard = false;
                        self.run_action(&action, args, outcome)?;
                    }
                    None => {
                        p.error = Some("Enter a valid time".into());
                        outcome.notes.push("the time picker did not take that time".into());
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn text(d: &Display, class: &str, text: &str, sp: f32) -> View {
    let mut v = View::new(class, Kind::Text);
    v.text = text.to_string();
    v.look = Some(TextLook { size_px: d.dp(sp), bold: false, max_lines: Some(1) });
    v
}

fn row(axis: Axis) -> View {
    let mut v = View::new("android.widget.LinearLayout", Kind::Group);
    v.style.axis = axis;
    v
}

fn button(d: &Display, id: &str, label: &str, handler: SystemHandler) -> View {
    let mut b = text(d, "android.widget.Button", label, 14.0);
    b.resource_id = id.into();
    b.role = Some(Role::TextButton);
    b.clickable = true;
    b.hooks.on_click = Some(Handler::System(handler));
    b.style.min_height = d.dp(48.0);
    b.style.padding = Edges { left: d.dp(12.0), right: d.dp(12.0), top: d.dp(10.0), bottom: d.dp(10.0) };
    b
}

fn dialog_frame(d: &Display) -> View {
    let mut root = row(Axis::Vertical);
    root.resource_id = "android:id/parentPanel".into();
    root.role = Some(Role::Dialog);
    root.style.width = Dim::Px((d.width_px() - d.dp(48.0)).floor());
    root.style.padding = Edges { top: d.dp(20.0), bottom: d.dp(8.0), left: d.dp(16.0), right: d.dp(16.0) };
    root.style.gap = d.dp(8.0);
    root
}

fn ok_cancel(d: &Display) -> View {
    let mut bar = row(Axis::Horizontal);
    bar.resource_id = "android:id/buttonPanel".into();
    bar.style.justify = Align::End;
    bar.children = vec![
        button(d, "android:id/button2", "Cancel", SystemHandler::PickerCancel),
        button(d, "android:id/button1", "OK", SystemHandler::PickerOk),
    ];
    bar
}

/// Android's DatePickerDialog in calendar mode: the year and selected date, the month with
/// Previous / Next month, a grid of days (content-desc "02 March 2026"), Cancel / OK.
pub(crate) fn date_picker_view(d: &Display, p: &DatePicker) -> View {
    let mut root = dialog_frame(d);
    let mut year = text(d, "android.widget.TextView", &p.selected.year().to_string(), 14.0);
    year.resource_id = "android:id/date_picker_header_year".into();
    let mut date = text(d, "android.widget.TextView", &p.selected.format("%a, %b %-d").to_string(), 28.0);
    date.resource_id = "android:id/date_picker_header_date".into();
    if let Some(t) = &p.title {
        let mut title = text(d, "android.widget.TextView", t, 14.0);
        title.resource_id = "android:id/alertTitle".into();
        root.children.push(title);
    }
    root.children.extend([year, date]);
    let mut month_bar = row(Axis::Horizontal);
    month_bar.style.align = Align::Center;
    let nav = |id: &str, desc: &str, icon: &str, step: i32| {
        let mut b = View::new("android.widget.ImageButton", Kind::Image);
        b.resource_id = id.into();
        b.desc = desc.into();
        b.icon = Some(icon.into());
        b.role = Some(Role::IconButton);
        b.clickable = true;
        b.hooks.on_click = Some(Handler::System(SystemHandler::PickerMonth(step)));
        b.style.width = Dim::Px(d.dp(48.0));
        b.style.height = Dim::Px(d.dp(48.0));
        b
    };
    let first = NaiveDate::from_ymd_opt(p.shown.0, p.shown.1, 1).unwrap_or(p.selected);
    let mut month = text(d, "android.widget.TextView", &first.format("%B %Y").to_string(), 16.0);
    month.resource_id = "android:id/month_view".into();
    month.style.weight = 1.0;
    month_bar.children = vec![
        nav("android:id/prev", "Previous month", "chevron_left", -1),
        month,
        nav("android:id/next", "Next month", "chevron_right", 1),
    ];
    root.children.push(month_bar);
    let cell_w = ((d.width_px() - d.dp(80.0)) / 7.0).floor();
    let mut heads = row(Axis::Horizontal);
    for letter in ["S", "M", "T", "W", "T", "F", "S"] {
        let mut h = text(d, "android.widget.TextView", letter, 12.0);
        h.style.width = Dim::Px(cell_w);
        h.text_center = true;
        h.tone = phonebench_pixels::Tone::Secondary;
        heads.children.push(h);
    }
    root.children.push(heads);
    let offset = first.weekday().num_days_from_sunday() as usize;
    let days = days_in_month(p.shown.0, p.shown.1) as usize;
    let mut cells: Vec<View> = Vec::new();
    for _ in 0..offset {
        let mut blank = View::new("android.view.View", Kind::Group);
        blank.style.width = Dim::Px(cell_w);
        blank.style.height = Dim::Px(d.dp(40.0));
        cells.push(blank);
    }
    for day in 1..=days as u32 {
        let mut cell = text(d, "android.widget.TextView", &day.to_string(), 14.0);
        if let Some(date) = NaiveDate::from_ymd_opt(p.shown.0, p.shown.1, day) {
            cell.desc = date.format("%d %B %Y").to_string();
            let chosen = date == p.selected;
            cell.selected = chosen;
            cell.checked = chosen;
            if chosen {
                cell.role = Some(Role::FilledButton);
            }
        }
        cell.clickable = true;
        cell.text_center = true;
        cell.hooks.on_click = Some(Handler::System(SystemHandler::PickerDay(day)));
        cell.style.width = Dim::Px(cell_w);
        cell.style.height = Dim::Px(d.dp(40.0));
        cell.style.padding = Edges { top: d.dp(10.0), ..Edges::default() };
        cells.push(cell);
    }
    let mut grid = row(Axis::Vertical);
    grid.resource_id = "android:id/month_view".into();
    for week in cells.chunks(7) {
        let mut w = row(Axis::Horizontal);
        w.children = week.to_vec();
        grid.children.push(w);
    }
    root.children.push(grid);
    root.children.push(ok_cancel(d));
    root
}

/// Android's TimePickerDialog in text-input mode: hour and minute fields (`input_hour`,
/// `input_minute`), AM / PM when 12-hour, an error line, Cancel / OK.
pub(crate) fn time_picker_view(d: &Display, p: &TimePicker) -> View {
    let mut root = dialog_frame(d);
    let mut title = text(d, "android.widget.TextView", p.title.as_deref().unwrap_or("Type in time"), 14.0);
    title.resource_id = "android:id/input_header".into();
    root.children.push(title);
    let mut fields = row(Axis::Horizontal);
    fields.style.align = Align::Center;
    fields.style.gap = d.dp(8.0);
    let field = |id: &str, hint: &str, value: &str, index: u8| {
        let mut f = View::new("android.widget.EditText", Kind::Text);
        f.resource_id = id.into();
        f.text = value.to_string();
        f.hint = Some(hint.into());
        f.role = Some(Role::Field);
        f.look = Some(TextLook { size_px: d.dp(28.0), bold: false, max_lines: Some(1) });
        f.selected = p.field == index;
        f.clickable = true;
        f.hooks.on_click = Some(Handler::System(SystemHandler::PickerField(index)));
        f.style.width = Dim::Px(d.dp(96.0));
        f.style.padding = Edges { left: d.dp(12.0), right: d.dp(12.0), top: d.dp(8.0), bottom: d.dp(8.0) };
        f
    };
    let colon = text(d, "android.widget.TextView", ":", 28.0);
    fields.children = vec![
        field("android:id/input_hour", "hh", &p.hour, 0),
        colon,
        field("android:id/input_minute", "mm", &p.minute, 1),
    ];
    if !p.is24 {
        let mut ampm = row(Axis::Vertical);
        for (label, pm) in [("AM", false), ("PM", true)] {
            let mut b = text(d, "android.widget.RadioButton", label, 14.0);
            b.kind = Kind::Radio;
            b.checked = p.pm == pm;
            b.clickable = true;
            b.hooks.on_click = Some(Handler::System(SystemHandler::PickerAmPm(pm)));
            b.style.min_height = d.dp(40.0);
            ampm.children.push(b);
        }
        fields.children.push(ampm);
    }
    root.children.push(fields);
    if let Some(e) = &p.error {
        let mut err = text(d, "android.widget.TextView", e, 12.0);
        err.resource_id = "android:id/label_error".into();
        err.tone = phonebench_pixels::Tone::Error;
        root.children.push(err);
    }
    root.children.push(ok_cancel(d));
    root
}
