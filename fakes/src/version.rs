//! Provider version numbers and ranges (`>=0.148.0, <0.163.0`).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version(major, minor, patch)
    }

    /// This version is `major.minor.patch` or later.
    pub fn at_least(self, major: u32, minor: u32, patch: u32) -> bool {
        self >= Version(major, minor, patch)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

impl FromStr for Version {
    type Err = String;
    fn from_str(s: &str) -> Result<Version, String> {
        let parts: Vec<&str> = s.trim().split('.').collect();
        if parts.len() != 3 {
            return Err(format!("version `{s}` is not MAJOR.MINOR.PATCH"));
        }
        let num = |p: &str| p.parse::<u32>().map_err(|_| format!("version `{s}` has a non-numeric part `{p}`"));
        Ok(Version(num(parts[0])?, num(parts[1])?, num(parts[2])?))
    }
}

/// A conjunction of comparisons, e.g. `>=0.146.0, <0.148.0`; `*` matches all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    bounds: Vec<(Op, Version)>,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Ge,
    Gt,
    Le,
    Lt,
    Eq,
}

impl VersionRange {
    pub fn any() -> VersionRange {
        VersionRange { bounds: Vec::new(), text: "*".into() }
    }

    pub fn contains(&self, v: Version) -> bool {
        self.bounds.iter().all(|&(op, b)| match op {
            Op::Ge => v >= b,
            Op::Gt => v > b,
            Op::Le => v <= b,
            Op::Lt => v < b,
            Op::Eq => v == b,
        })
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for VersionRange {
    type Err = String;
    fn from_str(s: &str) -> Result<VersionRange, String> {
        let text = s.trim().to_string();
        if text == "*" {
            return Ok(VersionRange::any());
        }
        let mut bounds = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (op, rest) = [(">=", Op::Ge), ("<=", Op::Le), (">", Op::Gt), ("<", Op::Lt), ("=", Op::Eq)]
                .iter()
                .find_map(|(p, op)| part.strip_prefix(p).map(|r| (*op, r)))
                .ok_or_else(|| format!("range part `{part}` must start with >=, >, <=, < or ="))?;
            bounds.push((op, rest.parse()?));
        }
        Ok(VersionRange { bounds, text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let r: VersionRange = ">=0.146.0, <0.148.0".parse().unwrap();
        assert!(r.contains(Version(0, 147, 0)));
        assert!(!r.contains(Version(0, 148, 0)));
        assert!(!r.contains(Version(0, 145, 9)));
        assert!("*".parse::<VersionRange>().unwrap().contains(Version(9, 9, 9)));
        assert!("~1.0.0".parse::<VersionRange>().is_err());
        assert!("1.0".parse::<Version>().is_err());
    }
}

/// The names of a profile's other version-dependent answers (`pub fn
/// NAME(&self, ...) -> T`, T not bool), from its source, in order: its
/// `values` must list them all (a test of each profile checks it).
#[cfg(test)]
pub(crate) fn value_functions(source: &str) -> Vec<&str> {
    source
        .split("pub fn ")
        .skip(1)
        .filter_map(|rest| rest.split_once('(').filter(|(_, args)| args.starts_with("&self")).map(|(name, args)| (name, args)))
        .filter(|(name, args)| {
            let returns = args.split_once(") -> ").map_or("", |(_, r)| r);
            !returns.starts_with("bool") && !matches!(*name, "facts" | "values" | "version_line")
        })
        .map(|(name, _)| name)
        .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .collect()
}

/// The names of a profile's boolean predicates, from its source, in order:
/// its `facts` must list them all (a test of each profile checks it).
#[cfg(test)]
pub(crate) fn bool_predicates(source: &str) -> Vec<&str> {
    source
        .split("pub fn ")
        .skip(1)
        .filter_map(|rest| rest.split_once("(&self) -> bool").map(|(name, _)| name))
        .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .collect()
}
