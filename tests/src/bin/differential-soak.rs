//! The soak run of the differential tests: many generated cases through the core and the Java
//! oracle, each compared under the README's deliberate differences, then one line
//! `N cases, D differences`.
//!
//! ```sh
//! cargo run --release -p connect-state-tests --bin differential-soak -- --cases 120000 [--seed N]
//! ```
//!
//! The cases are split evenly over the nine generators (config, status and offsets logs; config,
//! status and offsets write calls; the logs again, the core restored from a checkpoint taken at a
//! random record). Exits 1 if any case differs (the first few are printed in
//! full), 2 if the oracle cannot run.
//!
//! `--versus-kafka 3.9.2` compares two Java versions instead: every case goes to the oracle at
//! the pom's Kafka version and at the one given, and their answers are compared; the output is
//! a count of cases per kind of disagreement, each with its smallest example.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use connect_state_tests::cases::{
    config_base, config_case, offsets_base, offsets_case, status_base, status_case,
};
use connect_state_tests::differential::{
    java_case as java_case_of, judge, judge_restarted, kcat_lines, Deliberate, Difference,
};
use connect_state_tests::oracle::{oracle, Case, JavaAnswer, Json, Oracle};
use connect_state_tests::writes::{
    config_write, judge_config_writes, judge_offsets_writes, judge_status_writes, offsets_write,
    status_write,
};
use proptest::collection::vec;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

type Outcome = Result<std::collections::BTreeSet<Deliberate>, Difference>;

/// One generator: a name and a function that draws a case and judges it.
struct Generator {
    name: &'static str,
    run: fn(&mut TestRunner, &mut Oracle) -> Outcome,
}

fn draw<S: Strategy>(runner: &mut TestRunner, strategy: S) -> S::Value {
    strategy
        .new_tree(runner)
        .expect("the generators never reject")
        .current()
}

const GENERATORS: [Generator; 9] = [
    Generator {
        name: "config logs",
        run: |r, o| judge(o, &draw(r, config_case())),
    },
    Generator {
        name: "status logs",
        run: |r, o| judge(o, &draw(r, status_case())),
    },
    Generator {
        name: "offsets logs",
        run: |r, o| judge(o, &draw(r, offsets_case())),
    },
    Generator {
        name: "config writes",
        run: |r, o| {
            let base = draw(r, config_base());
            let writes = draw(r, vec(config_write(), 1..6));
            judge_config_writes(o, &base, &writes)
        },
    },
    Generator {
        name: "status writes",
        run: |r, o| {
            let base = draw(r, status_base());
            let writes = draw(r, vec(status_write(), 1..8));
            judge_status_writes(o, &base, &writes, 5)
        },
    },
    Generator {
        name: "offsets writes",
        run: |r, o| {
            let base = draw(r, offsets_base());
            let writes = draw(r, vec(offsets_write(), 1..5));
            judge_offsets_writes(o, &base, &writes, 25)
        },
    },
    Generator {
        name: "config logs restored",
        run: |r, o| judge_restarted(o, &draw(r, config_case()), draw(r, 0.0..1.0f64)),
    },
    Generator {
        name: "status logs restored",
        run: |r, o| judge_restarted(o, &draw(r, status_case()), draw(r, 0.0..1.0f64)),
    },
    Generator {
        name: "offsets logs restored",
        run: |r, o| judge_restarted(o, &draw(r, offsets_case()), draw(r, 0.0..1.0f64)),
    },
];

fn usage() -> ExitCode {
    eprintln!("usage: differential-soak [--cases N] [--seed N] [--versus-kafka VERSION]");
    ExitCode::from(2)
}

