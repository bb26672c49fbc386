"""Replays a kcat dump of a config topic (`kcat -C -t connect-configs -e -J`) and prints each
connector with its target state and task count: the core, without Kafka.

    python replay_dump.py configs.jsonl
"""

from __future__ import annotations

import json
import sys
from typing import Iterator, Optional, Tuple

import connect_state


def records(path: str) -> Iterator[Tuple[Optional[bytes], Optional[bytes], int, int]]:
    """The dump's records as (key, value, offset, partition)."""
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            r = json.loads(line)
            key: Optional[str] = r.get("key")
            payload: Optional[str] = r.get("payload")
            yield (
                None if key is None else key.encode(),
                None if payload is None else payload.encode(),
                int(r["offset"]),
                int(r.get("partition", 0)),
            )


def main(path: str) -> None:
    log = connect_state.ConfigLog()
    log.handle_records(records(path))
    log.mark_caught_up()
    snapshot = log.snapshot()
    for connector in snapshot["connectors"]:
        state = snapshot["target_states"].get(connector, "STARTED")
        tasks = snapshot["connector_task_counts"].get(connector, 0)
        print(f"{connector}\t{state}\t{tasks} task(s)")
    skipped = log.diagnostics()["skipped"]
    if skipped:
        print(f"skipped as Java skips them: {skipped}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python replay_dump.py CONFIG_DUMP.jsonl")
    main(sys.argv[1])
