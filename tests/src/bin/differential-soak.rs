//! The soak run of the differential tests: many generated cases through the core and the Java
//! oracle, each compared under the README's deliberate differences, then one line
//! `N cases, D differences`.
//!
//! ```sh
//! cargo run --release -p connect-state-tests --bin differential-soak -- --cases 120000 [--seed N]
//! ```
//!
//! The cases are split evenly over the six generators (config, status and offsets logs; config,
//! status and offsets write calls). Exits 1 if any case differs (the first few are printed in
//! full), 2 if the oracle cannot run.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use connect_state_tests::cases::{config_case, offsets_case, status_case};
use connect_state_tests::differential::{judge, Deliberate, Difference};
use connect_state_tests::oracle::{oracle, Oracle};
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

const GENERATORS: [Generator; 6] = [
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
            let base = draw(r, config_case());
            let writes = draw(r, vec(config_write(), 1..6));
            judge_config_writes(o, &base, &writes)
        },
    },
    Generator {
        name: "status writes",
        run: |r, o| {
            let base = draw(r, status_case());
            let writes = draw(r, vec(status_write(), 1..8));
            judge_status_writes(o, &base, &writes, 5)
        },
    },
    Generator {
        name: "offsets writes",
        run: |r, o| {
            let base = draw(r, offsets_case());
            let writes = draw(r, vec(offsets_write(), 1..5));
            judge_offsets_writes(o, &base, &writes, 25)
        },
    },
];

fn usage() -> ExitCode {
    eprintln!("usage: differential-soak [--cases N] [--seed N]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut cases: u64 = 120_000;
    let mut seed: u64 = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|v| v.parse::<u64>().ok());
        match (arg.as_str(), value) {
            ("--cases", Some(v)) => cases = v,
            ("--seed", Some(v)) => seed = v,
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