/// Draws the Java case of one generator (write calls included).
fn java_case(g: usize, r: &mut TestRunner) -> Case {
    let mut case = match g {
        0 | 6 => draw(r, config_case()),
        1 | 7 => draw(r, status_case()),
        2 | 8 => draw(r, offsets_case()),
        3 => draw(r, config_base()),
        4 => draw(r, status_base()),
        _ => draw(r, offsets_base()),
    };
    case.writes = match g {
        3 => draw(r, vec(config_write(), 1..6))
            .iter()
            .map(|w| w.call())
            .collect(),
        4 => draw(r, vec(status_write(), 1..8))
            .iter()
            .map(|w| w.call())
            .collect(),
        5 => draw(r, vec(offsets_write(), 1..5))
            .iter()
            .map(|w| w.call())
            .collect(),
        _ => Vec::new(),
    };
    case.partitions = match g {
        4 => Some(5),
        5 => Some(25),
        _ => None,
    };
    java_case_of(&case)
}

/// Where two Java answers differ: the first snapshot member, or events, exceptions, writes.
fn disagreement(a: &JavaAnswer, b: &JavaAnswer) -> Option<String> {
    if let (Json::Object(x), Json::Object(_)) = (&a.snapshot, &b.snapshot) {
        for (name, value) in x {
            if b.snapshot.get(name) != Some(value) {
                return Some(format!("snapshot.{name}"));
            }
        }
    }
    if a.snapshot != b.snapshot {
        return Some("snapshot".into());
    }
    if a.events != b.events {
        return Some("events".into());
    }
    if a.trace != b.trace {
        return Some("trace".into());
    }
    let thrown = |x: &JavaAnswer| {
        x.exceptions
            .iter()
            .map(|e| (e.class.clone(), e.phase, e.partition, e.offset))
            .collect::<Vec<_>>()
    };
    if thrown(a) != thrown(b) {
        return Some("exceptions".into());
    }
    let written = |x: &JavaAnswer| {
        x.writes
            .iter()
            .map(|w| (w.records.clone(), w.error.as_ref().map(|e| e.class.clone())))
            .collect::<Vec<_>>()
    };
    (written(a) != written(b)).then(|| "writes".into())
}

/// The differences between Kafka versions the README documents (its table under "Java is
/// the judge"): `(the other version, the generator, the kinds of disagreement)`. All are on the
/// status topic (statuses carry a `version` since 4.1).
const KNOWN_VERSION_DIFFERENCES: &[(&str, &str, &[&str])] = &[
    (
        "3.9.2",
        "status logs",
        &["snapshot.connectors", "snapshot.tasks", "trace"],
    ),
    (
        "3.9.2",
        "status logs restored",
        &["snapshot.connectors", "snapshot.tasks", "trace"],
    ),
    (
        "3.9.2",
        "status writes",
        &["snapshot.connectors", "snapshot.tasks", "trace", "writes"],
    ),
];

/// Whether a disagreement between the pom's Kafka and `other` is a documented one.
fn known(other: &str, generator: &str, kind: &str) -> bool {
    KNOWN_VERSION_DIFFERENCES
        .iter()
        .any(|(version, g, kinds)| *version == other && *g == generator && kinds.contains(&kind))
}

