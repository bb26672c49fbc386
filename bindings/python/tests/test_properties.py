"""Property test (Hypothesis): generated records of each topic, valid and not, some live, give
through Python the snapshot and events `connect-state replay` gives on the same dump.

The number of cases is bounded for CI (CONNECT_STATE_PY_EXAMPLES, 60 per topic by default); a
soak is the same test with a larger number, e.g. CONNECT_STATE_PY_EXAMPLES=5000."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import connect_state
from conftest import kcat_dump, run_cli

EXAMPLES = int(os.environ.get("CONNECT_STATE_PY_EXAMPLES", "60"))
CASES = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

connectors = st.sampled_from(["a", "b", "orders"])
tasks = st.integers(min_value=-1, max_value=3)
small = st.integers(min_value=-2, max_value=4)
text = st.text(alphabet="ab\"\\é \u00ff{}", max_size=6)


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


garbage = st.sampled_from([b"{", b"null", b"[]", b"\"x\"", b"{}", b"1"])


@st.composite
def config_record(draw: st.DrawFn) -> Tuple[Optional[bytes], Optional[bytes]]:
    c = draw(connectors)
    props = draw(st.dictionaries(st.sampled_from(["tasks.max", "file", "x"]), text, max_size=3))
    kind = draw(st.sampled_from(["connector", "task", "commit", "target", "restart", "other"]))
    key: Optional[bytes]
    if kind == "connector":
        key, value = f"connector-{c}".encode(), dumps({"properties": props})
    elif kind == "task":
        key, value = f"task-{c}-{draw(tasks)}".encode(), dumps({"properties": props})
    elif kind == "commit":
        key, value = f"commit-{c}".encode(), dumps({"tasks": draw(small)})
    elif kind == "target":
        state = draw(st.sampled_from(["STARTED", "PAUSED", "STOPPED", "started"]))
        key, value = f"target-state-{c}".encode(), dumps({"state.v2": state, "state": state})
    elif kind == "restart":
        key, value = f"restart-connector-{c}".encode(), dumps({"only-failed": draw(st.booleans())})
    else:
        key, value = draw(st.sampled_from([b"unknown", b"connector-", b"task-x"])), dumps({})
    return key, draw(st.one_of(st.just(value), st.none(), garbage))


@st.composite
def status_record(draw: st.DrawFn) -> Tuple[Optional[bytes], Optional[bytes]]:
    c = draw(connectors)
    kind = draw(st.sampled_from(["connector", "task", "topic", "other"]))
    state = draw(st.sampled_from(["RUNNING", "PAUSED", "FAILED", "UNASSIGNED", "STOPPED", "bogus"]))
    status = {"state": state, "trace": draw(st.one_of(st.none(), text)), "worker_id": draw(st.sampled_from(["w1:8083", "w2:8083"])), "generation": draw(small)}
    if kind == "connector":
        key, value = f"status-connector-{c}".encode(), dumps(status)
    elif kind == "task":
        key, value = f"status-task-{c}-{draw(tasks)}".encode(), dumps(status)
    elif kind == "topic":
        topic = draw(st.sampled_from(["t1", "t2"]))
        body = {"topic": {"name": topic, "connector": c, "task": draw(tasks), "discoverTimestamp": draw(small)}}
        key, value = f"status-topic-{topic}:connector-{c}".encode(), dumps(body)
    else:
        key, value = b"status-other", dumps(status)
    return key, draw(st.one_of(st.just(value), st.none(), garbage))


@st.composite
def offsets_record(draw: st.DrawFn) -> Tuple[Optional[bytes], Optional[bytes]]:
    c = draw(connectors)
    partition = draw(st.one_of(st.none(), st.fixed_dictionaries({"file": text}), st.fixed_dictionaries({"file": text, "line": small})))
    key = dumps([c, partition])
    value = dumps({"pos": draw(st.one_of(small, st.floats(allow_nan=False, width=32), text))})
    key = draw(st.one_of(st.just(key), st.just(b"garbage"), st.none()))
    return key, draw(st.one_of(st.just(value), st.none(), garbage))


def log_records(draw: st.DrawFn, record: Any, partitions: int) -> List[Tuple[Optional[bytes], Optional[bytes], int, int]]:
    """Records with offsets that grow per partition, with gaps (a compacted log)."""
    drawn = draw(st.lists(st.tuples(record, st.integers(0, partitions - 1), st.integers(1, 3)), max_size=40))
    next_offset = [0] * partitions
    out = []
    for (key, value), partition, step in drawn:
        out.append((key, value, next_offset[partition], partition))
        next_offset[partition] += step
    return out


def check(topic: str, log: Any, records: List[Tuple[Optional[bytes], Optional[bytes], int, int]], live_from: Optional[int]) -> None:
    args = ["replay", "--topic", topic, "--format", "json", "--events"]
    if live_from is not None:
        args += ["--live-from", str(live_from)]
    expected = run_cli([*args, "-"], kcat_dump(records))
    events: List[Dict[str, Any]] = []
    for key, value, offset, partition in records:
        if live_from is not None and not log.caught_up and offset >= live_from:
            log.mark_caught_up()
        log.handle_record(key, value, offset, partition)
        events.extend(log.poll_events())
    assert log.snapshot() == expected["snapshot"]
    assert events == expected["events"]


@CASES
@given(st.data())
def test_config_records(data: st.DataObject) -> None:
    records = log_records(data.draw, config_record(), 1)
    check("config", connect_state.ConfigLog(), records, data.draw(st.one_of(st.none(), st.integers(0, 60))))


@CASES
@given(st.data())
def test_status_records(data: st.DataObject) -> None:
    records = log_records(data.draw, status_record(), 3)
    check("status", connect_state.StatusLog(), records, data.draw(st.one_of(st.none(), st.integers(0, 60))))


@CASES
@given(st.data())
def test_offsets_records(data: st.DataObject) -> None:
    records = log_records(data.draw, offsets_record(), 3)
    check("offsets", connect_state.OffsetLog(), records, data.draw(st.one_of(st.none(), st.integers(0, 60))))
