package org.apache.kafka.connect.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.AbstractStatus;
import org.apache.kafka.connect.runtime.ConnectorStatus;
import org.apache.kafka.connect.runtime.TaskStatus;
import org.apache.kafka.connect.runtime.TopicStatus;
import org.apache.kafka.connect.util.ConnectorTaskId;
import org.apache.kafka.connect.util.Table;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;

/**
 * The real {@link KafkaStatusBackingStore} over a {@link CapturingLog}, built with its
 * package-private test constructor (no worker config, no cluster id) and fed through its
 * package-private {@code read}, the method its consume callback calls.
 */
final class StatusOracle extends TopicOracle {
    static final String TOPIC = "connect-status";

    private final KafkaStatusBackingStore store;
    private final CapturingLog<String> log;
    private final StringDeserializer keys = new StringDeserializer();

    StatusOracle(int partitions) {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of("schemas.enable", "false"), false);
        log = new CapturingLog<>(TOPIC, partitions, new StringSerializer());
        log.readInto(this::read);
        store = new KafkaStatusBackingStore(Time.SYSTEM, converter, TOPIC, () -> null, log);
    }

    @Override
    CapturingLog<?> log() {
        return log;
    }

    @Override
    void apply(OracleRecord record) {
        ConsumerRecord<String, byte[]> r = log.consumerRecord(record, keys.deserialize(TOPIC, record.key()));
        store.read(r);
    }

    @Override
    void completeStartup() {
        // The status store has no started state: start() only reads to the end.
    }

    @Override
    void close() {
        store.stop();
    }

    @Override
    ObjectNode snapshot() {
        ObjectNode out = OracleJson.NODES.objectNode();
        Map<String, JsonNode> connectors = new HashMap<>();
        for (String c : store.connectors()) {
            ConnectorStatus status = store.get(c);
            if (status != null) {
                connectors.put(c, status(status));
            }
        }
        out.set("connectors", OracleJson.sortedObject(connectors));
        Map<String, JsonNode> tasks = new HashMap<>();
        for (Map.Entry<String, Map<Integer, ?>> row : taskRows(store.tasks).entrySet()) {
            Map<String, JsonNode> byTask = new HashMap<>();
            for (Integer task : row.getValue().keySet()) {
                TaskStatus status = store.get(new ConnectorTaskId(row.getKey(), task));
                if (status != null) {
                    byTask.put(Integer.toString(task), status(status));
                }
            }
            if (!byTask.isEmpty()) {
                tasks.put(row.getKey(), OracleJson.sortedObject(byTask));
            }
        }
        out.set("tasks", OracleJson.sortedObject(tasks));
        Map<String, JsonNode> topics = new HashMap<>();
        store.topics.forEach((connector, byTopic) -> {
            Map<String, JsonNode> row = new HashMap<>();
            byTopic.forEach((topic, status) -> row.put(topic, topic(status)));
            topics.put(connector, OracleJson.sortedObject(row));
        });
        out.set("topics", OracleJson.sortedObject(topics));
        return out;
    }

    private static ObjectNode status(AbstractStatus<?> status) {
        ObjectNode node = OracleJson.NODES.objectNode();
        node.put("state", status.state().name());
        node.put("trace", status.trace());
        node.put("worker_id", status.workerId());
        node.put("generation", status.generation());
        String version = Compat.version(status);
        if (version != null) {
            node.put("version", version);
        }
        return node;
    }

    private static ObjectNode topic(TopicStatus status) {
        ObjectNode node = OracleJson.NODES.objectNode();
        node.put("name", status.topic());
        node.put("connector", status.connector());
        node.put("task", status.task());
        node.put("discover_timestamp", status.discoverTimestamp());
        return node;
    }

    /** The rows of Connect's {@link Table} (it has no public way to list them). */
    @SuppressWarnings("unchecked")
    private static Map<String, Map<Integer, ?>> taskRows(Table<String, Integer, ?> table) {
        try {
            Field rows = Table.class.getDeclaredField("table");
            rows.setAccessible(true);
            return (Map<String, Map<Integer, ?>>) rows.get(table);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Table.table is not where the oracle expects it", e);
        }
    }

    @Override
    void write(JsonNode call) {
        String method = text(call, "method");
        switch (method) {
            case "put":
            case "putSafe": {
                boolean safe = method.equals("putSafe");
                String stateName = text(call, "state");
                AbstractStatus.State state = HarnessException.prepare(() -> AbstractStatus.State.valueOf(stateName));
                String connector = text(call, "connector");
                String trace = optionalText(call, "trace");
                String worker = optionalText(call, "worker_id");
                int generation = call.get("generation").asInt();
                String version = optionalText(call, "version");
                JsonNode task = call.get("task");
                if (task == null || task.isNull()) {
                    ConnectorStatus status = Compat.connectorStatus(connector, state, trace, worker, generation, version);
                    if (safe) {
                        store.putSafe(status);
                    } else {
                        store.put(status);
                    }
                } else {
                    TaskStatus status = Compat.taskStatus(new ConnectorTaskId(connector, task.asInt()), state, worker,
                        generation, trace, version);
                    if (safe) {
                        store.putSafe(status);
                    } else {
                        store.put(status);
                    }
                }
                break;
            }
            case "putTopic":
                store.put(new TopicStatus(text(call, "topic"), text(call, "connector"), call.get("task").asInt(),
                    call.get("discover_timestamp").asLong()));
                break;
            case "deleteTopic":
                store.deleteTopic(text(call, "connector"), text(call, "topic"));
                break;
            default:
                throw new HarnessException("unknown status write method " + method);
        }
    }

    /**
     * The parts of the status API that changed across Kafka versions (statuses carry a
     * {@code version} since 4.1), looked up once by reflection so one source builds against both.
     */
    static final class Compat {
        private static final Method VERSION = method(AbstractStatus.class, "version");
        private static final Constructor<ConnectorStatus> CONNECTOR_WITH_VERSION = constructor(ConnectorStatus.class,
            String.class, AbstractStatus.State.class, String.class, String.class, int.class, String.class);
        private static final Constructor<TaskStatus> TASK_WITH_VERSION = constructor(TaskStatus.class,
            ConnectorTaskId.class, AbstractStatus.State.class, String.class, int.class, String.class, String.class);
        /** Before 4.1: {@code (connector, state, trace, workerId, generation)}. */
        private static final Constructor<ConnectorStatus> CONNECTOR_WITHOUT_VERSION = constructor(ConnectorStatus.class,
            String.class, AbstractStatus.State.class, String.class, String.class, int.class);
        /** Before 4.1: {@code (id, state, workerId, generation, trace)}. */
        private static final Constructor<TaskStatus> TASK_WITHOUT_VERSION = constructor(TaskStatus.class,
            ConnectorTaskId.class, AbstractStatus.State.class, String.class, int.class, String.class);

        private Compat() {
        }

        private static Method method(Class<?> type, String name) {
            try {
                return type.getMethod(name);
            } catch (NoSuchMethodException e) {
                return null;
            }
        }

        private static <T> Constructor<T> constructor(Class<T> type, Class<?>... parameters) {
            try {
                return type.getConstructor(parameters);
            } catch (NoSuchMethodException e) {
                return null;
            }
        }

        static String version(AbstractStatus<?> status) {
            try {
                return VERSION == null ? null : (String) VERSION.invoke(status);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }

        static ConnectorStatus connectorStatus(String connector, AbstractStatus.State state, String trace,
                                               String worker, int generation, String version) {
            try {
                if (CONNECTOR_WITH_VERSION != null) {
                    return CONNECTOR_WITH_VERSION.newInstance(connector, state, trace, worker, generation, version);
                }
                return CONNECTOR_WITHOUT_VERSION.newInstance(connector, state, trace, worker, generation);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }

        static TaskStatus taskStatus(ConnectorTaskId id, AbstractStatus.State state, String worker, int generation,
                                     String trace, String version) {
            try {
                if (TASK_WITH_VERSION != null) {
                    return TASK_WITH_VERSION.newInstance(id, state, worker, generation, trace, version);
                }
                return TASK_WITHOUT_VERSION.newInstance(id, state, worker, generation, trace);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
