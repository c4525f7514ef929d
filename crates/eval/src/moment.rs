//! Reading times and dates out of element text for `time` checks.
//!
//! Element text is free-form ("Today, 3:30 PM", "Due 2025-03-01 09:00"), so the first date
//! (`YYYY-MM-DD`) and the first time (`HH:MM`, `H:MM AM/PM`, `H AM/PM`, optional seconds) found
//! anywhere in it are used.

use std::sync::LazyLock;

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use regex::Regex;

static DATE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b").expect("a fixed, valid pattern"));

static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap])\.?\s?m\b\.?)?|\b(\d{1,2})\s*([ap])\.?\s?m\b\.?",
    )
    .expect("a fixed, valid pattern")
});

/// A date, a time of day, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Moment {
    /// The date, if one was found.
    pub date: Option<NaiveDate>,
    /// The time of day, if one was found.
    pub time: Option<NaiveTime>,
}

fn hour_24(hour: u32, meridiem: Option<&str>) -> Option<u32> {
    match meridiem.map(|m| m.to_ascii_lowercase()) {
        None => (hour < 24).then_some(hour),
        Some(m) if (1..=12).contains(&hour) => Some(hour % 12 + if m == "p" { 12 } else { 0 }),
        Some(_) => None,
    }
}

/// The first date and the first time in `text` (either may be missing).
pub(crate) fn read(text: &str) -> Moment {
    let date = DATE.captures_iter(text).find_map(|c| {
        let y = c.get(1)?.as_str().parse().ok()?;
        let m = c.get(2)?.as_str().parse().ok()?;
        let d = c.get(3)?.as_str().parse().ok()?;
        NaiveDate::from_ymd_opt(y, m, d)
    });
    let time = TIME.captures_iter(text).find_map(|c| {
        if let Some(h) = c.get(1) {
            let hour = hour_24(h.as_str().parse().ok()?, c.get(4).map(|m| m.as_str()))?;
            let minute = c.get(2)?.as_str().parse().ok()?;
            let second = c.get(3).map_or(Some(0), |s| s.as_str().parse().ok())?;
            NaiveTime::from_hms_opt(hour, minute, second)
        } else {
            let hour = hour_24(c.get(5)?.as_str().parse().ok()?, c.get(6).map(|m| m.as_str()))?;
            NaiveTime::from_hms_opt(hour, 0, 0)
        }
    });
    Moment { date, time }
}

/// A range bound (`HH:MM`, `YYYY-MM-DD` or `YYYY-MM-DD HH:MM`).
pub(crate) fn bound(text: &str) -> Result<Moment, String> {
    let m = read(text);
    if m.date.is_none() && m.time.is_none() {
        Err(format!("cannot read `{text}` as a time (HH:MM), date (YYYY-MM-DD) or both"))
    } else {
        Ok(m)
    }
}

/// Compares `value` with `bound` in the bound's own form (date and time, date only, or time
/// only): `Err` when the value lacks what the bound has.
pub(crate) fn compare(value: &Moment, bound: &Moment) -> Result<std::cmp::Ordering, String> {
    match (bound.date, bound.time) {
        (Some(bd), Some(bt)) => match (value.date, value.time) {
            (Some(vd), Some(vt)) => Ok(NaiveDateTime::new(vd, vt).cmp(&NaiveDateTime::new(bd, bt))),
            _ => Err("the element shows no date and time".into()),
        },
        (Some(bd), None) => {
            value.date.map(|vd| vd.cmp(&bd)).ok_or_else(|| "the element shows no date".into())
        }
        (None, Some(bt)) => {
            value.time.map(|vt| vt.cmp(&bt)).ok_or_else(|| "the element shows no time".into())
        }
        (None, None) => Ok(std::cmp::Ordering::Equal),
    }
}

/// Whether `value` lies within `from..=to`.
pub(crate) fn within(value: &Moment, from: Option<&Moment>, to: Option<&Moment>) -> Result<bool, String> {
    if let Some(f) = from
        && compare(value, f)?.is_lt()
    {
        return Ok(false);
    }
    if let Some(t) = to
        && compare(value, t)?.is_gt()
    {
        return Ok(false);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(h: u32, m: u32) -> Option<NaiveTime> {
        NaiveTime::from_hms_opt(h, m, 0)
    }

    #[test]
    fn reads_24_hour_12_hour_and_bare_meridiem_times() {
        assert_eq!(read("14:05").time, t(14, 5));
        assert_eq!(read("Today, 3:30 PM").time, t(15, 30));
        assert_eq!(read("12:10 am").time, t(0, 10));
        assert_eq!(read("12:10 p.m.").time, t(12, 10));
        assert_eq!(read("at 9 AM").time, t(9, 0));
        assert_eq!(read("25:00").time, None);
        assert_eq!(read("no time here").time, None);
    }

    #[test]
    fn reads_dates_with_or_without_time() {
        let m = read("Due 2025-03-01 09:00");
        assert_eq!(m.date, NaiveDate::from_ymd_opt(2025, 3, 1));
        assert_eq!(m.time, t(9, 0));
        assert_eq!(read("2025-02-30").date, None);
    }

    #[test]
    fn compares_in_the_bounds_form() {
        let v = read("2025-03-01 09:00");
        assert!(within(&v, Some(&read("08:00")), Some(&read("09:00"))).unwrap());
        assert!(!within(&v, Some(&read("2025-03-02")), None).unwrap());
        assert!(within(&v, Some(&read("2025-03-01 08:59")), Some(&read("2025-03-01 09:00"))).unwrap());
        assert!(within(&read("09:00"), Some(&read("2025-03-01")), None).is_err());
        assert!(bound("soon").is_err());
    }
}
