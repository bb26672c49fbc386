package org.apache.kafka.connect.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code oracle bench [--runs N] [--warmup N] TOPIC=FILE ...}: replays record files through the
 * real stores, the Java row of {@code connect-state bench}. Prints one JSON object.
 *
 * <p>A record file is a sequence of big-endian frames: {@code int partition, long offset, int
 * keyLength (-1: null), key bytes, int valueLength (-1: tombstone), value bytes}.
 *
 * <p>Throughput: the records are read into memory first (untimed); each run replays all of them
 * into a fresh store, one record at a time through the store's consume callback, the key decoded
 * by {@code StringDeserializer} (config, status) as the consumer does; the first {@code warmup}
 * runs let the JIT compile the hot paths and do not count; the best of the next {@code runs}
 * counts. Heap (offsets only, measured first, before any record list is held): the file is
 * streamed into a fresh store, every record's bytes freshly allocated as a consumer allocates
 * them, and the heap in use after a full collection is measured before and after, with the
 * store still reachable.
 */
final class OracleBench {
    private OracleBench() {
    }

    static int main(String[] args) throws IOException {
        int runs = 5;
        int warmup = 3;
        List<String[]> topics = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--runs":
                    runs = Integer.parseInt(args[++i]);
                    break;
                case "--warmup":
                    warmup = Integer.parseInt(args[++i]);
                    break;
                default:
                    String[] pair = args[i].split("=", 2);
                    if (pair.length != 2 || !List.of("config", "status", "offsets").contains(pair[0])) {
                        System.err.println("error: expected TOPIC=FILE (config, status or offsets), found " + args[i]);
                        return 2;
                    }
                    topics.add(pair);
            }
        }
        if (topics.isEmpty()) {
            System.err.println("usage: oracle bench [--runs N] [--warmup N] config=FILE status=FILE offsets=FILE");
            return 2;
        }
        ObjectNode out = OracleJson.NODES.objectNode();
        out.put("java_version", System.getProperty("java.version"));
        out.put("kafka_version", OracleMain.kafkaVersion());
        out.put("runs", runs);
        out.put("warmup_runs", warmup);
        for (String[] topic : topics) {
            if (topic[0].equals("offsets")) {
                // The heap first, before any record list exists: a fresh store fed from the file.
                long before = heapAfterGc();
                OffsetsOracle store = new OffsetsOracle(1, false);
                long streamed = stream(topic[1], store);
                long after = heapAfterGc();
                out.put("offsets_heap_bytes", after - before);
                out.put("offsets_live_entries", store.liveEntries());
                out.put("offsets_stream_records", streamed);
            }
            List<OracleRecord> records = read(topic[1]);
            long best = Long.MAX_VALUE;
            for (int run = 0; run < warmup + runs; run++) {
                long start = System.nanoTime();
                TopicOracle store = replay(topic[0], records);
                long elapsed = System.nanoTime() - start;
                store.close();
                if (run >= warmup) {
                    best = Math.min(best, elapsed);
                }
            }
            out.put(topic[0] + "_records", records.size());
            out.put(topic[0] + "_best_seconds", best / 1e9);
            out.put(topic[0] + "_records_per_sec", records.size() / (best / 1e9));
        }
        System.out.println(OracleJson.MAPPER.writeValueAsString(out));
        return 0;
    }

    /** A store for the benchmark: as the oracle's, without its bookkeeping for the contract. */
    private static TopicOracle store(String topic) {
        return topic.equals("offsets") ? new OffsetsOracle(1, false) : OracleMain.oracle(topic, 1);
    }

    private static TopicOracle replay(String topic, List<OracleRecord> records) {
        TopicOracle store = store(topic);
        for (OracleRecord r : records) {
            store.apply(r);
        }
        return store;
    }

    /** The heap in use after full collections (until it stops shrinking). */
    private static long heapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            long now = rt.totalMemory() - rt.freeMemory();
            if (now >= used) {
                break;
            }
            used = now;
        }
        return used;
    }

    private static OracleRecord frame(DataInputStream in) throws IOException {
        int partition;
        try {
            partition = in.readInt();
        } catch (EOFException end) {
            return null;
        }
        long offset = in.readLong();
        byte[] key = bytes(in);
        byte[] value = bytes(in);
        return new OracleRecord(partition, offset, key, value);
    }

    private static byte[] bytes(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (length < 0) {
            return null;
        }
        byte[] b = new byte[length];
        in.readFully(b);
        return b;
    }

    private static List<OracleRecord> read(String file) throws IOException {
        List<OracleRecord> records = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(file), 1 << 20))) {
            OracleRecord r;
            while ((r = frame(in)) != null) {
                records.add(r);
            }
        }
        return records;
    }

    private static long stream(String file, TopicOracle store) throws IOException {
        long n = 0;
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(file), 1 << 20))) {
            OracleRecord r;
            while ((r = frame(in)) != null) {
                store.apply(r);
                n++;
            }
        }
        return n;
    }
}
