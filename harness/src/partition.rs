//! Runs larger than one machine: `--partition slice:K/N` or `hash:K/N`
//! runs a deterministic share of the planned trials (as cargo-nextest
//! does), each shard saves its trials as JSON (`--json`), and
//! [`merge`] puts the shards back together, refusing a missing or repeated
//! shard, shards of different plans, and trials run twice.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use reports::{RunInfo, Trial};
use serde::{Deserialize, Serialize};

/// Which share of the plan a shard runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Partition {
    /// Trials K, K+N, K+2N ... of the plan (1-based): even shares.
    Slice { k: usize, n: usize },
    /// Trials whose name hashes to K: a trial stays in its shard when
    /// others are added or removed.
    Hash { k: usize, n: usize },
}

impl FromStr for Partition {
    type Err = String;
    fn from_str(s: &str) -> Result<Partition, String> {
        let bad = || format!("partition `{s}`: expected slice:K/N or hash:K/N with 1 <= K <= N");
        let (kind, share) = s.split_once(':').ok_or_else(bad)?;
        let (k, n) = share.split_once('/').ok_or_else(bad)?;
        let (k, n): (usize, usize) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        match kind {
            "slice" => Ok(Partition::Slice { k, n }),
            "hash" => Ok(Partition::Hash { k, n }),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Partition::Slice { k, n } => write!(f, "slice:{k}/{n}"),
            Partition::Hash { k, n } => write!(f, "hash:{k}/{n}"),
        }
    }
}

impl Partition {
    /// Whether planned trial `index` (0-based), named `name`, is this shard's.
    pub fn holds(&self, index: usize, name: &str) -> bool {
        match *self {
            Partition::Slice { k, n } => index % n == k - 1,
            Partition::Hash { k, n } => (fnv1a(name) % n as u64) as usize == k - 1,
        }
    }

    fn share(&self) -> (usize, usize) {
        match *self {
            Partition::Slice { k, n } | Partition::Hash { k, n } => (k, n),
        }
    }

    fn same_kind(&self, other: &Partition) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other) && self.share().1 == other.share().1
    }
}

/// A trial's place in the plan: its driver and name (several drivers can
/// play one scenario on one version).
pub fn key(driver: &str, name: &str) -> String {
    format!("{driver}\t{name}")
}

/// FNV-1a: stable across builds and platforms, unlike std's hasher.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// What a shard saves: the whole plan's trial names (so a merge can tell
/// shards of one plan from another's), its share, and its trials with
/// their verdicts before any expected-failure list is applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shard {
    pub partition: Option<Partition>,
    pub planned: Vec<String>,
    pub info: RunInfo,
    pub trials: Vec<Trial>,
}

/// The shards as one run: trials in plan order. Errors name what is wrong.
pub fn merge(shards: &[Shard]) -> Result<Shard, String> {
    let first = shards.first().ok_or("no shards to merge")?;
    let Some(part) = first.partition else {
        return Err("the first file is not a shard (it was run without --partition)".into());
    };
    let n = part.share().1;
    let mut seen = BTreeSet::new();
    for s in shards {
        let p = s.partition.ok_or("a file was run without --partition")?;
        if !p.same_kind(&part) {
            return Err(format!("shard {p} and shard {part} split the plan differently"));
        }
        if s.planned != first.planned {
            return Err(format!("shard {p} comes from another plan (other scenarios, drivers or versions)"));
        }
        if !seen.insert(p.share().0) {
            return Err(format!("shard {p} is given twice"));
        }
    }
    if let Some(k) = (1..=n).find(|k| !seen.contains(k)) {
        let missing = match part {
            Partition::Slice { .. } => Partition::Slice { k, n },
            Partition::Hash { .. } => Partition::Hash { k, n },
        };
        return Err(format!("shard {missing} is missing"));
    }
    let mut trials: Vec<Trial> = Vec::new();
    let mut names = BTreeSet::new();
    for t in shards.iter().flat_map(|s| &s.trials) {
        if !names.insert(key(&t.driver, &t.name)) {
            return Err(format!("trial {} ({}) ran in two shards", t.name, t.driver));
        }
        trials.push(t.clone());
    }
    let order = |t: &Trial| first.planned.iter().position(|p| *p == key(&t.driver, &t.name)).unwrap_or(usize::MAX);
    trials.sort_by_key(order);
    let mut info = first.info.clone();
    info.providers = trials.iter().map(|t| t.provider.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let incomplete: Vec<String> = shards.iter().filter_map(|s| Some(format!("shard {}: {}", s.partition?, s.info.incomplete.as_ref()?))).collect();
    info.incomplete = (!incomplete.is_empty()).then(|| incomplete.join("; "));
    Ok(Shard { partition: None, planned: first.planned.clone(), info, trials })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_parse_and_refuse_what_cannot_be() {
        assert_eq!("slice:2/3".parse(), Ok(Partition::Slice { k: 2, n: 3 }));
        assert_eq!("hash:1/1".parse(), Ok(Partition::Hash { k: 1, n: 1 }));
        for bad in ["3/2", "slice:3/2", "slice:0/2", "slice:1/0", "slice:a/2", "round:1/2", "slice:1"] {
            let e = bad.parse::<Partition>().unwrap_err();
            assert!(e.contains(bad) && e.contains("1 <= K <= N"), "{e}");
        }
    }

    #[test]
    fn every_trial_is_in_exactly_one_shard() {
        let names: Vec<String> = (0..50).map(|i| format!("codex-0.148.0::scenario-{i}")).collect();
        for kind in ["slice", "hash"] {
            for (i, name) in names.iter().enumerate() {
                let holders = (1..=3).filter(|k| format!("{kind}:{k}/3").parse::<Partition>().unwrap().holds(i, name)).count();
                assert_eq!(holders, 1, "{kind} {name}");
            }
        }
    }
}
