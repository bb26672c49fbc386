"""Bad input raises a Python exception with the core's message, never a crash of the
interpreter; what Java skips is skipped and counted, as Java does."""

from __future__ import annotations

from typing import Any, Iterator, Tuple

import subprocess

import pytest

import connect_state
from conftest import cli_binary
from connect_state import ConfigLog, OffsetLog, StatusLog

CONFIG = b'{"properties":{"connector.class":"S"}}'


def test_the_contract_version_is_the_binarys() -> None:
    shown = subprocess.run([cli_binary(), "--version"], capture_output=True, text=True, check=True).stdout
    assert f"(JSON contract {connect_state.CONTRACT_VERSION})" in shown, shown


def test_the_exceptions_are_one_hierarchy() -> None:
    for error in [connect_state.InvalidRecordError, connect_state.CheckpointError, connect_state.WriteRefusedError]:
        assert issubclass(error, connect_state.ConnectStateError)
    assert issubclass(connect_state.ConnectStateError, Exception)


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((b"connector-a", CONFIG, -1), connect_state.InvalidRecordError, "offset"),
        ((b"connector-a", CONFIG, 2**63), connect_state.InvalidRecordError, "does not fit a 64-bit"),
        ((b"connector-a", CONFIG, -(2**70)), connect_state.InvalidRecordError, "does not fit a 64-bit"),
        ((b"connector-a", CONFIG, 0, 2**31), connect_state.InvalidRecordError, "does not fit a 32-bit"),
        ((b"connector-a", CONFIG, 0, -1), connect_state.InvalidRecordError, "partition"),
        ((b"connector-a", CONFIG, 0, 0, 2**64), connect_state.InvalidRecordError, "timestamp"),
        (("connector-a", CONFIG, 0), TypeError, "key must be bytes"),
        ((b"connector-a", {"properties": {}}, 0), TypeError, "value must be bytes"),
        ((b"connector-a", CONFIG, "0"), TypeError, "offset must be an int"),
        ((b"connector-a", CONFIG, 1.5), TypeError, "offset must be an int"),
    ],
)
def test_bad_records_raise(args: Tuple[Any, ...], error: type, message: str) -> None:
    log = ConfigLog()
    with pytest.raises(error, match=message):
        log.handle_record(*args)
    # The log is unchanged and goes on.
    assert log.snapshot()["connectors"] == []
    assert log.handle_record(b"connector-a", CONFIG, 0)


def test_what_java_skips_is_counted_not_raised() -> None:
    log = ConfigLog()
    assert not log.handle_record(b"connector-a", b"\xff\xfe", 0)  # not UTF-8
    assert not log.handle_record(b"\xff", CONFIG, 1)
    assert not log.handle_record(None, CONFIG, 2)
    assert not log.handle_record(b"connector-a", b"{", 3)
    assert not log.handle_record(b"mystery", CONFIG, 4)
    skipped = log.diagnostics()["skipped"]
    assert sum(skipped.values()) == 5, skipped
    assert log.snapshot()["connectors"] == []


def test_a_huge_value_is_read_not_trusted() -> None:
    log = OffsetLog()
    key = b'["c",{"f":"x"}]'
    value = b'{"pos":"' + b"x" * (8 << 20) + b'"}'
    assert log.handle_record(key, value, 0)
    assert log.snapshot()["connectors"]["c"]["offsets"][0]["offset"]["pos"] == "x" * (8 << 20)


def test_a_bad_record_in_a_batch_names_its_position() -> None:
    log = ConfigLog()
    good = (b"connector-a", CONFIG, 0)
    with pytest.raises(connect_state.InvalidRecordError, match="record 1 of the batch"):
        log.handle_records([good, (b"connector-b", CONFIG, -5)])
    assert log.snapshot()["connectors"] == ["a"]
    with pytest.raises(TypeError, match="record 0 of the batch"):
        log.handle_records([("connector-b", CONFIG, 1)])
    with pytest.raises(TypeError, match="not a tuple of 2"):
        log.handle_records([(b"k", b"v")])
    with pytest.raises(TypeError):
        log.handle_records([42])
    with pytest.raises(TypeError):
        log.handle_records(7)  # type: ignore[arg-type]


