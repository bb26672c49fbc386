//! Criterion benchmarks of the replay paths over the synthetic topics of
//! `connect_state_cli::synth` (small scale, so `cargo bench -p connect-state-cli` takes a few
//! minutes). `connect-state bench` measures the same paths at full size, with memory.

use criterion::{BatchSize, Criterion, Throughput};
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::OwnedRecord;

use connect_state_cli::bench::{parse_floor, replay, restart_config};
use connect_state_cli::synth::{self, Scale};

const SEED: u64 = 1;

fn config(c: &mut Criterion) {
    let topic = synth::config_topic(&Scale::SMALL, SEED);
    let records = &topic.records;
    let mut group = c.benchmark_group("config");
    group.sample_size(20);
    group.throughput(Throughput::Elements(records.len() as u64));
    group.bench_function("replay", |b| {
        b.iter_with_large_drop(|| replay::<ConfigLog>(records))
    });
    group.bench_function("parse_floor", |b| b.iter(|| parse_floor(records)));
    let cut = records.len() - records.len() / 100;
    let checkpoint = replay::<ConfigLog>(&records[..cut]).checkpoint();
    let tail = &records[cut..];
    group.bench_function("checkpoint_restart", |b| {
        b.iter_with_large_drop(|| {
            restart_config(&checkpoint, tail).expect("the checkpoint restores")
        })
    });
    group.finish();
}

fn status(c: &mut Criterion) {
    let topic = synth::status_topic(&Scale::SMALL, SEED);
    let mut group = c.benchmark_group("status");
    group.sample_size(20);
    group.throughput(Throughput::Elements(topic.records.len() as u64));
    group.bench_function("replay", |b| {
        b.iter_with_large_drop(|| replay::<StatusLog>(&topic.records))
    });
    group.finish();
}

fn offsets(c: &mut Criterion) {
    let records: Vec<OwnedRecord> = synth::offsets_topic(&Scale::SMALL, SEED).collect();
    let mut group = c.benchmark_group("offsets");
    group.sample_size(10);
    group.throughput(Throughput::Elements(records.len() as u64));
    group.bench_function("replay", |b| {
        b.iter_with_large_drop(|| replay::<OffsetLog>(&records))
    });
    group.bench_function("generate", |b| {
        b.iter_batched(
            || synth::offsets_topic(&Scale::SMALL, SEED),
            Iterator::count,
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn main() {
    // What `criterion_group!` and `criterion_main!` expand to, without their undocumented
    // public function.
    let mut c = Criterion::default().configure_from_args();
    config(&mut c);
    status(&mut c);
    offsets(&mut c);
    c.final_summary();
}
