package org.apache.kafka.connect.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The oracle's entry point.
 *
 * <pre>
 * serve                      one case per line on stdin, one result per line on stdout
 * replay --topic T [--live-from N] [--events] FILE|-
 *                            a kcat JSON-lines dump, printed as connect-state replay --format json prints it
 * bench ...                  see {@link OracleBench}
 * </pre>
 *
 * <p>A case: {@code {"id": any, "topic": "config"|"status"|"offsets", "live_from": N, "partitions": N,
 * "records": [{"partition": P, "offset": O, "key_base64": B|null, "value_base64": B|null}],
 * "writes": [{"method": ...}]}}. Records may give {@code key}/{@code payload} as text instead
 * (kcat's names). Records at or after {@code live_from} are read after the store started (config
 * listener callbacks fire); without it the store starts after the last record. {@code partitions}
 * (default: the highest partition of the records + 1) is the topic's partition count. A result:
 * {@code {"id", "snapshot", "events", "exceptions", "writes"}}.
 */
public final class OracleMain {
    private OracleMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage(System.err);
            System.exit(2);
        }
        switch (args[0]) {
            case "serve":
                serve();
                break;
            case "replay":
                System.exit(replay(args));
                break;
            case "bench":
                System.exit(OracleBench.main(args));
                break;
            case "version":
                System.out.println("Kafka " + kafkaVersion() + " on Java " + System.getProperty("java.version")
                    + " (" + System.getProperty("java.home") + ")");
                break;
            case "-h":
            case "--help":
                usage(System.out);
                break;
            default:
                System.err.println("error: unknown command " + args[0]);
                usage(System.err);
                System.exit(2);
        }
    }

    private static void usage(PrintStream out) {
        out.println("usage: oracle serve");
        out.println("       oracle replay --topic config|status|offsets [--live-from OFFSET] [--events] FILE|-");
        out.println("       oracle bench --topic config|status|offsets --runs N FILE");
        out.println("       oracle version");
    }

    /** Answers cases, one JSON line each, until stdin ends. A bad line gets an error answer. */
    private static void serve() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer;
            JsonNode id = OracleJson.NODES.nullNode();
            try {
                JsonNode request = OracleJson.PROTOCOL.readTree(line);
                id = request.path("id");
                if ("version".equals(request.path("op").asText())) {
                    answer = OracleJson.NODES.objectNode();
                    answer.put("kafka_version", kafkaVersion());
                    answer.put("java_version", System.getProperty("java.version"));
                } else {
                    answer = runCase(request);
                }
            } catch (Exception | StackOverflowError e) {
                answer = OracleJson.NODES.objectNode();
                answer.put("error", e.toString());
            }
            answer.set("id", id);
            out.write(OracleJson.ANSWERS.writeValueAsString(answer));
            out.write('\n');
            if (!in.ready()) {
                out.flush();
            }
        }
        out.flush();
    }

    /** The version of the Kafka jars on the class path (as kafka-clients records it). */
    static String kafkaVersion() {
        java.util.Properties props = new java.util.Properties();
        try (java.io.InputStream in = org.apache.kafka.clients.consumer.ConsumerRecord.class
                .getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in != null) {
                props.load(in);
            }
        } catch (IOException e) {
            return "unknown";
        }
        return props.getProperty("version", "unknown");
    }

    /** The store for a topic kind. */
    static TopicOracle oracle(String topic, int partitions) {
        switch (topic) {
            case "config":
                return new ConfigOracle(partitions);
            case "status":
                return new StatusOracle(partitions);
            case "offsets":
                return new OffsetsOracle(partitions);
            default:
                throw new IllegalArgumentException("unknown topic " + topic + " (config, status or offsets)");
        }
    }

    /** Runs one case: the records, the start, the writes, then the snapshot. */
    static ObjectNode runCase(JsonNode request) {
        String topic = request.path("topic").asText();
        List<OracleRecord> records = records(request.path("records"));
        int partitions = request.hasNonNull("partitions")
            ? request.get("partitions").asInt()
            : records.stream().mapToInt(OracleRecord::partition).max().orElse(0) + 1;
        Long liveFrom = request.hasNonNull("live_from") ? request.get("live_from").asLong() : null;
        TopicOracle oracle = oracle(topic, partitions);
        OracleJson.takeLoneSurrogates();
        // Status and offsets stores have no listener: what they expose while records arrive
        // is their state, taken after each live record.
        boolean traced = liveFrom != null && !topic.equals("config");
        ArrayNode trace = OracleJson.NODES.arrayNode();
        try {
            for (OracleRecord r : records) {
                if (liveFrom != null && r.offset() >= liveFrom) {
                    oracle.start();
                }
                oracle.read(r);
                if (traced && oracle.started()) {
                    trace.add(oracle.snapshot());
                }
            }
            oracle.start();
            ArrayNode writes = OracleJson.NODES.arrayNode();
            for (JsonNode call : request.path("writes")) {
                writes.add(oracle.runWrite(call));
            }
            ObjectNode answer = OracleJson.NODES.objectNode();
            answer.set("snapshot", oracle.snapshot());
            answer.set("events", oracle.events);
            answer.set("trace", trace);
            answer.set("exceptions", oracle.exceptions());
            answer.set("writes", writes);
            answer.put("lone_surrogates", OracleJson.takeLoneSurrogates());
            return answer;
        } finally {
            oracle.close();
        }
    }

    private static byte[] bytes(JsonNode record, String base64Name, String textName) {
        JsonNode b64 = record.get(base64Name);
        if (b64 != null) {
            return b64.isNull() ? null : Base64.getDecoder().decode(b64.asText());
        }
        JsonNode text = record.get(textName);
        return text == null || text.isNull() ? null : text.asText().getBytes(StandardCharsets.UTF_8);
    }

    static List<OracleRecord> records(JsonNode array) {
        List<OracleRecord> records = new ArrayList<>();
        for (JsonNode r : array) {
            records.add(record(r));
        }
        return records;
    }

    private static OracleRecord record(JsonNode r) {
        byte[] value = r.has("value_base64") ? bytes(r, "value_base64", "payload")
            : bytes(r, "value_base64", r.has("payload") ? "payload" : "value");
        return new OracleRecord(r.path("partition").asInt(0), r.path("offset").asLong(), bytes(r, "key_base64", "key"), value);
    }

    /** Reads a kcat dump (one JSON object per line, blank lines ignored), as connect-state does. */
    static List<OracleRecord> readDump(String file) throws IOException {
        List<String> lines = file.equals("-")
            ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).lines().toList()
            : Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
        List<OracleRecord> records = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            JsonNode node;
            try {
                node = OracleJson.PROTOCOL.readTree(line);
            } catch (IOException e) {
                throw new IllegalArgumentException("line " + (i + 1) + ": not valid JSON: " + e.getMessage());
            }
            if (!node.isObject()) {
                throw new IllegalArgumentException("line " + (i + 1) + ": not a JSON object");
            }
            if (!node.path("offset").canConvertToLong() || !node.path("offset").isIntegralNumber()) {
                throw new IllegalArgumentException("line " + (i + 1) + ": `offset` must be an integer");
            }
            records.add(record(node));
        }
        return records;
    }

    private static int replay(String[] args) throws IOException {
        String topic = null;
        Long liveFrom = null;
        boolean withEvents = false;
        String file = null;
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--topic":
                    topic = i + 1 < args.length ? args[++i] : null;
                    break;
                case "--live-from":
                    if (i + 1 >= args.length) {
                        System.err.println("error: --live-from needs an offset");
                        return 2;
                    }
                    try {
                        liveFrom = Long.parseLong(args[++i]);
                    } catch (NumberFormatException e) {
                        System.err.println("error: --live-from needs an offset, found " + args[i]);
                        return 2;
                    }
                    break;
                case "--events":
                    withEvents = true;
                    break;
                default:
                    if (file != null || (args[i].startsWith("-") && !args[i].equals("-"))) {
                        System.err.println("error: unexpected argument " + args[i]);
                        usage(System.err);
                        return 2;
                    }
                    file = args[i];
            }
        }
        if (topic == null || file == null) {
            usage(System.err);
            return 2;
        }
        ObjectNode request = OracleJson.NODES.objectNode();
        request.put("topic", topic);
        if (liveFrom != null) {
            request.put("live_from", liveFrom);
        }
        ObjectNode answer;
        try {
            ArrayNode records = request.putArray("records");
            for (OracleRecord r : readDump(file)) {
                ObjectNode node = records.addObject();
                node.put("partition", r.partition());
                node.put("offset", r.offset());
                node.put("key_base64", r.key() == null ? null : Base64.getEncoder().encodeToString(r.key()));
                node.put("value_base64", r.value() == null ? null : Base64.getEncoder().encodeToString(r.value()));
            }
            answer = runCase(request);
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            return 2;
        }
        ObjectNode doc;
        if (withEvents) {
            doc = OracleJson.NODES.objectNode();
            doc.set("snapshot", answer.get("snapshot"));
            doc.set("events", answer.get("events"));
        } else {
            doc = (ObjectNode) answer.get("snapshot");
        }
        if (!answer.get("exceptions").isEmpty()) {
            doc.set("exceptions", answer.get("exceptions"));
        }
        System.out.println(OracleJson.pretty(doc));
        return 0;
    }
}
