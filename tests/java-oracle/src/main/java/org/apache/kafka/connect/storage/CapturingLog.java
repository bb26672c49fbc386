package org.apache.kafka.connect.storage;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.util.Callback;
import org.apache.kafka.connect.util.KafkaBasedLog;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * A {@link KafkaBasedLog} without Kafka: it never starts clients. What a store sends is captured
 * (key and value bytes as the store's serializer makes them, and the partition Kafka's default
 * partitioner picks), and the next {@code readToEnd} hands the captured records back to the
 * store's own consume callback, the way a worker reads its writes back. Every send succeeds
 * unless a write call asks for one to fail ({@link #failSendAt}).
 *
 * @param <K> the store's key type ({@code String} for config and status, {@code byte[]} for offsets)
 */
final class CapturingLog<K> extends KafkaBasedLog<K, byte[]> {
    /** A record a store sent. */
    record Sent(int partition, long offset, byte[] key, byte[] value) {
    }

    private final String topic;
    private final int partitions;
    private final Serializer<K> keySerializer;
    private final Map<Integer, Long> nextOffsets = new HashMap<>();
    private final List<Sent> sent = new ArrayList<>();
    private final List<Sent> unread = new ArrayList<>();
    /** What the store asked of its log, in order: "send" or "read_to_end". */
    private final List<String> steps = new ArrayList<>();
    private Consumer<OracleRecord> reader = r -> { };
    private int sends;
    private int failFrom = -1;

    CapturingLog(String topic, int partitions, Serializer<K> keySerializer) {
        super(topic, new HashMap<>(), new HashMap<>(), () -> null, (error, record) -> { }, Time.SYSTEM, null);
        this.topic = topic;
        this.partitions = partitions;
        this.keySerializer = keySerializer;
    }

    /** Where records read back go (the oracle's apply step, which calls the store's callback). */
    void readInto(Consumer<OracleRecord> reader) {
        this.reader = reader;
    }

    /** Notes a record the store read, so records sent later get the next offsets. */
    void noteRead(int partition, long offset) {
        nextOffsets.merge(partition, offset + 1, Math::max);
    }

    /** Every record sent since the last call, in send order. */
    List<Sent> takeSent() {
        List<Sent> out = new ArrayList<>(sent);
        sent.clear();
        return out;
    }

    /** The sends and reads to the end since the last call, in order. */
    List<String> takeSteps() {
        List<String> out = new ArrayList<>(steps);
        steps.clear();
        sends = 0;
        return out;
    }

    /**
     * Fails every send from this index on (from 0, counted from the last {@link #takeSteps()}),
     * as a producer reports a failed send: the future fails and the callback gets the
     * exception; the record is not written. {@code -1}: every send succeeds.
     */
    void failSendsFrom(int index) {
        failFrom = index;
    }

    /** Hands every record sent but not yet read to the reader. */
    void deliver() {
        while (!unread.isEmpty()) {
            Sent s = unread.remove(0);
            reader.accept(new OracleRecord(s.partition(), s.offset(), s.key(), s.value()));
        }
    }

    @Override
    public void start(boolean reportErrorsToCallback) {
    }

    @Override
    public void stop() {
    }

    @Override
    public void flush() {
    }

    @Override
    public int partitionCount() {
        return partitions;
    }

    @Override
    public void readToEnd(Callback<Void> callback) {
        steps.add("read_to_end");
        deliver();
        callback.onCompletion(null, null);
    }

    @Override
    public Future<RecordMetadata> sendWithReceipt(K key, byte[] value, org.apache.kafka.clients.producer.Callback callback) {
        if (failFrom >= 0 && sends++ >= failFrom) {
            steps.add("send_failed");
            org.apache.kafka.common.KafkaException failure =
                new org.apache.kafka.common.KafkaException("the oracle failed this send on request");
            if (callback != null) {
                callback.onCompletion(null, failure);
            }
            return CompletableFuture.failedFuture(failure);
        }
        byte[] keyBytes = key == null ? null : keySerializer.serialize(topic, key);
        int partition = keyBytes == null ? 0 : BuiltInPartitioner.partitionForKey(keyBytes, partitions);
        long offset = nextOffsets.getOrDefault(partition, 0L);
        nextOffsets.put(partition, offset + 1);
        Sent record = new Sent(partition, offset, keyBytes, value);
        steps.add("send");
        sent.add(record);
        unread.add(record);
        RecordMetadata metadata = new RecordMetadata(new TopicPartition(topic, partition), offset, 0,
            System.currentTimeMillis(), keyBytes == null ? -1 : keyBytes.length, value == null ? -1 : value.length);
        if (callback != null) {
            callback.onCompletion(metadata, null);
        }
        return CompletableFuture.completedFuture(metadata);
    }

    /** A consumer record of this topic. */
    <T> ConsumerRecord<T, byte[]> consumerRecord(OracleRecord r, T key) {
        return new ConsumerRecord<>(topic, r.partition(), r.offset(), key, r.value());
    }
}
