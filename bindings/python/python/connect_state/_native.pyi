"""Type stubs of the extension module (see the package's docstring)."""

from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Protocol, Sequence, Tuple, Type, TypeVar, Union

__version__: str
CONTRACT_VERSION: int
"""The JSON contract's version: within it members are only added; a removal or a change of
meaning makes a new version."""

Bytes = Union[bytes, bytearray]
TopicKind = Literal["config", "status", "offsets"]

OutgoingRecord = Tuple[TopicKind, int, bytes, Optional[bytes]]
"""A record to send: (topic kind, partition, key, value or None for a tombstone). The partition
is the one Java's producer picks (murmur2 of the key): send it there explicitly."""

class KafkaMessage(Protocol):
    """What handle_records takes from a Kafka client (confluent-kafka's Message has it)."""

    def key(self) -> Optional[bytes]: ...
    def value(self) -> Optional[bytes]: ...
    def offset(self) -> Optional[int]: ...
    def partition(self) -> Optional[int]: ...
    def timestamp(self) -> Tuple[int, int]: ...

RecordTuple = Union[
    Tuple[Optional[Bytes], Optional[Bytes], int],
    Tuple[Optional[Bytes], Optional[Bytes], int, int],
    Tuple[Optional[Bytes], Optional[Bytes], int, int, Optional[int]],
]
"""(key, value, offset[, partition[, timestamp in ms]])."""

RecordLike = Union[RecordTuple, KafkaMessage]

class ConnectStateError(Exception):
    """The base of every error connect-state raises."""

class InvalidRecordError(ConnectStateError):
    """A record that cannot be a Kafka record (a negative or too large offset or partition, a key
    too long). A record Java skips is not an error: it is counted in diagnostics()."""

class CheckpointError(ConnectStateError):
    """Checkpoint bytes that are corrupt, truncated, of another version or of another topic."""

class WriteRefusedError(ConnectStateError):
    """A write Java would refuse: a connector that is not stopped, an offset that is not a map,
    an unknown state name, an empty session key, a topic without partitions."""

_L = TypeVar("_L", bound="_Log")

class _Log:
    def __init__(self) -> None:
        """A log at the start of the topic, reading its start-up catch-up (no events until
        mark_caught_up())."""
    def handle_record(
        self,
        key: Optional[Bytes],
        value: Optional[Bytes],
        offset: int,
        partition: Optional[int] = 0,
        timestamp: Optional[int] = None,
    ) -> bool:
        """Applies one record (value None: a tombstone). Returns whether it was applied; a record
        Java skips returns False and is counted in diagnostics(). Drain poll_events() after."""
    def handle_records(self, records: Iterable[RecordLike]) -> int:
        """Applies every record, a batch of 4096 at a time with the GIL released; returns how
        many were applied. An error names the record; those before it stay applied."""
    def mark_caught_up(self) -> None:
        """Ends the start-up read: from now on records produce events."""
    @property
    def caught_up(self) -> bool:
        """Whether mark_caught_up() was called."""
    def poll_events(self) -> List[Dict[str, Any]]:
        """Every event waiting, oldest first, in the JSON contract; the queue is then empty."""
    def snapshot(self) -> Dict[str, Any]:
        """The state: json.loads of `connect-state replay --format json` for the same records."""
    def snapshot_json(self) -> str:
        """The state as the contract's JSON text, every number as written."""
    def diagnostics(self) -> Dict[str, Any]:
        """What Java does not keep: skip counts by reason and the topic's findings."""
    def checkpoint(self) -> bytes:
        """The whole log as bytes for restore() (what `replay --save-checkpoint` writes).
        Drain poll_events() first: pending events are not included."""
    @classmethod
    def restore(cls: Type[_L], data: Bytes) -> _L:
        """A log from checkpoint() bytes, not caught up (read the tail, then mark_caught_up()).
        Raises CheckpointError for corrupt, truncated or foreign bytes."""