def test_an_error_raised_by_the_iterable_comes_through() -> None:
    def records() -> Iterator[Tuple[bytes, bytes, int]]:
        yield (b"connector-a", CONFIG, 0)
        raise KeyError("from the caller")

    log = ConfigLog()
    with pytest.raises(KeyError, match="from the caller"):
        log.handle_records(records())


def test_a_log_used_from_inside_its_own_batch_is_refused_not_raced() -> None:
    log = ConfigLog()

    def records() -> Iterator[Tuple[bytes, bytes, int]]:
        yield (b"connector-a", CONFIG, 0)
        log.snapshot()  # the batch holds the log: PyO3 refuses a second borrow
        yield (b"connector-b", CONFIG, 1)

    with pytest.raises(RuntimeError):
        log.handle_records(records())


def test_kafka_messages_are_taken_as_they_are() -> None:
    class Message:
        def __init__(self, key: bytes, value: bytes, offset: int, partition: int, ts: Tuple[int, int]) -> None:
            self._key, self._value, self._offset, self._partition, self._ts = key, value, offset, partition, ts

        def key(self) -> bytes:
            return self._key

        def value(self) -> bytes:
            return self._value

        def offset(self) -> int:
            return self._offset

        def partition(self) -> int:
            return self._partition

        def timestamp(self) -> Tuple[int, int]:
            return self._ts

    history = connect_state.History()
    entries = history.handle_records("config", [Message(b"connector-a", CONFIG, 0, 0, (1, 1_700_000_000_000))])
    assert entries[0]["timestamp"] == 1_700_000_000_000
    entries = history.handle_records("config", [Message(b"connector-b", CONFIG, 1, 0, (0, -1))])
    assert entries[0]["timestamp"] is None


def test_refused_writes_raise() -> None:
    with pytest.raises(connect_state.WriteRefusedError, match="not a target state"):
        ConfigLog.put_target_state("a", "paused")  # type: ignore[arg-type]
    with pytest.raises(connect_state.WriteRefusedError, match="not a target state"):
        ConfigLog.put_connector_config("a", {}, "RUNNING")  # type: ignore[arg-type]
    with pytest.raises(connect_state.WriteRefusedError):
        ConfigLog.put_session_key(b"", "HmacSHA256", 0)
    with pytest.raises(TypeError, match="property"):
        ConfigLog.put_connector_config("a", {"tasks.max": 1})  # type: ignore[dict-item]
    with pytest.raises(UnicodeEncodeError):
        ConfigLog.put_connector_config("\udcff", {})
    status = StatusLog()
    with pytest.raises(connect_state.WriteRefusedError, match="not a status state"):
        status.put("a", "running", "w:1", 1, partitions=5)  # type: ignore[arg-type]
    with pytest.raises(connect_state.WriteRefusedError, match="at least one partition"):
        status.put("a", "RUNNING", "w:1", 1, partitions=0)
    with pytest.raises(TypeError):
        status.put("a", "RUNNING", "w:1", 1)  # type: ignore[call-arg]
    offsets, config = OffsetLog(), ConfigLog()
    with pytest.raises(connect_state.WriteRefusedError, match="not found"):
        offsets.reset_offsets(config, "a", partitions=25)
    config.handle_record(b"connector-a", CONFIG, 0)
    with pytest.raises(connect_state.WriteRefusedError, match="stopped|STOPPED"):
        offsets.alter_offsets(config, "a", [{"partition": {"f": "x"}, "offset": {"pos": 1}}], partitions=25)
    with pytest.raises(TypeError):
        offsets.reset_offsets(status, "a", partitions=25)  # type: ignore[arg-type]


def test_a_finished_history_is_closed() -> None:
    history = connect_state.History()
    history.finish()
    with pytest.raises(connect_state.ConnectStateError, match="finished"):
        history.handle_record("config", b"connector-a", CONFIG, 0)
    with pytest.raises(ValueError, match="not a topic"):
        connect_state.History().handle_record("configs", b"connector-a", CONFIG, 0)  # type: ignore[arg-type]
