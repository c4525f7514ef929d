//! Screen rectangles in device pixels, as uiautomator writes them: `[left,top][right,bottom]`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A rectangle in device pixels. `right` and `bottom` are exclusive, as in Android's `Rect`.
///
/// Real dumps contain zero-area and inverted rectangles (views scrolled off screen, collapsed
/// containers); they are kept as they are, never "repaired", so that a round trip is lossless.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bounds {
    /// Left edge (inclusive).
    pub left: i32,
    /// Top edge (inclusive).
    pub top: i32,
    /// Right edge (exclusive).
    pub right: i32,
    /// Bottom edge (exclusive).
    pub bottom: i32,
}

impl Bounds {
    /// A rectangle from its four edges.
    pub const fn new(left: i32, top: i32, right: i32, bottom: i32) -> Self {
        Self { left, top, right, bottom }
    }

    /// Width in pixels; negative for an inverted rectangle.
    pub fn width(&self) -> i64 {
        i64::from(self.right) - i64::from(self.left)
    }

    /// Height in pixels; negative for an inverted rectangle.
    pub fn height(&self) -> i64 {
        i64::from(self.bottom) - i64::from(self.top)
    }

    /// Area in square pixels; zero for empty or inverted rectangles.
    pub fn area(&self) -> i64 {
        if self.is_empty() { 0 } else { self.width().saturating_mul(self.height()) }
    }

    /// True when the rectangle covers no pixel (zero-area or inverted).
    pub fn is_empty(&self) -> bool {
        self.width() <= 0 || self.height() <= 0
    }

    /// The centre, rounded down (Python's `//`, which the SPHINX and AndroidWorld tools use).
    pub fn center(&self) -> (i32, i32) {
        let cx = (i64::from(self.left) + i64::from(self.right)).div_euclid(2);
        let cy = (i64::from(self.top) + i64::from(self.bottom)).div_euclid(2);
        // The mean of two i32 values always fits in an i32.
        (cx as i32, cy as i32)
    }

    /// Android's `Rect.contains`: left/top inclusive, right/bottom exclusive. An empty rectangle
    /// contains nothing. This is what a touch hits.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        !self.is_empty() && self.left <= x && x < self.right && self.top <= y && y < self.bottom
    }

    /// Closed containment (all four edges inclusive), as the SPHINX evaluator tests a point
    /// against element bounds.
    pub fn contains_inclusive(&self, x: i32, y: i32) -> bool {
        self.left <= x && x <= self.right && self.top <= y && y <= self.bottom
    }

    /// The overlap of two rectangles, or `None` when they do not share a pixel.
    pub fn intersection(&self, other: &Bounds) -> Option<Bounds> {
        let r = Bounds {
            left: self.left.max(other.left),
            top: self.top.max(other.top),
            right: self.right.min(other.right),
            bottom: self.bottom.min(other.bottom),
        };
        (!r.is_empty()).then_some(r)
    }

    /// The smallest rectangle covering both (empty rectangles are ignored).
    pub fn union(&self, other: &Bounds) -> Bounds {
        if self.is_empty() {
            return *other;
        }
        if other.is_empty() {
            return *self;
        }
        Bounds {
            left: self.left.min(other.left),
            top: self.top.min(other.top),
            right: self.right.max(other.right),
            bottom: self.bottom.max(other.bottom),
        }
    }

    /// Parses uiautomator's `[left,top][right,bottom]`. Whitespace around numbers is allowed;
    /// numbers may be negative (views partly off screen).
    pub fn parse(text: &str) -> Result<Bounds, BoundsError> {
        let err = || BoundsError { text: text.chars().take(80).collect() };
        let s = text.trim();
        let s = s.strip_prefix('[').ok_or_else(err)?;
        let s = s.strip_suffix(']').ok_or_else(err)?;
        let (first, second) = s.split_once("][").ok_or_else(err)?;
        let pair = |p: &str| -> Option<(i32, i32)> {
            let (a, b) = p.split_once(',')?;
            Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
        };
        let (left, top) = pair(first).ok_or_else(err)?;
        let (right, bottom) = pair(second).ok_or_else(err)?;
        Ok(Bounds { left, top, right, bottom })
    }
}

impl fmt::Display for Bounds {
    /// uiautomator's form: `[left,top][right,bottom]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{},{}][{},{}]", self.left, self.top, self.right, self.bottom)
    }
}

/// A `bounds` attribute that is not `[left,top][right,bottom]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bounds `{text}` is not of the form [left,top][right,bottom]")]
pub struct BoundsError {
    /// The offending text (first 80 characters).
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_uiautomator_form() {
        let b = Bounds::parse("[0,48][768,1184]").unwrap();
        assert_eq!(b, Bounds::new(0, 48, 768, 1184));
        assert_eq!(b.to_string(), "[0,48][768,1184]");
        assert_eq!(Bounds::parse(" [-5, 3][ 10,20] ").unwrap(), Bounds::new(-5, 3, 10, 20));
    }

    #[test]
    fn rejects_malformed_bounds_with_the_text() {
        for bad in ["", "[0,0]", "[0,0][1,1", "0,0][1,1]", "[a,0][1,1]", "[0,0][1,1,1]", "[0;0][1,1]"] {
            let e = Bounds::parse(bad).unwrap_err();
            assert!(e.to_string().contains("is not of the form"), "{bad}");
        }
        assert!(Bounds::parse("[99999999999,0][1,1]").is_err());
    }

    #[test]
    fn containment_is_half_open_and_empty_contains_nothing() {
        let b = Bounds::new(10, 20, 30, 40);
        assert!(b.contains(10, 20));
        assert!(!b.contains(30, 20));
        assert!(!b.contains(10, 40));
        assert!(b.contains_inclusive(30, 40));
        assert!(!Bounds::new(5, 5, 5, 50).contains(5, 10));
        assert!(Bounds::new(5, 5, 5, 50).contains_inclusive(5, 10));
    }

    #[test]
    fn center_floors_like_python() {
        assert_eq!(Bounds::new(0, 0, 5, 5).center(), (2, 2));
        assert_eq!(Bounds::new(-5, -5, 0, 0).center(), (-3, -3));
        assert_eq!(Bounds::new(i32::MIN, 0, i32::MAX, 2).center(), (-1, 1));
    }

    #[test]
    fn area_intersection_union() {
        let a = Bounds::new(0, 0, 10, 10);
        let b = Bounds::new(5, 5, 20, 20);
        assert_eq!(a.area(), 100);
        assert_eq!(a.intersection(&b), Some(Bounds::new(5, 5, 10, 10)));
        assert_eq!(a.intersection(&Bounds::new(10, 0, 20, 10)), None);
        assert_eq!(a.union(&b), Bounds::new(0, 0, 20, 20));
        assert_eq!(Bounds::new(3, 3, 1, 1).area(), 0);
    }
}
