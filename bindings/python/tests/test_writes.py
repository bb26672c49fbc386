"""The write side: the records Java's writers produce, read back by the logs into the state Java
would then hold; each record on the partition Java's producer picks."""

from __future__ import annotations

import json
from typing import List, Optional, Tuple

import connect_state
from connect_state import ConfigLog, OffsetLog, StatusLog

Outgoing = Tuple[str, int, bytes, Optional[bytes]]


def feed(log: object, records: List[Outgoing], kind: str, offsets: List[int]) -> None:
    """Appends `records` to `log` as a broker would: each at the next offset of its partition."""
    for topic, partition, key, value in records:
        assert topic == kind
        while len(offsets) <= partition:
            offsets.append(0)
        assert log.handle_record(key, value, offsets[partition], partition)  # type: ignore[attr-defined]
        offsets[partition] += 1


def test_config_writes_read_back_as_java_holds_them() -> None:
    log, at = ConfigLog(), [0]
    records = ConfigLog.put_connector_config("orders", {"connector.class": "FileStreamSource", "tasks.max": "2"}, "PAUSED")
    assert [(t, p, k) for t, p, k, _ in records] == [("config", 0, b"target-state-orders"), ("config", 0, b"connector-orders")]
    feed(log, records, "config", at)
    feed(log, ConfigLog.put_task_configs("orders", [{"file": "a"}, {"file": "b", "x": None}]), "config", at)
    snapshot = log.snapshot()
    assert snapshot["connectors"] == ["orders"]
    assert snapshot["target_states"] == {"orders": "PAUSED"}
    assert snapshot["connector_task_counts"] == {"orders": 2}
    assert snapshot["task_configs"]["orders"] == {"0": {"file": "a"}, "1": {"file": "b", "x": None}}
    feed(log, ConfigLog.put_target_state("orders", "STOPPED"), "config", at)
    feed(log, ConfigLog.put_task_configs("orders", []), "config", at)
    assert log.snapshot()["target_states"] == {"orders": "STOPPED"}
    assert log.snapshot()["connector_task_counts"] == {"orders": 0}
    feed(log, ConfigLog.put_task_count_record("orders", 0), "config", at)
    feed(log, ConfigLog.put_restart_request("orders", only_failed=True), "config", at)
    feed(log, ConfigLog.put_session_key(b"\x01\x02", "HmacSHA256", 1_700_000_000_000), "config", at)
    assert log.snapshot()["session_key"] is not None
    (_, _, key, value), = ConfigLog.put_logger_level("org.apache.kafka", "DEBUG")
    assert (key, value) == (b"logger-cluster-org.apache.kafka", b'{"level":"DEBUG"}')
    feed(log, ConfigLog.remove_connector_config("orders"), "config", at)
    assert log.snapshot()["connectors"] == []
    assert log.diagnostics()["skipped"] == {}


def test_status_writes_keep_javas_bookkeeping() -> None:
    log, at = StatusLog(), [0] * 3
    record = log.put("orders", "RUNNING", "w1:8083", 4, partitions=3, task=1, trace=None, version="4.4.0")
    topic, partition, key, value = record
    assert (topic, key) == ("status", b"status-task-orders-1")
    assert value is not None and json.loads(value) == {
        "state": "RUNNING", "trace": None, "worker_id": "w1:8083", "generation": 4, "version": "4.4.0"
    }
    assert 0 <= partition < 3
    assert log.snapshot()["tasks"] == {}  # cached only once read back
    feed(log, [record], "status", at)
    assert log.snapshot()["tasks"]["orders"]["1"]["state"] == "RUNNING"
    # Another worker's status of a newer generation: putSafe drops an older one, put does not.
    feed(log, [log.put("orders", "FAILED", "w2:8083", 5, partitions=3, task=1, trace="boom")], "status", at)
    assert log.put_safe("orders", "RUNNING", "w1:8083", 4, partitions=3, task=1) is None
    assert log.put_safe("orders", "RUNNING", "w1:8083", 5, partitions=3, task=1) is not None
    feed(log, [log.put_topic("lines", "orders", 1, 1_700_000_000_000, partitions=3)], "status", at)
    assert "lines" in log.snapshot()["topics"]["orders"]
    feed(log, [log.delete_topic("orders", "lines", partitions=3)], "status", at)
    assert log.snapshot()["topics"].get("orders", {}) == {}
    gone = log.put("orders", "DESTROYED", "w1:8083", 6, partitions=3, task=1)
    assert gone[3] is None
    # The same key always lands on the same partition (murmur2, as Java's producer).
    assert gone[1] == partition


def stopped_source(log: ConfigLog) -> None:
    at = [0]
    feed(log, ConfigLog.put_connector_config("src", {"connector.class": "S"}, "STOPPED"), "config", at)
    feed(log, ConfigLog.put_task_configs("src", []), "config", at)


def test_kip_875_alter_and_reset_read_back() -> None:
    config, offsets, at = ConfigLog(), OffsetLog(), [0] * 5
    stopped_source(config)
    altered = offsets.alter_offsets(
        config, "src", [{"partition": {"file": "a"}, "offset": {"pos": 20}}, {"partition": {"file": "b"}, "offset": {"pos": 5}}], partitions=5
    )
    assert [json.loads(k) for _, _, k, _ in altered] == [["src", {"file": "a"}], ["src", {"file": "b"}]]
    feed(offsets, altered, "offsets", at)
    listed = offsets.snapshot()["connectors"]["src"]["offsets"]
    assert {json.dumps(o["partition"]): o["offset"] for o in listed} == {'{"file": "a"}': {"pos": 20}, '{"file": "b"}': {"pos": 5}}
    # The request body as text keeps every number as written.
    (_, _, _, value), = offsets.alter_offsets(
        config, "src", '{"offsets":[{"partition":{"file":"a"},"offset":{"pos":1.50}}]}', partitions=5
    )
    assert value == b'{"pos":1.5}'
    reset = offsets.reset_offsets(config, "src", partitions=5)
    assert sorted(k for _, _, k, v in reset if v is None) == sorted(k for _, _, k, _ in altered)
    # A tombstone goes to the partition where its key lives.
    assert {k: p for _, p, k, _ in reset} == {k: p for _, p, k, _ in altered}
    feed(offsets, reset, "offsets", at)
    assert offsets.reset_offsets(config, "src", partitions=5) == []
