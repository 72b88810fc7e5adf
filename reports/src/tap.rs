//! TAP version 14: SKIP for unclaimed or inapplicable trials, TODO for
//! expected failures, YAML diagnostics with expected, actual and a diff.
//! The stream is also valid TAP 13 but for its version line, which
//! [`tap_with_version`] can set for consumers that stop at 13 (prove 3.44).
//! An incomplete run says so in a comment at the top and ends with
//! `Bail out!`; its interrupted trials are SKIPs, not failures.

use std::fmt::Write;

use crate::{diff, Outcome, RunInfo, Trial};

pub fn tap(info: &RunInfo, trials: &[Trial]) -> String {
    tap_with_version(info, trials, 14)
}

pub fn tap_with_version(info: &RunInfo, trials: &[Trial], version: u8) -> String {
    let mut out = format!("TAP version {version}\n");
    let _ = writeln!(out, "# harness: {}", one_line(&info.harness));
    let _ = writeln!(out, "# driver: {}", one_line(&info.driver));
    let _ = writeln!(out, "# providers: {}", one_line(&info.providers.join(", ")));
    if let Some(why) = &info.incomplete {
        let _ = writeln!(out, "# incomplete: {}", one_line(why));
    }
    let _ = writeln!(out, "1..{}", trials.len());
    for (i, t) in trials.iter().enumerate() {
        let n = i + 1;
        let name = escape(&t.name);
        let note = t.note.as_deref().map(|s| escape(&one_line(s))).unwrap_or_default();
        match t.outcome {
            Outcome::Pass => {
                let _ = writeln!(out, "ok {n} - {name}");
            }
            Outcome::Skip => {
                let _ = writeln!(out, "ok {n} - {name} # SKIP {note}");
            }
            Outcome::Interrupted => {
                let _ = writeln!(out, "ok {n} - {name} # SKIP interrupted {note}");
            }
            Outcome::ExpectedFail => {
                let _ = writeln!(out, "not ok {n} - {name} # TODO expected failure {note}");
                yaml(&mut out, t);
            }
            Outcome::UnexpectedPass => {
                let _ = writeln!(out, "not ok {n} - {name}");
                yaml_fields(&mut out, &[("message", "listed as an expected failure, but passed: remove it from the list")]);
            }
            Outcome::Fail => {
                let _ = writeln!(out, "not ok {n} - {name}");
                yaml(&mut out, t);
            }
        }
    }
    if let Some(why) = &info.incomplete {
        let _ = writeln!(out, "Bail out! {}", one_line(why));
    }
    out
}

fn yaml(out: &mut String, t: &Trial) {
    let expected: String = t.mismatches.iter().map(|m| format!("{} {}: {}\n", m.at, m.field, m.expected)).collect();
    let actual: String = t.mismatches.iter().map(|m| format!("{} {}: {}\n", m.at, m.field, m.actual)).collect();
    let message = match (&t.note, t.mismatches.first()) {
        (Some(note), _) => note.clone(),
        (None, Some(m)) => format!("{} mismatches, first: {} {}: expected {}, got {}", t.mismatches.len(), m.at, m.field, m.expected, m.actual),
        (None, None) => "failed".into(),
    };
    yaml_fields(
        out,
        &[("message", &message), ("severity", "fail"), ("expected", &expected), ("actual", &actual), ("diff", &diff(&expected, &actual))],
    );
}

/// A YAML block indented two spaces, every value a literal block scalar (or
/// an empty string) so no content can break the document.
fn yaml_fields(out: &mut String, fields: &[(&str, &str)]) {
    out.push_str("  ---\n");
    for (k, v) in fields {
        if v.trim().is_empty() {
            let _ = writeln!(out, "  {k}: \"\"");
            continue;
        }
        let _ = writeln!(out, "  {k}: |");
        for line in v.lines() {
            let _ = writeln!(out, "    {}", line.trim_end());
        }
    }
    out.push_str("  ...\n");
}

/// `#` starts a directive in a TAP description; backslash-escape it.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('#', "\\#")
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}
