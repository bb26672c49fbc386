"""Every conformance vector through Python gives what `connect-state replay --format json
--events` gives on the same dump: the snapshot (numbers exactly), the events, a restored
checkpoint's snapshot; record by record and in batches alike."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Dict, List, Union

import pytest

import connect_state
from conftest import Vector, run_cli, vectors

Log = Union[connect_state.ConfigLog, connect_state.StatusLog, connect_state.OffsetLog]
LOGS = {"config": connect_state.ConfigLog, "status": connect_state.StatusLog, "offsets": connect_state.OffsetLog}
VECTORS = list(vectors())


def exact(text: str) -> Any:
    """JSON with every decimal kept as written."""
    return json.loads(text, parse_float=Decimal)


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_record_by_record_equals_the_cli(vector: Vector) -> None:
    expected = run_cli([*vector.replay_args(), "-"], vector.kcat_lines())
    log: Log = LOGS[vector.topic]()
    events: List[Dict[str, Any]] = []
    for key, value, offset, partition in vector.tuples():
        if vector.live_from is not None and not log.caught_up and offset >= vector.live_from:
            log.mark_caught_up()
        log.handle_record(key, value, offset, partition)
        events.extend(log.poll_events())
    assert log.snapshot() == expected["snapshot"]
    assert events == expected["events"]
    compact = run_cli(["replay", "--topic", vector.topic, "--format", "json", "-"], vector.kcat_lines())
    assert exact(log.snapshot_json()) == exact(json.dumps(compact))
    restored = type(log).restore(log.checkpoint())
    assert restored.snapshot() == log.snapshot()
    assert not restored.caught_up


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_batches_equal_record_by_record(vector: Vector) -> None:
    expected = run_cli([*vector.replay_args(), "-"], vector.kcat_lines())
    log: Log = LOGS[vector.topic]()
    records = vector.tuples()
    live = len(records) if vector.live_from is None else next(
        (i for i, r in enumerate(records) if r[2] >= vector.live_from), len(records)
    )
    applied = log.handle_records(iter(records[:live]))
    if vector.live_from is not None:
        log.mark_caught_up()
    applied += log.handle_records(records[live:])
    assert log.snapshot() == expected["snapshot"]
    assert log.poll_events() == expected["events"]
    assert log.poll_events() == []
    skipped = sum(log.diagnostics()["skipped"].values())
    assert applied + skipped <= len(records)
