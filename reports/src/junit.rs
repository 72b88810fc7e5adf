//! JUnit XML: one test suite per provider version, one case per trial. An
//! incomplete run gives every suite an `incomplete` property and says why in
//! its system-out; interrupted trials are skipped cases.

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::collections::BTreeMap;
use std::time::Duration;

use crate::{diff, Outcome, RunInfo, Trial};

pub fn junit(info: &RunInfo, trials: &[Trial]) -> String {
    let mut report = Report::new("approval-conformance");
    let mut suites: BTreeMap<&str, Vec<&Trial>> = BTreeMap::new();
    for t in trials {
        suites.entry(t.provider.as_str()).or_default().push(t);
    }
    // With no trial finished, a suite of its own still says why.
    if info.incomplete.is_some() && suites.is_empty() {
        suites.insert("incomplete", Vec::new());
    }
    for (provider, trials) in suites {
        let mut suite = TestSuite::new(provider);
        suite.add_property(Property::new("harness", info.harness.as_str()));
        suite.add_property(Property::new("driver", info.driver.as_str()));
        suite.add_property(Property::new("providers", info.providers.join(", ")));
        if let Some(why) = &info.incomplete {
            suite.add_property(Property::new("incomplete", why.as_str()));
            suite.set_system_out(format!("incomplete: {why}"));
        }
        for t in trials {
            let status = match t.outcome {
                Outcome::Pass | Outcome::ExpectedFail => TestCaseStatus::success(),
                Outcome::Skip => {
                    let mut s = TestCaseStatus::skipped();
                    if let Some(note) = &t.note {
                        s.set_message(note.as_str());
                    }
                    s
                }
                Outcome::Interrupted => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(t.note.as_deref().map_or("interrupted".into(), |n| format!("interrupted: {n}")));
                    s
                }
                Outcome::Fail | Outcome::UnexpectedPass => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    let expected: String = t.mismatches.iter().map(|m| format!("{} {}: {}\n", m.at, m.field, m.expected)).collect();
                    let actual: String = t.mismatches.iter().map(|m| format!("{} {}: {}\n", m.at, m.field, m.actual)).collect();
                    let message = match t.outcome {
                        Outcome::UnexpectedPass => "listed as an expected failure, but passed".to_string(),
                        _ => t.note.clone().unwrap_or_else(|| format!("{} expectation(s) did not hold", t.mismatches.len())),
                    };
                    s.set_message(message);
                    s.set_type("conformance");
                    s.set_description(diff(&expected, &actual));
                    s
                }
            };
            let mut case = TestCase::new(t.name.as_str(), status);
            case.set_classname(format!("{}.{}", t.driver, t.scenario));
            case.set_time(Duration::from_secs_f64(t.seconds.max(0.0)));
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report.to_string().unwrap_or_default()
}
