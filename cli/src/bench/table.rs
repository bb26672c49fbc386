//! The readable table of a bench report (`--format table`).

use super::BenchReport;
use crate::table;

/// What the three topics' replays held at their peaks, each measured in a fresh process.
fn replays_memory(r: &BenchReport) -> Option<u64> {
    Some(
        r.config.config_replay_peak_memory_bytes?
            + r.status.status_replay_peak_memory_bytes?
            + r.offsets.offsets_memory_bytes?,
    )
}

/// The report as a readable table.
pub(super) fn render_table(r: &BenchReport) -> String {
    let count = |n: u64| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let per_sec = |x: f64| format!("{} records/s", count(x.round() as u64));
    let mib = |b: Option<u64>| {
        b.map_or("n/a".to_string(), |b| {
            format!("{:.1} MiB", b as f64 / 1048576.0)
        })
    };
    let opt = |x: Option<f64>, unit: &str| x.map_or("n/a".to_string(), |x| format!("{x:.2}{unit}"));
    let row =
        |what: &str, value: String, goal: &str| vec![what.to_string(), value, goal.to_string()];
    let both = |a: Option<f64>, b: Option<f64>, unit: &str| match (a, b) {
        (Some(a), Some(b)) => format!("{a:.2}{unit} / {b:.2}{unit}"),
        _ => "n/a".to_string(),
    };
    let cpu_pair = |raw: Option<f64>, inspect: Option<f64>| both(raw, inspect, " s");
    let pair = |measured: Option<f64>, floor: Option<f64>| both(measured, floor, "x");
    let rows = vec![
        row(
            "config topic",
            format!(
                "{} connectors, {} tasks, {} records, {:.1} MB",
                count(r.config.config_connectors),
                count(r.config.config_tasks),
                count(r.config.config_records),
                r.config.config_bytes as f64 / 1e6
            ),
            "",
        ),
        row(
            "config replay",
            format!(
                "{} ({:.0} MB/s)",
                per_sec(r.config.config_replay_records_per_sec),
                r.config.config_replay_mb_per_sec
            ),
            "",
        ),
        row(
            "parse floor",
            per_sec(r.config.parse_floor_records_per_sec),
            "",
        ),
        row(
            "replay / floor",
            format!("{:.2}", r.config.replay_to_floor_ratio),
            ">= 0.5",
        ),
        row(
            "SIMD floor (sonic-rs DOM)",
            per_sec(r.config.simd_floor_records_per_sec),
            "",
        ),
        row(
            "replay / SIMD floor",
            format!("{:.2}", r.config.replay_to_simd_floor_ratio),
            ">= 0.5",
        ),
        row(
            "config replay peak memory",
            mib(r.config.config_replay_peak_memory_bytes),
            "",
        ),
        row(
            "checkpoint restart",
            format!(
                "{:.4} s (checkpoint {:.1} MiB + {} tail records) vs full replay {:.3} s",
                r.config.checkpoint_restart_seconds,
                r.config.checkpoint_bytes as f64 / 1048576.0,
                count(r.config.checkpoint_tail_records),
                r.config.full_replay_seconds
            ),
            "",
        ),
        row(
            "checkpoint speedup",
            format!("{:.1}x", r.config.checkpoint_speedup),
            ">= 20x",
        ),
        row(
            "status topic",
            format!(
                "{} connectors, {} records",
                count(r.status.status_connectors),
                count(r.status.status_records)
            ),
            "",
        ),
        row(
            "status replay",
            per_sec(r.status.status_replay_records_per_sec),
            "",
        ),
        row(
            "status replay peak memory",
            mib(r.status.status_replay_peak_memory_bytes),
            "",
        ),
        row(
            "offsets topic",
            format!(
                "{} source partitions, {} records, {} live ({:.1} MB raw)",
                count(r.offsets.offsets_source_partitions),
                count(r.offsets.offsets_records),
                count(r.offsets.offsets_live_entries),
                r.offsets.offsets_live_raw_bytes as f64 / 1e6
            ),
            "",
        ),
        row(
            "offsets replay",
            per_sec(r.offsets.offsets_replay_records_per_sec),
            "",
        ),
        row(
            "offsets replay, streamed cold",
            per_sec(r.offsets.offsets_stream_replay_records_per_sec),
            "",
        ),
        row(
            "offsets memory",
            format!(
                "{} ({} bytes per live entry)",
                mib(r.offsets.offsets_memory_bytes),
                opt(r.offsets.offsets_memory_bytes_per_entry, "")
            ),
            "",
        ),
        row(
            "offsets memory / raw bytes",
            opt(r.offsets.offsets_memory_ratio, "x"),
            "<= 2x",
        ),
        row(
            "offsets resident after catch-up (freed memory not yet returned included)",
            mib(r.offsets.offsets_resident_bytes),
            "",
        ),
        row(
            "offsets tail per record, no snapshot held",
            format!("{:.2} us", r.offsets.tail_record_seconds * 1e6),
            "",
        ),
        row(
            "offsets tail per record, a snapshot held after each",
            format!(
                "{:.2} us",
                r.offsets.tail_with_snapshot_record_seconds * 1e6
            ),
            "",
        ),
        row(
            "tail with snapshot / without",
            format!("{:.2}x", r.offsets.tail_with_snapshot_ratio),
            "<= 3x",
        ),
        row(
            "history of the three topics",
            format!(
                "{:.3} s for {} changes from {} records, vs replay {:.3} s",
                r.history.history_seconds,
                count(r.history.history_entries),
                count(r.history.history_records),
                r.history.history_replay_seconds
            ),
            "",
        ),
        row(
            "/metrics scrape",
            format!(
                "{:.3} s for {} series ({:.1} MB) of {} connectors; memory growth over 20 scrapes {}",
                r.metrics.metrics_scrape_seconds,
                count(r.metrics.metrics_series),
                r.metrics.metrics_bytes as f64 / 1e6,
                count(r.metrics.metrics_connectors),
                mib(r.metrics.metrics_scrape_memory_growth_bytes)
            ),
            "",
        ),
        row(
            "history / replay",
            format!("{:.2}x", r.history.history_to_replay_ratio),
            "<= 2x",
        ),
        row(
            "history peak memory (the three replays')",
            format!(
                "{} ({})",
                mib(r.history.history_peak_memory_bytes),
                mib(replays_memory(r))
            ),
            "",
        ),
        row(
            "outputs: two offsets states (every partition differs)",
            format!(
                "{} ({} partitions each)",
                mib(r.outputs.outputs_states_bytes),
                count(r.outputs.outputs_partitions)
            ),
            "",
        ),
        row(
            "outputs: replay --format json peak over the states",
            mib(r.outputs.outputs_replay_json_peak_bytes),
            "bounded by the state",
        ),
        row(
            "outputs: replay --format json of a side / its replay",
            format!(
                "{:.2}x ({:.2} s vs {:.2} s)",
                r.outputs.outputs_replay_json_to_replay_ratio,
                r.outputs.outputs_replay_json_seconds,
                r.outputs.outputs_replay_seconds
            ),
            "",
        ),
        row(
            "outputs: diff json / table / same sides, peak over the states",
            format!(
                "{} / {} / {}",
                mib(r.outputs.outputs_diff_json_peak_bytes),
                mib(r.outputs.outputs_diff_table_peak_bytes),
                mib(r.outputs.outputs_diff_same_peak_bytes)
            ),
            "bounded by the states",
        ),
        row(
            "outputs: offsets import, memory per entry",
            format!(
                "{} bytes ({} entries)",
                r.outputs
                    .outputs_import_bytes_per_entry
                    .map_or("n/a".into(), |b| format!("{b:.0}")),
                count(r.outputs.outputs_import_entries)
            ),
            "< 1 KB",
        ),
        row(
            "backup: the config and offsets states backed up",
            format!(
                "{} ({} connectors, {} source partitions)",
                mib(r.backup.backup_state_bytes),
                count(r.backup.backup_connectors),
                count(r.backup.backup_source_partitions)
            ),
            "",
        ),
        row(
            "backup: time, peak over the states, document size",
            format!(
                "{:.2} s, {}, {}",
                r.backup.backup_seconds,
                mib(r.backup.backup_peak_bytes),
                mib(Some(r.backup.backup_document_bytes))
            ),
            "peak below the states",
        ),
        row(
            "restore (checked, planned, every record built): time, peak",
            format!(
                "{:.2} s, {} ({} records)",
                r.backup.restore_seconds,
                mib(r.backup.restore_peak_bytes),
                count(r.backup.restore_records)
            ),
            "peak below the states",
        ),
        row(
            "serve's tailer: start (three topics read, first value published)",
            format!(
                "{:.3} s ({} records)",
                r.tail.tail_start_seconds,
                count(r.tail.tail_records)
            ),
            "",
        ),
        row(
            "serve's tailer: refresh / publish after offsets commits",
            format!(
                "{:.4} s / {:.4} s ({} commits each, median of 20)",
                r.tail.tail_refresh_seconds,
                r.tail.tail_publish_seconds,
                r.tail.tail_commits_per_refresh
            ),
            "",
        ),
        row("inspect (broker)", opt(r.broker.inspect_seconds, " s"), ""),
        row(
            "raw librdkafka read",
            opt(r.broker.raw_read_seconds, " s"),
            "",
        ),
        row(
            "inspect / raw read",
            opt(r.broker.inspect_to_raw_ratio, "x"),
            "<= 1.3x",
        ),
        row(
            "machine CPU per read (raw / inspect; broker included)",
            cpu_pair(r.broker.raw_read_cpu_seconds, r.broker.inspect_cpu_seconds),
            "",
        ),
        row(
            "inspect / raw read, means: measured / floor for that CPU on every core",
            pair(r.broker.inspect_mean_to_raw_ratio, r.broker.inspect_cpu_floor_ratio),
            "",
        ),
        row(
            "Java Connect worker start to config read",
            opt(r.broker.connect_worker_startup_seconds, " s"),
            "",
        ),
        row(
            "worker start-up / inspect",
            opt(r.broker.worker_startup_to_inspect_ratio, "x"),
            ">= 20x",
        ),
        row(
            "inspect of the three topics (broker)",
            opt(r.all_topics.inspect_all_seconds, " s"),
            "",
        ),
        row(
            "raw reads of the three topics at once",
            opt(r.all_topics.raw_read_all_seconds, " s"),
            "",
        ),
        row(
            "inspect / raw read, three topics",
            opt(r.all_topics.inspect_all_to_raw_ratio, "x"),
            "<= 1.3x",
        ),
        row(
            "inspect of the three topics, in a fresh process",
            opt(r.all_topics.inspect_all_fresh_seconds, " s"),
            "",
        ),
        row(
            "the same / raw read",
            opt(r.all_topics.inspect_all_fresh_to_raw_ratio, "x"),
            "",
        ),
        row(
            "machine CPU per read of the three (raw / inspect)",
            cpu_pair(
                r.all_topics.raw_read_all_cpu_seconds,
                r.all_topics.inspect_all_cpu_seconds,
            ),
            "",
        ),
        row(
            "the same ratio, means: measured / floor for that CPU on every core",
            pair(
                r.all_topics.inspect_all_mean_to_raw_ratio,
                r.all_topics.inspect_all_cpu_floor_ratio,
            ),
            "",
        ),
        row(
            "serve freshness, p50 (status record produced to shown)",
            opt(r.all_topics.serve_freshness_p50_seconds, " s"),
            "",
        ),
        row(
            "serve freshness, p99",
            opt(r.all_topics.serve_freshness_p99_seconds, " s"),
            "<= 0.1 s",
        ),
    ];
    let mut rows = rows;
    if let Some(version) = &r.java.java_version {
        let j = &r.java;
        let vs = |rate: Option<f64>, ours_over: Option<f64>| {
            format!(
                "{} (ours {} faster)",
                rate.map_or("n/a".into(), per_sec),
                opt(ours_over, "x")
            )
        };
        rows.push(row(
            &format!(
                "Java {} stores on Java {version}: config replay",
                j.java_kafka_version.as_deref().unwrap_or("?")
            ),
            vs(
                j.java_config_replay_records_per_sec,
                j.config_replay_to_java_ratio,
            ),
            "",
        ));
        rows.push(row(
            "Java: status replay",
            vs(
                j.java_status_replay_records_per_sec,
                j.status_replay_to_java_ratio,
            ),
            "",
        ));
        rows.push(row(
            "Java: offsets replay",
            vs(
                j.java_offsets_replay_records_per_sec,
                j.offsets_replay_to_java_ratio,
            ),
            "",
        ));
        rows.push(row(
            "Java: offsets heap",
            format!(
                "{} ({} bytes per live entry); ours / Java {}",
                mib(j.java_offsets_heap_bytes),
                opt(j.java_offsets_heap_bytes_per_entry, ""),
                opt(j.offsets_memory_to_java_ratio, "x")
            ),
            "",
        ));
    }
    if let Some(version) = &r.python.python_version {
        let p = &r.python;
        let vs = |rate: Option<f64>, over_ours: Option<f64>| {
            format!(
                "{} ({} of ours)",
                rate.map_or("n/a".into(), per_sec),
                opt(over_ours, "x")
            )
        };
        rows.push(row(
            &format!("Python {version} (handle_records): config replay"),
            vs(
                p.python_config_replay_records_per_sec,
                p.python_config_to_rust_ratio,
            ),
            ">= 0.7x",
        ));
        rows.push(row(
            "Python: status replay",
            vs(
                p.python_status_replay_records_per_sec,
                p.python_status_to_rust_ratio,
            ),
            ">= 0.7x",
        ));
        rows.push(row(
            "Python: offsets replay",
            vs(
                p.python_offsets_replay_records_per_sec,
                p.python_offsets_to_rust_ratio,
            ),
            ">= 0.7x",
        ));
    }
    let mut out = format!(
        "connect-state bench: scale {}, seed {}, best of {} runs, {:.1} s in all\n\n",
        r.scale, r.seed, r.runs, r.total_seconds
    );
    out.push_str(&table::render(&["MEASURE", "RESULT", "GOAL"], &rows));
    out
}
