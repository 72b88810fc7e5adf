//! Which release changed a behaviour: a binary search over the provider's
//! real releases between one that behaves like `good` and one that does
//! not, each probe a recording of one scenario on that release (run on the
//! real binary, or read from the committed recordings). Every probe is
//! taken twice; a release whose two probes disagree is flaky and the
//! search stops there rather than bisect through noise.

use fakes::version::Version;
use serde_json::Value;

use crate::verdict::fidelity::Recording;

/// What a probe compares: the recording's whole summary (every step's
/// outcome, server calls, launches), or one field of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Summary,
    /// A summary key (`server_calls`, `launch_error` ...) or a key of every
    /// step's outcome (`model_saw`, `item_status`, `prompted` ...).
    Field(String),
}

impl Check {
    pub fn of(&self, r: &Recording) -> Value {
        match self {
            Check::Summary => r.summary.clone(),
            Check::Field(f) => match r.summary.get(f) {
                Some(v) => v.clone(),
                None => Value::Array(
                    r.summary["outcomes"].as_array().into_iter().flatten().map(|o| o.get(f).cloned().unwrap_or(Value::Null)).collect(),
                ),
            },
        }
    }
}

/// How the search ended.
#[derive(Debug)]
pub enum Found {
    /// `first` is the first release that differs from `good`; `last_good`
    /// the release before it that was probed like `good`.
    Threshold { last_good: (Version, Recording), first: (Version, Recording) },
    /// Two probes of one release disagreed.
    Flaky(Version),
}

/// One line per probe, for the person watching.
pub type Log<'a> = &'a mut dyn FnMut(&str);

/// Bisects `releases` (sorted, `good` first and `bad` last, both included).
/// `probe` records the scenario on one release; `check` picks what counts.
pub fn bisect(
    releases: &[Version],
    check: &Check,
    probe: &mut dyn FnMut(Version) -> Result<Recording, String>,
    log: Log,
) -> Result<Found, String> {
    let (Some(&good), Some(&bad)) = (releases.first(), releases.last()) else {
        return Err("no releases to bisect".into());
    };
    if releases.len() < 2 {
        return Err(format!("--good and --bad are the same release ({good})"));
    }
    let mut twice = |v: Version, log: &mut dyn FnMut(&str)| -> Result<Option<Recording>, String> {
        let (a, b) = (probe(v)?, probe(v)?);
        if check.of(&a) != check.of(&b) {
            log(&format!("{v}: flaky (its two runs differ)"));
            return Ok(None);
        }
        Ok(Some(a))
    };
    let Some(good_rec) = twice(good, log)? else { return Ok(Found::Flaky(good)) };
    let Some(bad_rec) = twice(bad, log)? else { return Ok(Found::Flaky(bad)) };
    let reference = check.of(&good_rec);
    if check.of(&bad_rec) == reference {
        return Err(format!("--good {good} and --bad {bad} do not differ{}", describe(check)));
    }
    let (mut lo, mut hi) = ((0, good_rec), (releases.len() - 1, bad_rec));
    while hi.0 - lo.0 > 1 {
        let mid = (lo.0 + hi.0) / 2;
        let v = releases[mid];
        let Some(rec) = twice(v, log)? else { return Ok(Found::Flaky(v)) };
        let like_good = check.of(&rec) == reference;
        log(&format!("{v}: {} (twice)", if like_good { "like --good" } else { "differs" }));
        if like_good {
            lo = (mid, rec);
        } else {
            hi = (mid, rec);
        }
    }
    Ok(Found::Threshold { last_good: (releases[lo.0], lo.1), first: (releases[hi.0], hi.1) })
}

fn describe(check: &Check) -> String {
    match check {
        Check::Summary => String::new(),
        Check::Field(f) => format!(" in `{f}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn recording(model_saw: &str) -> Recording {
        Recording::parse(
            &json!({"scenario": "s", "provider": "codex", "version": "0", "driver": "reference", "verdict": "pass",
                    "summary": {"outcomes": [{"model_saw": model_saw, "step": 0}]}, "conversations": {}})
            .to_string(),
        )
        .unwrap()
    }

    fn versions(n: u32) -> Vec<Version> {
        (0..n).map(|i| Version::new(0, 140 + i, 0)).collect()
    }

    #[test]
    fn finds_the_first_release_that_differs_in_few_probes() {
        let list = versions(20);
        let mut probes = 0;
        let mut probe = |v: Version| {
            probes += 1;
            Ok(recording(if v >= Version::new(0, 153, 0) { "denied" } else { "cancelled" }))
        };
        let found = bisect(&list, &Check::Field("model_saw".into()), &mut probe, &mut |_| {}).unwrap();
        match found {
            Found::Threshold { last_good, first } => assert_eq!((last_good.0, first.0), (Version::new(0, 152, 0), Version::new(0, 153, 0))),
            other => panic!("{other:?}"),
        }
        assert!(probes <= 2 * (2 + 5), "{probes} probes");
    }

    #[test]
    fn a_release_whose_runs_disagree_is_flaky_and_ends_the_search() {
        let list = versions(9);
        let mut n = 0;
        let mut probe = |v: Version| {
            n += 1;
            let noisy = v == Version::new(0, 144, 0) && n % 2 == 0;
            Ok(recording(if v >= Version::new(0, 146, 0) || noisy { "b" } else { "a" }))
        };
        let found = bisect(&list, &Check::Summary, &mut probe, &mut |_| {}).unwrap();
        assert!(matches!(found, Found::Flaky(v) if v == Version::new(0, 144, 0)), "{found:?}");
    }

    #[test]
    fn good_and_bad_alike_is_an_error() {
        let err = bisect(&versions(3), &Check::Summary, &mut |_| Ok(recording("x")), &mut |_| {}).unwrap_err();
        assert!(err.contains("do not differ"), "{err}");
        assert!(bisect(&versions(1), &Check::Summary, &mut |_| Ok(recording("x")), &mut |_| {}).unwrap_err().contains("same release"));
    }
}
