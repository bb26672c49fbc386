package org.apache.kafka.connect.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.RestartRequest;
import org.apache.kafka.connect.runtime.SessionKey;
import org.apache.kafka.connect.runtime.TargetState;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;
import org.apache.kafka.connect.util.Callback;
import org.apache.kafka.connect.util.ConnectorTaskId;
import org.apache.kafka.connect.util.KafkaBasedLog;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.spec.SecretKeySpec;

/**
 * The real {@link KafkaConfigBackingStore} over a {@link CapturingLog}.
 *
 * <p>The store is {@code final} in Kafka 4.x, so its log cannot be replaced by overriding
 * {@code createKafkaBasedLog}; instead the store is built as a worker builds it (its constructor
 * creates a {@code KafkaBasedLog} but no clients), its private {@code ConsumeCallback} is taken
 * from that log, and the package-private {@code setConfigLog} puts the capturing log in its place.
 * Records are handed to that callback, exactly as {@code KafkaBasedLog.poll} hands them over.
 */
final class ConfigOracle extends TopicOracle {
    static final String TOPIC = "connect-configs";
    private static final DistributedConfig WORKER_CONFIG = workerConfig();

    private final KafkaConfigBackingStore store;
    private final CapturingLog<String> log;
    private final Callback<ConsumerRecord<String, byte[]>> consume;
    private final StringDeserializer keys = new StringDeserializer();
    /** The key of the record being applied (Java's task-update callback names no connector). */
    private String currentKey;

