//! [`ExtraAttributes`]: the attributes of a node that have no typed field, in document order.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Up to this many entries a lookup scans the list; past it a name index is kept. Real nodes carry
/// a handful of extra attributes (Appium: about ten), where a scan is faster than hashing; a hostile
/// dump can carry hundreds of thousands, where a scan per attribute would be quadratic.
const INDEX_FROM: usize = 16;

/// Unknown attributes of a node (e.g. Appium's `displayed`), verbatim and in document order, which
/// is the order [`write_xml`](crate::write_xml) writes them back in. Names are unique: setting a
/// name again replaces its value in place.
///
/// Looking up or setting a name takes constant time on average however many attributes there are.
/// Reads as a slice of `(name, value)` pairs; equality, `Debug` and serde see only those pairs.
#[derive(Clone, Default)]
pub struct ExtraAttributes {
    entries: Vec<(String, String)>,
    /// Position of each name in `entries`, kept once there are more than [`INDEX_FROM`] entries
    /// (boxed: most nodes never need it, and every node carries the field, so it costs a pointer
    /// instead of a map's 48 bytes per node).
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<String, usize>>>,
}

impl ExtraAttributes {
    /// No attributes.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `name`, if the node has it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.position(name).map(|i| self.entries[i].1.as_str())
    }

    /// Sets `name` to `value`: replaces the value in place when the name is there, otherwise
    /// appends the pair.
    pub fn set(&mut self, name: &str, value: &str) {
        match self.position(name) {
            Some(i) => value.clone_into(&mut self.entries[i].1),
            None => self.push_new(name.to_string(), value.to_string()),
        }
    }

    /// The pairs in document order.
    pub fn as_slice(&self) -> &[(String, String)] {
        &self.entries
    }

    /// The pairs in document order, by value.
    pub fn into_vec(self) -> Vec<(String, String)> {
        self.entries
    }

    fn position(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.entries.iter().position(|(k, _)| k == name),
        }
    }

    /// Appends a pair whose name is known not to be present.
    fn push_new(&mut self, name: String, value: String) {
        if let Some(index) = &mut self.index {
            index.insert(name.clone(), self.entries.len());
        } else if self.entries.len() >= INDEX_FROM {
            let mut index: HashMap<String, usize> =
                self.entries.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)).collect();
            index.insert(name.clone(), self.entries.len());
            self.index = Some(Box::new(index));
        }
        self.entries.push((name, value));
    }
}

impl Deref for ExtraAttributes {
    type Target = [(String, String)];

    fn deref(&self) -> &Self::Target {
        &self.entries
    }
}

impl<'a> IntoIterator for &'a ExtraAttributes {
    type Item = &'a (String, String);
    type IntoIter = std::slice::Iter<'a, (String, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

impl FromIterator<(String, String)> for ExtraAttributes {
    /// Pairs in order; a repeated name replaces the earlier value in place, as [`ExtraAttributes::set`] does.
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        let mut out = ExtraAttributes::new();
        for (k, v) in iter {
            match out.position(&k) {
                Some(i) => out.entries[i].1 = v,
                None => out.push_new(k, v),
            }
        }
        out
    }
}

impl From<Vec<(String, String)>> for ExtraAttributes {
    fn from(pairs: Vec<(String, String)>) -> Self {
        pairs.into_iter().collect()
    }
}

impl PartialEq for ExtraAttributes {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Eq for ExtraAttributes {}

impl fmt::Debug for ExtraAttributes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.entries.fmt(f)
    }
}

impl Serialize for ExtraAttributes {
    /// As the list of `[name, value]` pairs.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.entries.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ExtraAttributes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<(String, String)>::deserialize(deserializer).map(ExtraAttributes::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_replaces_in_place_past_the_index_threshold() {
        let mut extra = ExtraAttributes::new();
        for i in 0..100 {
            extra.set(&format!("a{i}"), &i.to_string());
        }
        extra.set("a3", "three");
        extra.set("a70", "seventy");
        assert_eq!(extra.len(), 100);
        assert_eq!(extra.get("a3"), Some("three"));
        assert_eq!(extra.get("a70"), Some("seventy"));
        assert_eq!(extra.get("a99"), Some("99"));
        assert_eq!(extra.get("b"), None);
        let names: Vec<&str> = extra.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names[..4], ["a0", "a1", "a2", "a3"]);
        assert_eq!(extra[70].1, "seventy");
    }

    #[test]
    fn equality_and_serde_see_only_the_pairs() {
        let small: ExtraAttributes = vec![("x".to_string(), "1".to_string())].into();
        let mut grown = ExtraAttributes::new();
        for i in 0..40 {
            grown.set(&format!("k{i}"), "v");
        }
        let rebuilt: ExtraAttributes = grown.as_slice().to_vec().into();
        assert_eq!(grown, rebuilt);
        assert_ne!(small, grown);
        let dup: ExtraAttributes =
            vec![("x".to_string(), "1".to_string()), ("x".to_string(), "2".to_string())].into();
        assert_eq!(dup.as_slice(), [("x".to_string(), "2".to_string())]);
    }
}
