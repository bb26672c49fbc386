//! The committed fuzz corpora (`fuzz/corpus/<target>/seed-*`) and crash reproducers
//! (`fuzz/regressions/<target>/*`) replayed as ordinary tests through the same entry points the
//! fuzz targets call.

use std::path::Path;

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    // Seeds from the corpus directory (the fuzzer adds its own files there, not committed), and
    // every reproducer from the regressions directory.
    let sources = [
        (root.join("corpus").join(target), true),
        (root.join("regressions").join(target), false),
    ];
    let mut files = Vec::new();
    for (dir, seeds_only) in sources {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !seeds_only || name.starts_with("seed-") {
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn record_corpora_keep_every_invariant() {
    let mut count = 0;
    for (target, run) in [
        (
            "config_records",
            engine::fuzzing::config_records as fn(&[u8]),
        ),
        ("status_records", engine::fuzzing::status_records),
        ("offsets_records", engine::fuzzing::offsets_records),
        ("checkpoint", engine::fuzzing::checkpoint_bytes),
    ] {
        for (_, data) in inputs(target) {
            run(&data);
            count += 1;
        }
    }
    assert!(count >= 13, "the seed corpora are missing ({count} inputs)");
}

#[test]
fn kcat_corpus_parses_or_fails_cleanly() {
    let seeds = inputs("kcat_lines");
    assert!(!seeds.is_empty());
    for (name, data) in seeds {
        let dump = connect_state_ops::kcat::read_dump(
            data.as_slice(),
            connect_state_ops::kcat::ReadOptions::STRICT,
        );
        if name.starts_with("seed-") {
            assert!(dump.is_ok(), "{name}: {:?}", dump.err());
        }
    }
}

#[test]
fn structured_corpora_keep_every_property() {
    for (target, run) in [
        (
            "simulator",
            connect_state_tests::fuzzing::simulator as fn(&[u8]),
        ),
        ("differential", connect_state_tests::fuzzing::differential),
    ] {
        let seeds = inputs(target);
        assert!(seeds.len() >= 3, "{target}: the seed corpus is missing");
        for (_, data) in seeds {
            run(&data);
        }
    }
}

#[test]
fn structured_seeds_decode_to_real_work() {
    for (name, data) in inputs("simulator") {
        let run = connect_state_tests::fuzzing::decode_run(&data).unwrap();
        assert!(
            run.ops.len() >= 4,
            "{name} decodes to {} ops",
            run.ops.len()
        );
    }
    for (name, data) in inputs("differential") {
        let (log, _) = connect_state_tests::fuzzing::decode_log(&data).unwrap();
        assert!(log.len() >= 8, "{name} decodes to {} records", log.len());
    }
}
