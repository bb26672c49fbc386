"""A checkpoint taken in Python restores in the CLI (`replay --from-checkpoint`), and one the CLI
saved (`replay --save-checkpoint`) restores in Python: the same bytes, the same state."""

from __future__ import annotations

from pathlib import Path

import pytest

import connect_state
from conftest import Vector, kcat_dump, run_cli, vectors

LOGS = {"config": connect_state.ConfigLog, "status": connect_state.StatusLog, "offsets": connect_state.OffsetLog}
VECTORS = list(vectors())


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_python_to_cli_and_back(vector: Vector, tmp_path: Path) -> None:
    records = vector.tuples()
    half = len(records) // 2
    full = run_cli(["replay", "--topic", vector.topic, "--format", "json", "-"], vector.kcat_lines())

    # Python reads the first half and checkpoints; the CLI goes on with the second.
    log = LOGS[vector.topic]()
    log.handle_records(records[:half])
    saved = tmp_path / "python.checkpoint"
    saved.write_bytes(log.checkpoint())
    tail = tmp_path / "tail.jsonl"
    tail.write_text(kcat_dump(records[half:]))
    resumed = run_cli(
        ["replay", "--topic", vector.topic, "--format", "json", "--from-checkpoint", str(saved), str(tail)]
    )
    assert resumed == full

    # The CLI reads the first half and saves; Python goes on with the second.
    head = tmp_path / "head.jsonl"
    head.write_text(kcat_dump(records[:half]))
    cli_saved = tmp_path / "cli.checkpoint"
    run_cli(["replay", "--topic", vector.topic, "--format", "json", "--save-checkpoint", str(cli_saved), str(head)])
    assert cli_saved.read_bytes() == saved.read_bytes()
    again = LOGS[vector.topic].restore(cli_saved.read_bytes())
    again.handle_records(records)  # the first half again: dropped as redeliveries
    assert again.snapshot() == full


def test_damaged_and_foreign_checkpoints_raise() -> None:
    log = connect_state.ConfigLog()
    log.handle_record(b"connector-a", b'{"properties":{"connector.class":"S"}}', 0)
    data = log.checkpoint()
    assert connect_state.ConfigLog.restore(bytearray(data)).snapshot() == log.snapshot()
    for damaged in [b"", data[:-1], data[:10], data + b"\0", bytes([data[0] ^ 1]) + data[1:], data[:30] + bytes([data[30] ^ 0x80]) + data[31:]]:
        with pytest.raises(connect_state.CheckpointError):
            connect_state.ConfigLog.restore(damaged)
    with pytest.raises(connect_state.CheckpointError, match="status|config|topic|kind"):
        connect_state.StatusLog.restore(data)
    with pytest.raises(TypeError):
        connect_state.ConfigLog.restore("not bytes")  # type: ignore[arg-type]