/// Compares the pom's Kafka version with `other` over `cases` generated cases; fails when they
/// disagree outside [`KNOWN_VERSION_DIFFERENCES`].
fn versus(first: &mut Oracle, other: &str, cases: u64, runner: &mut TestRunner) -> ExitCode {
    let mut second = match Oracle::start_with(Some(other)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: the oracle at Kafka {other} cannot run: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "comparing Kafka {} with Kafka {} on Java {} over {cases} cases",
        first.kafka_version, second.kafka_version, first.java_version
    );
    // Per kind of disagreement: how many cases, and the smallest example.
    let mut kinds: BTreeMap<(String, &str), (u64, Case, JavaAnswer, JavaAnswer)> = BTreeMap::new();
    for i in 0..cases {
        let g = (i % GENERATORS.len() as u64) as usize;
        let case = java_case(g, runner);
        let a = first.run(&case);
        let b = second.run(&case);
        if let Some(kind) = disagreement(&a, &b) {
            let size = |c: &Case| c.records.len() + c.writes.len();
            let entry = kinds
                .entry((kind, GENERATORS[g].name))
                .or_insert_with(|| (0, case.clone(), a.clone(), b.clone()));
            entry.0 += 1;
            if size(&case) < size(&entry.1) {
                (entry.1, entry.2, entry.3) = (case, a, b);
            }
        }
    }
    for ((kind, generator), (n, case, a, b)) in &kinds {
        eprintln!("--- {kind} ({generator}): {n} cases; the smallest ---");
        eprint!("{}", kcat_lines(&case.records));
        for w in &case.writes {
            eprintln!("write {w}");
        }
        let show = |x: &JavaAnswer| match kind.strip_prefix("snapshot.") {
            Some(member) => x
                .snapshot
                .get(member)
                .map_or("(absent)".into(), ToString::to_string),
            None if kind == "events" => x
                .events
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" "),
            None if kind == "exceptions" => format!("{:?}", x.exceptions),
            None => x
                .writes
                .iter()
                .flat_map(|w| w.records.iter().map(ToString::to_string))
                .collect::<Vec<_>>()
                .join("; "),
        };
        eprintln!("  Kafka {}: {}", first.kafka_version, show(a));
        eprintln!("  Kafka {}: {}", second.kafka_version, show(b));
    }
    let differing: u64 = kinds.values().map(|k| k.0).sum();
    let unknown: Vec<String> = kinds
        .iter()
        .filter(|((kind, generator), _)| !known(other, generator, kind))
        .map(|((kind, generator), (n, ..))| format!("{kind} ({generator}, {n} cases)"))
        .collect();
    println!(
        "{cases} cases, {differing} where Kafka {} and Kafka {} disagree, {} of them outside \
         the known differences",
        first.kafka_version,
        second.kafka_version,
        unknown.len()
    );
    if unknown.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "disagreements the README does not list: {}",
            unknown.join(", ")
        );
        ExitCode::from(1)
    }
}

fn main() -> ExitCode {
    let mut cases: u64 = 120_000;
    let mut seed: u64 = 1;
    let mut versus_kafka: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let Some(value) = args.next() else {
            return usage();
        };
        match (arg.as_str(), value.parse::<u64>()) {
            ("--cases", Ok(v)) => cases = v,
            ("--seed", Ok(v)) => seed = v,
            ("--versus-kafka", _) => versus_kafka = Some(value),
            _ => return usage(),
        }
    }
    let Some(mut oracle) = oracle() else {
        eprintln!("error: the Java oracle cannot run (see above)");
        return ExitCode::from(2);
    };
    eprintln!(
        "judging {cases} cases (seed {seed}) against Kafka {} on Java {}",
        oracle.kafka_version, oracle.java_version
    );
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    if let Some(other) = versus_kafka {
        return versus(&mut oracle, &other, cases, &mut runner);
    }
    let started = Instant::now();
    let mut differences = 0u64;
    let mut applied: BTreeMap<Deliberate, u64> = BTreeMap::new();
    let mut per_generator = [0u64; GENERATORS.len()];
    for i in 0..cases {
        let g = (i % GENERATORS.len() as u64) as usize;
        per_generator[g] += 1;
        match (GENERATORS[g].run)(&mut runner, &mut oracle) {
            Ok(rules) => {
                for rule in rules {
                    *applied.entry(rule).or_default() += 1;
                }
            }
            Err(difference) => {
                differences += 1;
                if differences <= 5 {
                    eprintln!("--- {} (case {i}) ---\n{difference}", GENERATORS[g].name);
                }
            }
        }
        if (i + 1) % 10_000 == 0 {
            eprintln!(
                "{} cases, {differences} differences so far ({:.0?})",
                i + 1,
                started.elapsed()
            );
        }
    }
    for (g, n) in GENERATORS.iter().zip(per_generator) {
        eprintln!("  {n} cases of {}", g.name);
    }
    for (rule, n) in &applied {
        eprintln!(
            "  deliberate difference {} ({rule:?}) applied in {n} cases",
            rule.readme_item()
        );
    }
    eprintln!("  {:.1?} in all", started.elapsed());
    println!("{cases} cases, {differences} differences");
    if differences == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
