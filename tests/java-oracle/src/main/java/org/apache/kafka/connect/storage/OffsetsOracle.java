package org.apache.kafka.connect.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.Worker;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets;
import org.apache.kafka.connect.util.FutureCallback;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The real {@link KafkaOffsetBackingStore} over a {@link CapturingLog}: an anonymous subclass sets
 * the protected {@code offsetLog}, records go to the protected {@code consumedCallback}, and the
 * KIP-875 listing is read the way {@code Worker.sourceConnectorOffsets} reads it
 * ({@code connectorPartitions} then {@link OffsetStorageReaderImpl#offsets}).
 *
 * <p>Writes go through Java's own {@link OffsetStorageWriter}; KIP-875 alter and reset requests
 * are parsed as the REST layer parses them ({@link ConnectorOffsets} with a default Jackson
 * mapper), normalized by the Worker's own {@code normalizeSourceConnectorOffsets} and written
 * by the same writer, as {@code Worker.modifySourceConnectorOffsets} does.
 */
final class OffsetsOracle extends TopicOracle {
    static final String TOPIC = "connect-offsets";

    private final JsonConverter keyConverter = converter(true);
    private final JsonConverter valueConverter = converter(false);
    private final CapturingLog<byte[]> log;
    private final KafkaOffsetBackingStore store;
    /**
     * The partition of each live key's latest record: Java keeps none, the contract shows it
     * ({@code null} when not tracked, as in the benchmark, which measures the store alone).
     */
    private final Map<ByteBuffer, Integer> partitionOf;

    OffsetsOracle(int partitions) {
        this(partitions, true);
    }

    OffsetsOracle(int partitions, boolean trackPartitions) {
        partitionOf = trackPartitions ? new HashMap<>() : null;
        log = new CapturingLog<>(TOPIC, partitions, new ByteArraySerializer());
        log.readInto(this::read);
        CapturingLog<byte[]> underlying = log;
        store = new KafkaOffsetBackingStore(() -> null, () -> "oracle-", keyConverter) {
            {
                offsetLog = underlying;
            }
        };
    }

    private static JsonConverter converter(boolean isKey) {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of("schemas.enable", "false"), isKey);
        return converter;
    }

    @Override
    CapturingLog<?> log() {
        return log;
    }

    @Override
    void apply(OracleRecord record) {
        store.consumedCallback.onCompletion(null, log.consumerRecord(record, record.key()));
        if (partitionOf == null) {
            return;
        }
        ByteBuffer key = record.key() == null ? null : ByteBuffer.wrap(record.key());
        if (record.value() == null) {
            partitionOf.remove(key);
        } else {
            partitionOf.put(key, record.partition());
        }
    }

    @Override
    void completeStartup() {
        // The offsets store has no started state.
    }

    /** Live keys in the store. */
    int liveEntries() {
        return store.data.size();
    }

    @SuppressWarnings("unchecked")
    private Map<String, Set<Map<String, Object>>> allConnectorPartitions() {
        try {
            Field field = KafkaOffsetBackingStore.class.getDeclaredField("connectorPartitions");
            field.setAccessible(true);
            return (Map<String, Set<Map<String, Object>>>) field.get(store);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("KafkaOffsetBackingStore.connectorPartitions is not where the oracle expects it", e);
        }
    }

    /** Key bytes in the order of unsigned bytes, a null key first. */
    private static int compareKeys(ByteBuffer a, ByteBuffer b) {
        if (a == null || b == null) {
            return Boolean.compare(a != null, b != null);
        }
        return Arrays.compareUnsigned(a.array(), b.array());
    }

    @Override
    ObjectNode snapshot() {
        ObjectNode out = OracleJson.NODES.objectNode();
        List<ByteBuffer> keys = new ArrayList<>(store.data.keySet());
        keys.sort(OffsetsOracle::compareKeys);
        ArrayNode entries = out.putArray("entries");
        for (ByteBuffer key : keys) {
            ObjectNode entry = entries.addObject();
            entry.put("partition", partitionOf == null ? 0 : partitionOf.getOrDefault(key, 0));
            entry.put("key", key == null ? null : OracleJson.text(key.array()));
            entry.put("value", OracleJson.text(store.data.get(key).array()));
        }
        Map<String, Set<Map<String, Object>>> all = allConnectorPartitions();
        List<String> connectors = new ArrayList<>(all.keySet());
        connectors.sort(OracleJson.CODE_POINTS);
        ObjectNode partitions = out.putObject("connector_partitions");
        ObjectNode listings = out.putObject("connectors");
        for (String connector : connectors) {
            List<Map<String, Object>> known = new ArrayList<>(store.connectorPartitions(connector));
            known.sort(OracleJson.VALUE_ORDER);
            ArrayNode list = partitions.putArray(connector);
            known.forEach(p -> list.add(OracleJson.sorted(p)));
            listings.set(connector, listing(connector));
        }
        return out;
    }

    /** {@code GET /connectors/{c}/offsets} for a source connector, entries sorted by partition. */
    private ObjectNode listing(String connector) {
        OffsetStorageReaderImpl reader = new OffsetStorageReaderImpl(store, connector, keyConverter, valueConverter);
        Map<Map<String, Object>, Map<String, Object>> offsets = reader.offsets(store.connectorPartitions(connector));
        List<Map.Entry<Map<String, Object>, Map<String, Object>>> entries = new ArrayList<>(offsets.entrySet());
        entries.sort((a, b) -> OracleJson.VALUE_ORDER.compare(a.getKey(), b.getKey()));
        ObjectNode listing = OracleJson.NODES.objectNode();
        ArrayNode list = listing.putArray("offsets");
        for (Map.Entry<Map<String, Object>, Map<String, Object>> e : entries) {
            ObjectNode item = list.addObject();
            item.set("partition", OracleJson.ordered(e.getKey()));
            item.set("offset", OracleJson.ordered(e.getValue()));
        }
        return listing;
    }

    @Override
    void write(JsonNode call) throws Exception {
        String method = text(call, "method");
        switch (method) {
            case "flush": {
                OffsetStorageWriter writer = new OffsetStorageWriter(store, text(call, "namespace"), keyConverter, valueConverter);
                for (JsonNode item : call.get("offsets")) {
                    JsonNode offset = item.get("offset");
                    writer.offset(OracleJson.members(item.get("partition")),
                        offset == null || offset.isNull() ? null : OracleJson.members(offset));
                }
                flush(writer);
                break;
            }
            case "alterOffsets": {
                ConnectorOffsets request = OracleJson.MAPPER.readValue(text(call, "body"), ConnectorOffsets.class);
                if (request.offsets() == null || request.offsets().isEmpty()) {
                    // ConnectorsResource.alterConnectorOffsets refuses this before the herder
                    // sees it; the oracle does not run that resource, so this is its own check.
                    throw new HarnessException("Partitions / offsets need to be provided for an alter offsets request");
                }
                modify(text(call, "connector"), request.toMap());
                break;
            }
            case "resetOffsets": {
                Map<Map<String, ?>, Map<String, ?>> tombstones = new HashMap<>();
                store.connectorPartitions(text(call, "connector")).forEach(p -> tombstones.put(p, null));
                modify(text(call, "connector"), tombstones);
                break;
            }
            default:
                throw new HarnessException("unknown offsets write method " + method);
        }
    }

    /** The write step of {@code Worker.modifySourceConnectorOffsets} (no transaction). */
    private void modify(String connector, Map<Map<String, ?>, Map<String, ?>> offsets) throws Exception {
        Map<Map<String, ?>, Map<String, ?>> normalized = normalize(offsets);
        if (normalized.isEmpty()) {
            return;
        }
        OffsetStorageWriter writer = new OffsetStorageWriter(store, connector, keyConverter, valueConverter);
        normalized.forEach(writer::offset);
        flush(writer);
    }

    /**
     * Flushes and waits; a failed flush throws the exception the writer's callback got (the
     * producer's), not the future's wrapper.
     */
    private static void flush(OffsetStorageWriter writer) throws Exception {
        if (writer.beginFlush()) {
            FutureCallback<Void> done = new FutureCallback<>();
            writer.doFlush(done);
            try {
                done.get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (e.getCause() instanceof Exception) {
                    throw (Exception) e.getCause();
                }
                throw e;
            }
        }
    }

    /**
     * {@code Worker.normalizeSourceConnectorOffsets}, Java's own code: it only uses the worker's
     * two internal converters, so it runs on a Worker allocated without its constructor (which
     * would need plugins, a herder's config and an offsets store) with just those two fields set.
     */
    @SuppressWarnings("unchecked")
    private Map<Map<String, ?>, Map<String, ?>> normalize(Map<Map<String, ?>, Map<String, ?>> offsets) throws Exception {
        Worker worker = bareWorker(keyConverter, valueConverter);
        Method normalize = Worker.class.getDeclaredMethod("normalizeSourceConnectorOffsets", Map.class);
        normalize.setAccessible(true);
        try {
            return (Map<Map<String, ?>, Map<String, ?>>) normalize.invoke(worker, offsets);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof Exception) {
                throw (Exception) e.getCause();
            }
            throw e;
        }
    }

    private static Worker bareWorker(JsonConverter keyConverter, JsonConverter valueConverter) throws Exception {
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
        theUnsafe.setAccessible(true);
        Object unsafe = theUnsafe.get(null);
        Worker worker = (Worker) unsafeClass.getMethod("allocateInstance", Class.class).invoke(unsafe, Worker.class);
        for (String name : List.of("internalKeyConverter", "internalValueConverter")) {
            Field field = Worker.class.getDeclaredField(name);
            field.setAccessible(true);
            field.set(worker, name.startsWith("internalKey") ? keyConverter : valueConverter);
        }
        return worker;
    }
}
