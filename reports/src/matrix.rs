//! A self-contained HTML page: scenarios down, driver x provider version
//! across, one coloured cell per trial.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::{Outcome, RunInfo, Trial};

pub fn matrix_html(info: &RunInfo, trials: &[Trial]) -> String {
    // Drivers in the order they ran; versions sorted within each.
    let mut drivers: Vec<&str> = Vec::new();
    for t in trials {
        if !drivers.contains(&t.driver.as_str()) {
            drivers.push(&t.driver);
        }
    }
    let columns: Vec<(String, String)> = drivers
        .iter()
        .flat_map(|d| {
            let providers: BTreeSet<&str> = trials.iter().filter(|t| t.driver == *d).map(|t| t.provider.as_str()).collect();
            providers.into_iter().map(move |p| (d.to_string(), p.to_string()))
        })
        .collect();
    let mut rows: BTreeMap<&str, BTreeMap<(String, String), &Trial>> = BTreeMap::new();
    for t in trials {
        rows.entry(t.scenario.as_str()).or_default().insert((t.driver.clone(), t.provider.clone()), t);
    }
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Conformance matrix</title>\n<style>\
         body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}th,td{border:1px solid #bbb;padding:.25em .5em;font-size:90%}\
         th{background:#eee}td.pass{background:#c8f0c8}td.fail{background:#f5b5b5}td.skip{background:#eee;color:#666}\
         td.xfail{background:#f7e3a1}td.xpass{background:#f5b5b5}td.none{background:#fff}th.group{text-align:left}\
         td.intr{background:#dde4f5;color:#334}p.incomplete{background:#ffe08a;border:2px solid #b8860b;padding:.5em 1em;font-weight:bold}\
         </style></head><body>\n",
    );
    let _ = writeln!(out, "<h1>Conformance matrix</h1>");
    if let Some(why) = &info.incomplete {
        let _ = writeln!(out, "<p id=\"incomplete\" class=\"incomplete\">Incomplete run: {}</p>", esc(why));
    }
    let _ = writeln!(
        out,
        "<p id=\"run-info\">harness {} &middot; driver {} &middot; providers {}</p>",
        esc(&info.harness),
        esc(&info.driver),
        esc(&info.providers.join(", "))
    );
    let _ = writeln!(out, "<p id=\"summary\">{}</p>", esc(&crate::summary(trials)));
    out.push_str("<table id=\"matrix\"><thead><tr><th>scenario</th>");
    for (driver, provider) in &columns {
        let _ = write!(out, "<th>{}<br>{}</th>", esc(driver), esc(provider));
    }
    out.push_str("</tr></thead><tbody>\n");
    for (scenario, cells) in &rows {
        let _ = write!(out, "<tr><th scope=\"row\">{}</th>", esc(scenario));
        for col in &columns {
            match cells.get(col) {
                None => out.push_str("<td class=\"none\"></td>"),
                Some(t) => {
                    let (class, label) = match t.outcome {
                        Outcome::Pass => ("pass", "pass"),
                        Outcome::Fail => ("fail", "FAIL"),
                        Outcome::Skip => ("skip", "skip"),
                        Outcome::ExpectedFail => ("xfail", "xfail"),
                        Outcome::UnexpectedPass => ("xpass", "XPASS"),
                        Outcome::Interrupted => ("intr", "interrupted"),
                    };
                    let title: Vec<String> = t.note.iter().cloned().chain(t.mismatches.iter().map(|m| {
                        format!("{} {}: expected {}, got {}", m.at, m.field, m.expected, m.actual)
                    })).collect();
                    let _ = write!(out, "<td class=\"{class}\" title=\"{}\">{label}</td>", esc(&title.join("\n")));
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    criteria_table(&mut out, info, trials, &drivers);
    out.push_str("</body></html>\n");
    out
}

/// Each criterion with its words and, per driver, how the trials of its
/// scenarios went.
fn criteria_table(out: &mut String, info: &RunInfo, trials: &[Trial], drivers: &[&str]) {
    if info.criteria.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h2>Criteria</h2>");
    out.push_str("<table id=\"criteria\"><thead><tr><th>criterion</th><th>words</th><th>scenarios</th>");
    for d in drivers {
        let _ = write!(out, "<th>{}</th>", esc(d));
    }
    out.push_str("</tr></thead><tbody>\n");
    let mut group = "";
    for c in &info.criteria {
        if c.group != group {
            group = &c.group;
            let _ = writeln!(out, "<tr><th colspan=\"{}\" class=\"group\">{}</th></tr>", 3 + drivers.len(), esc(group));
        }
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td>",
            esc(&c.tag),
            esc(&c.text),
            esc(&c.scenarios.join(", "))
        );
        for d in drivers {
            let mine: Vec<Trial> = trials.iter().filter(|t| t.driver == *d && c.scenarios.contains(&t.scenario)).cloned().collect();
            let failing = mine.iter().any(|t| matches!(t.outcome, Outcome::Fail | Outcome::UnexpectedPass));
            let interrupted = !mine.is_empty() && mine.iter().all(|t| t.outcome == Outcome::Interrupted);
            let class = if mine.is_empty() { "none" } else if failing { "fail" } else if interrupted { "intr" } else { "pass" };
            let label = if mine.is_empty() { "not run".to_string() } else { esc(&crate::summary(&mine)) };
            let _ = write!(out, "<td class=\"{class}\">{label}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
