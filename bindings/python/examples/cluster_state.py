"""Reads a Connect cluster's three internal topics with confluent-kafka and prints what a Java
worker would hold: each connector's target state, tasks and statuses, and its source offsets.

    python cluster_state.py localhost:9092 [connect-configs connect-status connect-offsets]

`read_topic` is the whole recipe: assign every partition from the beginning, hand the messages
to the log in batches, stop at the end offsets sampled first, then mark the log caught up.
"""

from __future__ import annotations

import sys
import time
from typing import Dict, List, Union

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, TopicPartition

import connect_state

Log = Union[connect_state.ConfigLog, connect_state.StatusLog, connect_state.OffsetLog]


def read_topic(bootstrap: str, topic: str, log: Log, timeout: float = 30.0) -> int:
    """Reads `topic` from its beginning to its end into `log` and marks it caught up; returns how
    many partitions the topic has."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "connect-state-python",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        described = consumer.list_topics(topic, timeout=timeout).topics[topic]
        if described.error is not None:
            raise KafkaException(described.error)
        partitions = sorted(described.partitions)
        # The end of each partition that holds records, sampled before reading.
        ends: Dict[int, int] = {}
        for p in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            if high > low:
                ends[p] = high
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        # consume() waits for a full batch or its timeout, so poll briefly and bound the wait for
        # progress instead.
        last_progress = time.monotonic()
        while ends:
            batch: List[Message] = []
            for message in consumer.consume(num_messages=10_000, timeout=0.2):
                error = message.error()
                partition = message.partition()
                if error is not None:
                    if error.code() != KafkaError._PARTITION_EOF:
                        raise KafkaException(error)
                    ends.pop(partition if partition is not None else -1, None)
                    continue
                batch.append(message)
                offset = message.offset()
                if partition is not None and offset is not None and offset + 1 >= ends.get(partition, 0):
                    ends.pop(partition, None)
            if batch:
                log.handle_records(batch)
                last_progress = time.monotonic()
            elif ends and time.monotonic() - last_progress > timeout:
                raise TimeoutError(f"no record of {topic} for {timeout} s, partitions {sorted(ends)} not read to their end")
        log.mark_caught_up()
        return len(partitions)
    finally:
        consumer.close()


def main(bootstrap: str, config_topic: str, status_topic: str, offsets_topic: str) -> None:
    config, status, offsets = connect_state.ConfigLog(), connect_state.StatusLog(), connect_state.OffsetLog()
    read_topic(bootstrap, config_topic, config)
    read_topic(bootstrap, status_topic, status)
    read_topic(bootstrap, offsets_topic, offsets)
    configs, statuses, listed = config.snapshot(), status.snapshot(), offsets.snapshot()
    for connector in configs["connectors"]:
        target = configs["target_states"].get(connector, "STARTED")
        running = statuses["connectors"].get(connector, {}).get("state", "?")
        tasks = statuses["tasks"].get(connector, {})
        task_states = ", ".join(f"{n}={t['state']}" for n, t in sorted(tasks.items()))
        print(f"{connector}: target {target}, status {running}, tasks [{task_states}]")
        for entry in listed["connectors"].get(connector, {}).get("offsets", []):
            print(f"  offset {entry['partition']} -> {entry['offset']}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 5):
        sys.exit("usage: python cluster_state.py BOOTSTRAP [CONFIG_TOPIC STATUS_TOPIC OFFSETS_TOPIC]")
    topics = sys.argv[2:] or ["connect-configs", "connect-status", "connect-offsets"]
    main(sys.argv[1], *topics)
