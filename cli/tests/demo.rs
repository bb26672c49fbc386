//! `connect-state demo` end to end: the binary tells the story, deterministically.

use std::process::{Command, Output};

fn demo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_connect-state"))
        .arg("demo")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn story(args: &[&str]) -> String {
    let output = demo(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stderr.is_empty());
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

/// The text of step `n` (from its heading to the next one).
fn step(text: &str, n: usize) -> &str {
    let start = text
        .find(&format!("\n{n}. "))
        .unwrap_or_else(|| panic!("step {n} missing"));
    let rest = &text[start + 1..];
    let end = rest
        .find(&format!("\n{}. ", n + 1))
        .or_else(|| rest.find("\nThe end:"))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The connector the fresh worker flags and its missing task ids, from the diagnostics line
/// `  c: commit at offset O announced N task(s); missing task ids 0, 1`.
fn flagged(text: &str) -> (String, String) {
    let line = text
        .lines()
        .find(|l| l.contains(": commit at offset ") && l.contains("missing task ids"))
        .expect("an inconsistency is explained");
    let (connector, rest) = line.trim().split_once(": commit at offset ").unwrap();
    let (_, ids) = rest.split_once("missing task ids ").unwrap();
    (connector.to_string(), ids.to_string())
}

#[test]
fn the_default_story_runs_and_is_deterministic() {
    let first = story(&[]);
    assert_eq!(first, story(&[]), "the same seed prints the same story");
    assert_eq!(first, story(&["--seed", "7"]), "7 is the default seed");
    assert!(first.starts_with("connect-state demo (seed 7)"));
    assert!(first.contains("\n15. "));
}

#[test]
fn different_seeds_tell_different_stories() {
    let a = story(&["--seed", "1"]);
    let b = story(&["--seed", "2"]);
    assert_ne!(a, b);
    assert_eq!(a, story(&["--seed", "1"]));
}

#[test]
fn the_fresh_worker_flags_the_connector_then_every_reader_converges() {
    for seed in ["7", "1", "99"] {
        let text = story(&["--seed", seed]);
        let (connector, ids) = flagged(step(&text, 7));
        assert!(
            step(&text, 7)
                .starts_with(&format!("7. A fresh worker flags {connector} inconsistent")),
            "{seed}"
        );
        assert!(
            ids.starts_with('0'),
            "task 0 is always among the missing: {ids}"
        );
        assert!(step(&text, 7).contains(&format!("none (inconsistent)  missing task ids {ids}")));
        // Before the crash and compaction nobody was inconsistent; after the rewrite nobody is.
        for n in [2, 3, 4, 5, 8] {
            assert!(
                !step(&text, n).contains("(inconsistent)"),
                "{seed}: step {n}"
            );
        }
        assert!(step(&text, 8).contains("All 4 readers agree"), "{seed}");
        assert!(step(&text, 15).contains("All 5 readers agree on all three topics"));
        assert!(text.ends_with(
            "The end: 5 readers agree on all three topics. Try another story with --seed.\n"
        ));
    }
}

#[test]
fn the_offsets_reset_removes_the_connectors_partitions() {
    let text = story(&[]);
    let (connector, _) = flagged(step(&text, 7));
    let before = step(&text, 13);
    let rows = |section: &str| {
        section
            .lines()
            .filter(|l| l.trim_start().starts_with(&format!("{connector} ")))
            .count()
    };
    assert!(rows(before) > 0, "its offsets are listed before the reset");
    let reset = step(&text, 14);
    let listing = &reset[reset
        .rfind("Offsets topic:")
        .expect("the listing after the reset")..];
    assert_eq!(rows(listing), 0, "{listing}");
    assert!(listing.contains("1 live key(s)"));
    assert!(reset.contains(&format!(
        "{connector}: {} partition(s) before the reset, 0 after",
        rows(before)
    )));
    assert!(reset.contains("HTTP 400 Connectors must be in the STOPPED state"));
}

#[test]
fn json_format_and_bad_arguments() {
    let output = demo(&["--format", "json", "--seed", "5"]);
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(json["seed"], 5);
    assert_eq!(json["steps"].as_array().map(Vec::len), Some(15));
    let output = demo(&["--seed", "minus-one"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--seed"));
}
