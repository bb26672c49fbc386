//! `connect-state doctor`: examine the internal topics for the states that make Connect
//! misbehave, each finding with its evidence (where the records are) and a repair hint.
//!
//! Checks that need a topic that was not given are listed as skipped, never guessed.

use std::io::Write;

use clap::Args;

use crate::common::{CliError, Exit, Format};
use crate::source::SourceArgs;
use crate::table::shown;
use engine::TopicKind;

/// Options of `doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Where the topics come from.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format: readable findings, or one JSON object for scripts.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub use connect_state_ops::doctor::{examine, Evidence, Examination, Finding, Report};

/// Runs `doctor`: findings on `out`, [`Exit::Findings`] when there are any.
pub fn run(args: DoctorArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let topics = args
        .source
        .load(&[TopicKind::Config, TopicKind::Status, TopicKind::Offsets])?;
    let report = examine(&Examination::of(&topics));
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
        Format::Table => out.write_all(render(&report).as_bytes())?,
    }
    Ok(if report.findings.is_empty() {
        Exit::Success
    } else {
        Exit::Findings
    })
}

/// The readable form of a report.
pub fn render(report: &Report) -> String {
    use core::fmt::Write as _;
    let mut out = String::new();
    let read = if report.topics.is_empty() {
        "no topics".to_string()
    } else {
        report.topics.join(", ")
    };
    // Summaries, hints and keys hold names from the topics: shown escaped.
    for (i, f) in report.findings.iter().enumerate() {
        let _ = writeln!(out, "{}. [{}] {}", i + 1, f.check, shown(&f.summary));
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "     evidence: {} partition {} offset {}  key {}",
                e.topic,
                e.partition,
                e.offset,
                shown(&e.key)
            );
        }
        let _ = writeln!(out, "     fix: {}\n", shown(&f.hint));
    }
    for skipped in &report.skipped_checks {
        let _ = writeln!(out, "skipped: {skipped}");
    }
    if report.findings.is_empty() {
        let _ = writeln!(out, "Healthy: no findings (read: {read}).");
    } else {
        let _ = writeln!(out, "{} finding(s) (read: {read}).", report.findings.len());
    }
    out
}
