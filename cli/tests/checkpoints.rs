//! Checkpoints from the benchmark's states (issue 14): every byte position of a sample flipped
//! and every truncation is refused by `restore` with an error, never a panic and never a
//! different state; the intact checkpoint restores the same state.

use connect_state_cli::synth::{self, Scale};
use engine::checkpoint::CheckpointError;
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::OwnedRecord;
use engine::TopicMachine;

fn replayed<M: TopicMachine + Default>(records: &[OwnedRecord]) -> M {
    let mut machine = M::default();
    for record in records {
        machine.handle_record(record.as_record()).unwrap();
    }
    machine.mark_caught_up();
    machine
}

/// Flips and truncations of `checkpoint`: each must be refused. `restore` restores a copy;
/// `same` tells whether a restored machine holds the original state.
fn every_damage_is_refused<M>(
    what: &str,
    checkpoint: &[u8],
    restore: impl Fn(&[u8]) -> Result<M, CheckpointError>,
    same: impl Fn(&M) -> bool,
) {
    eprintln!("{what}: {} bytes", checkpoint.len());
    let intact = restore(checkpoint).unwrap_or_else(|e| panic!("{what}: intact refused: {e}"));
    assert!(
        same(&intact),
        "{what}: the intact checkpoint restores another state"
    );
    // The header byte by byte, then 300 positions spread over the payload.
    let len = checkpoint.len();
    let mut positions: Vec<usize> = (0..27.min(len)).collect();
    positions.extend((0..300).map(|i| 27 + i * (len - 27) / 300));
    positions.push(len - 1);
    let mut damaged = checkpoint.to_vec();
    for &at in &positions {
        for mask in [0x01u8, 0x80, 0xFF] {
            damaged[at] ^= mask;
            if let Ok(m) = restore(&damaged) {
                panic!(
                    "{what}: byte {at} ^ {mask:#04x} accepted (same state: {})",
                    same(&m)
                );
            }
            damaged[at] ^= mask;
        }
    }
    for cut in 0..len {
        assert!(
            restore(&checkpoint[..cut]).is_err(),
            "{what}: truncated to {cut} of {len} bytes, accepted"
        );
    }
    let mut longer = checkpoint.to_vec();
    longer.push(0);
    assert!(
        restore(&longer).is_err(),
        "{what}: a trailing byte accepted"
    );
}

#[test]
fn damaged_benchmark_checkpoints_are_refused() {
    let scale = Scale::TINY;
    let config = replayed::<ConfigLog>(&synth::config_topic(&scale, 7).records);
    let config_checkpoint = config.checkpoint_at(1_700_000_000_000);
    every_damage_is_refused("config", &config_checkpoint, ConfigLog::restore, |m| {
        m.snapshot() == config.snapshot()
    });

    let status = replayed::<StatusLog>(&synth::status_topic(&scale, 7).records);
    every_damage_is_refused("status", &status.checkpoint(), StatusLog::restore, |m| {
        m.snapshot() == status.snapshot()
    });

    let records: Vec<OwnedRecord> = synth::offsets_topic(&scale, 7).collect();
    let offsets = replayed::<OffsetLog>(&records);
    every_damage_is_refused("offsets", &offsets.checkpoint(), OffsetLog::restore, |m| {
        m.snapshot() == offsets.snapshot()
    });
    // Each kind refuses the others' checkpoints.
    assert!(matches!(
        StatusLog::restore(&config_checkpoint),
        Err(CheckpointError::WrongTopic { .. })
    ));
}
