"""An independent Kafka client for the interoperability tests: Python's confluent-kafka.

  interop.py produce BOOTSTRAP TOPIC   (JSON lines {"key": str|null, "value": str|null} on stdin)
  interop.py dump BOOTSTRAP TOPIC      (every record, kcat -J lines on stdout)
"""
import json
import sys

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition


def produce(bootstrap, topic):
    # Java's default partitioner is murmur2; librdkafka's equivalent is murmur2_random.
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "partitioner": "murmur2_random"})
    failures = []
    for line in sys.stdin:
        if not line.strip():
            continue
        record = json.loads(line)
        key = record["key"].encode() if record["key"] is not None else None
        value = record["value"].encode() if record["value"] is not None else None
        producer.produce(topic, key=key, value=value,
                         on_delivery=lambda err, msg: failures.append(err) if err else None)
    producer.flush(30)
    if failures:
        sys.exit(f"delivery failed: {failures}")


def dump(bootstrap, topic):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "interop-dump",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "auto.offset.reset": "earliest"})
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    pending = set(partitions)
    lines = []
    while pending:
        message = consumer.poll(10)
        if message is None:
            sys.exit("timed out reading " + topic)
        if message.error():
            if message.error().code() == KafkaError._PARTITION_EOF:
                pending.discard(message.partition())
                continue
            sys.exit(str(message.error()))
        key, value = message.key(), message.value()
        lines.append({
            "topic": topic, "partition": message.partition(), "offset": message.offset(),
            "tstype": "create", "ts": message.timestamp()[1], "broker": 1, "headers": None,
            "key": key.decode() if key is not None else None,
            "payload": value.decode() if value is not None else None,
        })
    consumer.close()
    lines.sort(key=lambda l: (l["partition"], l["offset"]))
    for line in lines:
        print(json.dumps(line))


if __name__ == "__main__":
    command, bootstrap, topic = sys.argv[1:4]
    {"produce": produce, "dump": dump}[command](bootstrap, topic)