class ConfigLog(_Log):
    """The config topic's state, as Java's KafkaConfigBackingStore holds it. The static methods
    build the records Java's writers produce (all on partition 0: the topic has one)."""

    @staticmethod
    def put_connector_config(
        connector: str,
        properties: Mapping[str, Optional[str]],
        target_state: Optional[Literal["STARTED", "PAUSED", "STOPPED"]] = None,
    ) -> List[OutgoingRecord]:
        """putConnectorConfig: the target state (when given), then the config."""
    @staticmethod
    def remove_connector_config(connector: str) -> List[OutgoingRecord]:
        """removeConnectorConfig: the tombstones of the config and the target state."""
    @staticmethod
    def put_task_configs(
        connector: str, tasks: Iterable[Mapping[str, Optional[str]]]
    ) -> List[OutgoingRecord]:
        """putTaskConfigs: task i gets tasks[i], then the commit record."""
    @staticmethod
    def put_target_state(
        connector: str, state: Literal["STARTED", "PAUSED", "STOPPED"]
    ) -> List[OutgoingRecord]:
        """putTargetState."""
    @staticmethod
    def put_task_count_record(connector: str, task_count: int) -> List[OutgoingRecord]:
        """putTaskCountRecord (exactly-once source support's fencing record)."""
    @staticmethod
    def put_session_key(key: Bytes, algorithm: str, creation_timestamp: int) -> List[OutgoingRecord]:
        """putSessionKey: the key bytes, e.g. "HmacSHA256", ms since the epoch."""
    @staticmethod
    def put_restart_request(
        connector: str, only_failed: bool = False, include_tasks: bool = False
    ) -> List[OutgoingRecord]:
        """putRestartRequest."""
    @staticmethod
    def put_logger_level(namespace: str, level: str) -> List[OutgoingRecord]:
        """putLoggerLevel (KIP-976)."""

StatusState = Literal["UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "RESTARTING", "STOPPED", "DESTROYED"]

class StatusLog(_Log):
    """The status topic's state, as Java's KafkaStatusBackingStore holds it (KIP-558 topics
    included). put() and put_safe() keep Java's write-side bookkeeping in the log."""

    def put(
        self,
        connector: str,
        state: StatusState,
        worker_id: str,
        generation: int,
        *,
        partitions: int,
        task: Optional[int] = None,
        trace: Optional[str] = None,
        version: Optional[str] = None,
    ) -> OutgoingRecord:
        """Java's put of a connector's (task None) or task's status on a status topic of
        `partitions` partitions; DESTROYED is a tombstone. Cached once read back."""
    def put_safe(
        self,
        connector: str,
        state: StatusState,
        worker_id: str,
        generation: int,
        *,
        partitions: int,
        task: Optional[int] = None,
        trace: Optional[str] = None,
        version: Optional[str] = None,
    ) -> Optional[OutgoingRecord]:
        """Java's putSafe: None when another worker's status of a newer generation is cached."""
    def put_topic(
        self, topic: str, connector: str, task: int, discover_timestamp: int, *, partitions: int
    ) -> OutgoingRecord:
        """Java's put(TopicStatus): a connector's active topic (KIP-558)."""
    def delete_topic(self, connector: str, topic: str, *, partitions: int) -> OutgoingRecord:
        """Java's deleteTopic: the topic status's tombstone."""

class OffsetLog(_Log):
    """The offsets topic's state, as Java's KafkaOffsetBackingStore and the KIP-875 listing hold
    it. reset_offsets() and alter_offsets() build Java's KIP-875 writes."""

    def reset_offsets(self, config: ConfigLog, connector: str, *, partitions: int) -> List[OutgoingRecord]:
        """DELETE /connectors/{connector}/offsets: Java's precondition (stopped, no tasks, in
        `config`; WriteRefusedError otherwise), then a tombstone per known partition."""
    def alter_offsets(
        self,
        config: ConfigLog,
        connector: str,
        offsets: Union[str, Sequence[Mapping[str, Any]]],
        *,
        partitions: int,
    ) -> List[OutgoingRecord]:
        """PATCH /connectors/{connector}/offsets: the request's list of {"partition": ...,
        "offset": ... or None}, or the whole body as JSON text (numbers exactly as written)."""

class History:
    """The three topics' history, one record at a time, as `connect-state history` tells it."""

    def __init__(self, connectors: Sequence[str] = ..., show_secrets: bool = False) -> None:
        """Entries of `connectors` only (empty: all, cluster-wide ones too); secret-looking
        config values masked unless show_secrets."""
    def handle_record(
        self,
        topic: TopicKind,
        key: Optional[Bytes],
        value: Optional[Bytes],
        offset: int,
        partition: Optional[int] = 0,
        timestamp: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        """Applies one record of `topic`; returns the entries it completes."""
    def handle_records(self, topic: TopicKind, records: Iterable[RecordLike]) -> List[Dict[str, Any]]:
        """Applies every record (all of `topic`); returns the entries they complete."""
    def finish(self) -> Dict[str, Any]:
        """{"entries": [open runs], "compacted": [...], "records": N, "skipped": N}; the history
        cannot be used afterwards."""