    ConfigOracle(int partitions) {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of("schemas.enable", "false"), false);
        store = new KafkaConfigBackingStore(converter, WORKER_CONFIG, null, () -> null, "oracle-");
        consume = callbackOf(store);
        log = new CapturingLog<>(TOPIC, partitions, new StringSerializer());
        log.readInto(this::read);
        store.setConfigLog(log);
        store.setUpdateListener(new Listener());
    }

    /**
     * A distributed worker's config as the oracle's stores need it. The Kafka cluster id is set
     * beforehand: {@code kafkaClusterId()} would otherwise ask a broker for it.
     */
    static DistributedConfig workerConfig() {
        Map<String, String> props = new HashMap<>();
        props.put("bootstrap.servers", "127.0.0.1:1");
        props.put("group.id", "connect-state-oracle");
        props.put("config.storage.topic", TOPIC);
        props.put("status.storage.topic", StatusOracle.TOPIC);
        props.put("offset.storage.topic", OffsetsOracle.TOPIC);
        props.put("key.converter", JsonConverter.class.getName());
        props.put("value.converter", JsonConverter.class.getName());
        props.put("key.converter.schemas.enable", "false");
        props.put("value.converter.schemas.enable", "false");
        DistributedConfig config = new DistributedConfig(props);
        try {
            Field clusterId = WorkerConfig.class.getDeclaredField("kafkaClusterId");
            clusterId.setAccessible(true);
            clusterId.set(config, "connect-state-oracle");
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("WorkerConfig.kafkaClusterId is not where the oracle expects it", e);
        }
        return config;
    }

    @SuppressWarnings("unchecked")
    private static Callback<ConsumerRecord<String, byte[]>> callbackOf(KafkaConfigBackingStore store) {
        try {
            Field logField = KafkaConfigBackingStore.class.getDeclaredField("configLog");
            logField.setAccessible(true);
            KafkaBasedLog<String, byte[]> original = (KafkaBasedLog<String, byte[]>) logField.get(store);
            Field callback = KafkaBasedLog.class.getDeclaredField("consumedCallback");
            callback.setAccessible(true);
            return (Callback<ConsumerRecord<String, byte[]>>) callback.get(original);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the config store's consume callback is not where the oracle expects it", e);
        }
    }

    @Override
    CapturingLog<?> log() {
        return log;
    }

    @Override
    void apply(OracleRecord record) {
        String key = keys.deserialize(TOPIC, record.key());
        currentKey = key;
        try {
            consume.onCompletion(null, log.consumerRecord(record, key));
        } finally {
            currentKey = null;
        }
    }

    @Override
    void completeStartup() {
        store.start();
    }

    private final class Listener implements ConfigBackingStore.UpdateListener {
        private ObjectNode event(String type) {
            ObjectNode e = events.addObject();
            e.put("type", type);
            return e;
        }

        @Override
        public void onConnectorConfigRemove(String connector) {
            event("connector_config_removed").put("connector", connector);
        }

        @Override
        public void onConnectorConfigUpdate(String connector) {
            event("connector_config_updated").put("connector", connector);
        }

        @Override
        public void onTaskConfigUpdate(Collection<ConnectorTaskId> tasks) {
            // Java names no connector: the commit record being applied does.
            String connector = currentKey != null && currentKey.startsWith("commit-")
                ? currentKey.substring("commit-".length())
                : null;
            List<Integer> ids = new ArrayList<>();
            for (ConnectorTaskId id : tasks) {
                ids.add(id.task());
                connector = id.connector();
            }
            ids.sort(Integer::compare);
            ObjectNode e = event("task_configs_updated");
            e.put("connector", connector);
            ArrayNode list = e.putArray("tasks");
            ids.forEach(list::add);
        }

        @Override
        public void onConnectorTargetStateChange(String connector) {
            TargetState state = store.connectorTargetStates.get(connector);
            ObjectNode e = event("target_state_changed");
            e.put("connector", connector);
            e.put("state", state == null ? null : state.name());
        }

        @Override
        public void onSessionKeyUpdate(SessionKey sessionKey) {
            event("session_key_updated");
        }

        @Override
        public void onRestartRequest(RestartRequest request) {
            ObjectNode e = event("restart_requested");
            e.put("connector", request.connectorName());
            e.put("only_failed", request.onlyFailed());
            e.put("include_tasks", request.includeTasks());
        }

        @Override
        public void onLoggingLevelUpdate(String namespace, String level) {
            ObjectNode e = event("logger_level_updated");
            e.put("namespace", namespace);
            e.put("level", level);
        }
    }

    @Override
    ObjectNode snapshot() {
        ClusterConfigState s = store.snapshot();
        ObjectNode out = OracleJson.NODES.objectNode();
        out.put("offset", s.offset());
        SessionKey key = s.sessionKey();
        if (key == null) {
            out.putNull("session_key");
        } else {
            ObjectNode k = out.putObject("session_key");
            k.put("key", Base64.getEncoder().encodeToString(key.key().getEncoded()));
            k.put("algorithm", key.key().getAlgorithm());
            k.put("creation_timestamp", key.creationTimestamp());
        }
        out.set("connectors", OracleJson.sortedStrings(s.connectors()));
        Map<String, JsonNode> configs = new HashMap<>();
        for (String c : s.connectors()) {
            configs.put(c, OracleJson.sorted(s.rawConnectorConfig(c)));
        }
        out.set("connector_configs", OracleJson.sortedObject(configs));
        Map<String, JsonNode> states = new HashMap<>();
        s.connectorTargetStates.forEach((c, state) -> states.put(c, OracleJson.NODES.textNode(state.name())));
        out.set("target_states", OracleJson.sortedObject(states));
        out.set("connector_task_counts", numbers(s.connectorTaskCounts));
        Map<String, JsonNode> tasks = new HashMap<>();
        for (String c : s.connectors()) {
            try {
                ArrayNode ids = OracleJson.NODES.arrayNode();
                for (ConnectorTaskId id : s.tasks(c)) {
                    ids.add(id.task());
                }
                tasks.put(c, ids);
            } catch (RuntimeException e) {
                reportSnapshotException(e, c);
            }
        }
        out.set("tasks", OracleJson.sortedObject(tasks));
        Map<String, Map<String, JsonNode>> grouped = new TreeMap<>(OracleJson.CODE_POINTS);
        s.taskConfigs.forEach((id, config) -> grouped
            .computeIfAbsent(id.connector(), c -> new HashMap<>())
            .put(Integer.toString(id.task()), OracleJson.sorted(config)));
        ObjectNode taskConfigs = OracleJson.NODES.objectNode();
        grouped.forEach((c, byTask) -> taskConfigs.set(c, OracleJson.sortedObject(byTask)));
        out.set("task_configs", taskConfigs);
        Map<String, JsonNode> applied = new HashMap<>();
        for (String c : s.appliedConnectorConfigs.keySet()) {
            applied.put(c, OracleJson.sorted(s.appliedConnectorConfig(c)));
        }
        out.set("applied_connector_configs", OracleJson.sortedObject(applied));
        out.set("task_count_records", numbers(s.connectorTaskCountRecords));
        out.set("task_config_generations", numbers(s.connectorTaskConfigGenerations));
        out.set("pending_fencing", OracleJson.sortedStrings(s.connectorsPendingFencing));
        out.set("inconsistent", OracleJson.sortedStrings(s.inconsistentConnectors()));
        return out;
    }

    private static ObjectNode numbers(Map<String, Integer> map) {
        Map<String, JsonNode> nodes = new HashMap<>();
        map.forEach((k, v) -> nodes.put(k, OracleJson.NODES.numberNode(v)));
        return OracleJson.sortedObject(nodes);
    }

    /**
     * Properties as a map in the order given: a JSON object, or a list of {@code [name, value]}
     * pairs (which keeps the order through a client's JSON library); values are strings or null.
     */
    private static Map<String, String> properties(JsonNode node) {
        Map<String, Object> members = OracleJson.members(node);
        Map<String, String> map = new LinkedHashMap<>();
        members.forEach((k, v) -> map.put(k, v == null ? null : String.valueOf(v)));
        return map;
    }

    @Override
    void write(JsonNode call) throws Exception {
        String method = text(call, "method");
        switch (method) {
            case "putConnectorConfig": {
                String state = optionalText(call, "target_state");
                TargetState target = state == null ? null : HarnessException.prepare(() -> TargetState.valueOf(state));
                store.putConnectorConfig(text(call, "connector"), properties(call.get("properties")), target);
                break;
            }
            case "removeConnectorConfig":
                store.removeConnectorConfig(text(call, "connector"));
                break;
            case "putTaskConfigs": {
                List<Map<String, String>> configs = new ArrayList<>();
                for (JsonNode config : call.get("configs")) {
                    configs.add(properties(config));
                }
                store.putTaskConfigs(text(call, "connector"), configs);
                break;
            }
            case "putTargetState":
                String state = text(call, "state");
                store.putTargetState(text(call, "connector"), HarnessException.prepare(() -> TargetState.valueOf(state)));
                break;
            case "putRestartRequest":
                store.putRestartRequest(new RestartRequest(text(call, "connector"),
                    call.get("only_failed").asBoolean(), call.get("include_tasks").asBoolean()));
                break;
            case "putTaskCountRecord":
                store.putTaskCountRecord(text(call, "connector"), call.get("task_count").asInt());
                break;
            case "putSessionKey": {
                String encoded = text(call, "key_base64");
                String algorithm = text(call, "algorithm");
                // A worker's key comes from a KeyGenerator; javax.crypto refuses an empty one
                // before any Connect code runs, so that is the harness's failure, not Connect's.
                SecretKeySpec key = HarnessException.prepare(() ->
                    new SecretKeySpec(Base64.getDecoder().decode(encoded), algorithm));
                store.putSessionKey(new SessionKey(key, call.get("creation_timestamp").asLong()));
                break;
            }
            case "putLoggerLevel":
                store.putLoggerLevel(text(call, "namespace"), text(call, "level"));
                break;
            default:
                throw new HarnessException("unknown config write method " + method);
        }
    }
}
