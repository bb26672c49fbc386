"""connect-state's core for Python: Kafka Connect's internal topics as Java Connect reads them.

Feed the records your own Kafka client reads from the config, status and offsets topics to a
``ConfigLog``, ``StatusLog`` or ``OffsetLog`` and ask for the state a Java worker would hold
(``snapshot()``, in the JSON contract of ``connect-state replay --format json``), the events of
live records (``poll_events()``), what Java skipped (``diagnostics()``), or a checkpoint. The
write methods build the exact records Java's writers produce, for your producer to send.
``History`` tells what each record changed, as ``connect-state history`` does.
"""

from ._native import (
    CONTRACT_VERSION,
    CheckpointError,
    ConfigLog,
    ConnectStateError,
    History,
    InvalidRecordError,
    OffsetLog,
    StatusLog,
    WriteRefusedError,
    __version__,
)

__all__ = [
    "CONTRACT_VERSION",
    "CheckpointError",
    "ConfigLog",
    "ConnectStateError",
    "History",
    "InvalidRecordError",
    "OffsetLog",
    "StatusLog",
    "WriteRefusedError",
    "__version__",
]
