//! `connect-state diff`: two sources compared (dumps, live clusters, either `--as-of` a past
//! point). Exit status 1 when they differ.

use std::io::Write;

use clap::{Args, Parser};
use connect_state_ops::diff::{compare, Difference, Side};
use serde_json::Value;

use crate::common::{CliError, Exit, Format};
use crate::source::SourceArgs;
use crate::table::shown;
use engine::TopicKind;

/// The word between the two sides.
pub const AGAINST: &str = "--against";

/// Options of `diff`.
#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// Output format: readable lines, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Show config values whose names look secret; masked as `[hidden]` otherwise.
    #[arg(long)]
    pub show_secrets: bool,
    /// Side A's source options, then `--against`, then side B's: each side takes the options
    /// of `doctor` (`--from-dump TOPIC=FILE ...` or `--bootstrap-servers ...`, and `--as-of`).
    #[arg(
        value_name = "SIDE_A --against SIDE_B",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true
    )]
    pub sides: Vec<String>,
}

/// One side's options, parsed on their own.
#[derive(Debug, Parser)]
#[command(name = "diff side", no_binary_name = true)]
struct SideArgs {
    #[command(flatten)]
    source: SourceArgs,
}

/// Runs `diff`: the differences on `out`, [`Exit::Findings`] when there are any.
pub fn run(args: DiffArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let split = args
        .sides
        .iter()
        .position(|a| a == AGAINST)
        .ok_or_else(|| {
            CliError::Input(format!(
                "diff needs two sides: SIDE_A {AGAINST} SIDE_B (e.g. --from-dump config=old.jsonl \
             {AGAINST} --from-dump config=new.jsonl)"
            ))
        })?;
    // Both sides' options are checked before either is read.
    let a = side_args(&args.sides[..split], "A")?;
    let b = side_args(&args.sides[split + 1..], "B")?;
    let a = side(&a, "A")?;
    let b = side(&b, "B")?;
    let difference = compare(&a, &b, args.show_secrets);
    match args.format {
        Format::Json => crate::view::write_pretty(out, &difference)?,
        Format::Table => {
            let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, out);
            render(&difference, &mut buffered)?;
            buffered.flush()?;
        }
    }
    Ok(if difference.differs() {
        Exit::Findings
    } else {
        Exit::Success
    })
}

/// A side's options, parsed and checked (nothing is read yet).
fn side_args(args: &[String], name: &str) -> Result<SourceArgs, CliError> {
    let parsed = SideArgs::try_parse_from(args)
        .map_err(|e| CliError::Input(format!("side {name}: {}", e.render().to_string().trim())))?;
    parsed
        .source
        .check(&[TopicKind::Config, TopicKind::Offsets])
        .map_err(|e| CliError::Input(format!("side {name}: {e}")))?;
    Ok(parsed.source)
}

fn side(source: &SourceArgs, name: &str) -> Result<Side, CliError> {
    let topics = source
        .load(&[TopicKind::Config, TopicKind::Offsets])
        .map_err(|e| CliError::Input(format!("side {name}: {e}")))?;
    let config = topics.config.ok_or_else(|| {
        CliError::Input(format!(
            "side {name}: give its config topic (--from-dump config=FILE or --config-topic NAME)"
        ))
    })?;
    Ok(Side {
        config: config.state.machine.snapshot(),
        offsets: topics.offsets.map(|o| o.state.machine.snapshot()),
    })
}

/// Writes the readable form of a difference, a line at a time.
pub fn render(difference: &Difference<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    if !difference.differs() {
        return writeln!(out, "No differences.");
    }
    let names = |list: &[&str]| {
        list.iter()
            .map(|c| shown(c).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !difference.only_in_a.is_empty() {
        writeln!(out, "Only in A: {}", names(&difference.only_in_a))?;
    }
    if !difference.only_in_b.is_empty() {
        writeln!(out, "Only in B: {}", names(&difference.only_in_b))?;
    }
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "none".into(),
        Some(other) => other.to_string(),
    };
    for (connector, found) in &difference.connectors {
        writeln!(out, "{}:", shown(connector))?;
        if let Some(diff) = &found.config {
            for (name, change) in diff["changed"].as_object().into_iter().flatten() {
                writeln!(
                    out,
                    "  config {}: {} -> {}",
                    shown(name),
                    shown(&text(change.get("from"))),
                    shown(&text(change.get("to")))
                )?;
            }
            for (name, value) in diff["added"].as_object().into_iter().flatten() {
                writeln!(
                    out,
                    "  config +{} = {}",
                    shown(name),
                    shown(&text(Some(value)))
                )?;
            }
            for (name, _) in diff["removed"].as_object().into_iter().flatten() {
                writeln!(out, "  config -{}", shown(name))?;
            }
        }
        let none = || "none".to_string();
        if let Some((a, b)) = found.target_state {
            let (a, b) = (
                a.map_or_else(none, str::to_string),
                b.map_or_else(none, str::to_string),
            );
            writeln!(out, "  target state: {a} -> {b}")?;
        }
        if let Some((a, b)) = found.task_count {
            writeln!(out, "  task count: {a} -> {b}")?;
        }
        for offset in &found.offsets {
            let offset = offset.to_json();
            writeln!(
                out,
                "  offset {}: {} -> {}",
                shown(&text(offset.get("partition"))),
                shown(&text(offset.get("a"))),
                shown(&text(offset.get("b")))
            )?;
        }
    }
    Ok(())
}
