package org.apache.kafka.connect.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How the oracle writes Java values in connect-state's JSON contract.
 *
 * <p>The contract sorts every map by key in Unicode code point order (the order of UTF-8 bytes,
 * which is how the Rust side sorts), except where Java's own {@code HashMap} order is the answer
 * (the KIP-875 listing), which {@link #ordered} keeps. Lists Java builds from sets are sorted
 * with {@link #VALUE_ORDER}, the order connect-state's {@code JsonValue} has.
 */
final class OracleJson {
    /** A default mapper: what Connect's REST layer reads request bodies with. */
    static final ObjectMapper MAPPER = new ObjectMapper();
    /**
     * The oracle's own protocol (cases in, answers out, dumps): Jackson without its default
     * limits, so a record at or past the limits Connect reads under (1000 levels, 20,000,000
     * characters, ...) can be handed over and its state answered. Connect's own converters keep
     * their limits: they are what is judged.
     */
    static final ObjectMapper PROTOCOL = protocolMapper();
    /**
     * How {@code serve} writes its answers: as {@link #PROTOCOL}, but a non-finite double is
     * the bare token {@code Infinity}, {@code -Infinity} or {@code NaN}, not the string Jackson
     * writes by default, so the judge can tell Java's double from a string (its reader takes
     * those tokens).
     */
    static final com.fasterxml.jackson.databind.ObjectWriter ANSWERS =
        PROTOCOL.writer().without(com.fasterxml.jackson.core.json.JsonWriteFeature.WRITE_NAN_AS_STRINGS);

    private static ObjectMapper protocolMapper() {
        com.fasterxml.jackson.core.JsonFactory factory = com.fasterxml.jackson.core.JsonFactory.builder()
            .streamReadConstraints(com.fasterxml.jackson.core.StreamReadConstraints.builder()
                .maxNestingDepth(Integer.MAX_VALUE)
                .maxStringLength(Integer.MAX_VALUE)
                .maxNumberLength(Integer.MAX_VALUE)
                .maxNameLength(Integer.MAX_VALUE)
                .maxDocumentLength(-1)
                .build())
            .streamWriteConstraints(com.fasterxml.jackson.core.StreamWriteConstraints.builder()
                .maxNestingDepth(Integer.MAX_VALUE)
                .build())
            .build();
        return new ObjectMapper(factory);
    }
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private OracleJson() {
    }

    /**
     * Lone UTF-16 surrogates replaced since the last {@link #takeLoneSurrogates()}. Jackson reads
     * an escaped lone surrogate (backslash, u, D800) into a Java String, but UTF-8 (and so the contract, and a Rust string)
     * cannot carry it: it is written as U+FFFD, the mapping of the README's deliberate
     * difference 5, and counted so the comparison knows the rule applied.
     */
    private static int loneSurrogates;

    /** The count of lone surrogates written as U+FFFD since the last call, and a reset. */
    static int takeLoneSurrogates() {
        int n = loneSurrogates;
        loneSurrogates = 0;
        return n;
    }

    /** {@code s} with every lone surrogate replaced by U+FFFD (counted). */
    static String clean(String s) {
        if (s == null) {
            return null;
        }
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
            if (paired) {
                if (out != null) {
                    out.append(c).append(s.charAt(i + 1));
                }
                i++;
            } else if (Character.isSurrogate(c)) {
                if (out == null) {
                    out = new StringBuilder(s.substring(0, i));
                }
                out.append('\ufffd');
                loneSurrogates++;
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? s : out.toString();
    }

    /** Strings in code point order (equal to the order of their UTF-8 bytes). */
    static final Comparator<String> CODE_POINTS = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    };

    /**
     * Values in the order of connect-state's {@code JsonValue} (its derived {@code Ord}): null,
     * booleans, longs, doubles (by raw bits, unsigned), strings, lists, maps; lists and maps
     * lexicographically (maps by their entries in key order), a shorter prefix first.
     */
    static final Comparator<Object> VALUE_ORDER = OracleJson::compareValues;

    private static int rank(Object v) {
        if (v == null) {
            return 0;
        } else if (v instanceof Boolean) {
            return 1;
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return 2;
        } else if (v instanceof Double || v instanceof Float) {
            return 3;
        } else if (v instanceof String) {
            return 4;
        } else if (v instanceof List) {
            return 5;
        } else if (v instanceof Map) {
            return 6;
        }
        return 7;
    }

    private static int compareValues(Object a, Object b) {
        int ra = rank(a);
        int rb = rank(b);
        if (ra != rb) {
            return Integer.compare(ra, rb);
        }
        switch (ra) {
            case 0:
                return 0;
            case 1:
                return Boolean.compare((Boolean) a, (Boolean) b);
            case 2:
                return Long.compare(((Number) a).longValue(), ((Number) b).longValue());
            case 3:
                return Long.compareUnsigned(Double.doubleToRawLongBits(((Number) a).doubleValue()),
                    Double.doubleToRawLongBits(((Number) b).doubleValue()));
            case 4:
                return CODE_POINTS.compare((String) a, (String) b);
            case 5:
                return compareIterators(((List<?>) a).iterator(), ((List<?>) b).iterator(), VALUE_ORDER);
            case 6: {
                Iterator<Map.Entry<String, Object>> x = sortedEntries((Map<?, ?>) a).iterator();
                Iterator<Map.Entry<String, Object>> y = sortedEntries((Map<?, ?>) b).iterator();
                return compareIterators(x, y, (p, q) -> {
                    Map.Entry<String, Object> e = (Map.Entry<String, Object>) p;
                    Map.Entry<String, Object> f = (Map.Entry<String, Object>) q;
                    int byKey = CODE_POINTS.compare(e.getKey(), f.getKey());
                    return byKey != 0 ? byKey : compareValues(e.getValue(), f.getValue());
                });
            }
            default:
                return String.valueOf(a).compareTo(String.valueOf(b));
        }
    }

    private static <T> int compareIterators(Iterator<? extends T> x, Iterator<? extends T> y, Comparator<Object> order) {
        while (x.hasNext() && y.hasNext()) {
            int c = order.compare(x.next(), y.next());
            if (c != 0) {
                return c;
            }
        }
        return Boolean.compare(x.hasNext(), y.hasNext());
    }

    /** A map's entries sorted by key; keys are Strings in every map the converters build. */
    static List<Map.Entry<String, Object>> sortedEntries(Map<?, ?> map) {
        TreeMap<String, Object> sorted = new TreeMap<>(CODE_POINTS);
        for (Map.Entry<?, ?> e : map.entrySet()) {
            sorted.put(String.valueOf(e.getKey()), e.getValue());
        }
        return new ArrayList<>(sorted.entrySet());
    }

    /** A Java value as JSON with every map sorted by key. */
    static JsonNode sorted(Object value) {
        return toNode(value, true);
    }

    /** A Java value as JSON with maps in their own iteration order (as Jackson writes them). */
    static JsonNode ordered(Object value) {
        return toNode(value, false);
    }

    private static JsonNode toNode(Object value, boolean sortMaps) {
        if (value == null) {
            return NODES.nullNode();
        } else if (value instanceof String) {
            return NODES.textNode(clean((String) value));
        } else if (value instanceof Boolean) {
            return NODES.booleanNode((Boolean) value);
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return NODES.numberNode(((Number) value).longValue());
        } else if (value instanceof Double || value instanceof Float) {
            return NODES.numberNode(((Number) value).doubleValue());
        } else if (value instanceof BigInteger) {
            return NODES.numberNode((BigInteger) value);
        } else if (value instanceof BigDecimal) {
            return NODES.numberNode((BigDecimal) value);
        } else if (value instanceof byte[]) {
            return NODES.textNode(Base64.getEncoder().encodeToString((byte[]) value));
        } else if (value instanceof Collection) {
            ArrayNode array = NODES.arrayNode();
            for (Object item : (Collection<?>) value) {
                array.add(toNode(item, sortMaps));
            }
            return array;
        } else if (value instanceof Map) {
            ObjectNode object = NODES.objectNode();
            Iterable<? extends Map.Entry<?, ?>> entries = sortMaps
                ? sortedEntries((Map<?, ?>) value)
                : ((Map<?, ?>) value).entrySet();
            for (Map.Entry<?, ?> e : entries) {
                object.set(clean(String.valueOf(e.getKey())), toNode(e.getValue(), sortMaps));
            }
            return object;
        }
        return NODES.textNode(clean(String.valueOf(value)));
    }

    /**
     * A JSON object, or a list of {@code [name, value]} pairs, as a {@code LinkedHashMap} in that
     * order, values as Jackson reads them into Java ({@code Integer}, {@code Long},
     * {@code Double}, {@code String}, {@code Boolean}, null, lists and maps).
     */
    static Map<String, Object> members(JsonNode node) {
        Map<String, Object> map = new java.util.LinkedHashMap<>();
        if (node.isArray()) {
            for (JsonNode pair : node) {
                map.put(pair.get(0).asText(), MAPPER.convertValue(pair.get(1), Object.class));
            }
        } else {
            node.fields().forEachRemaining(f -> map.put(f.getKey(), MAPPER.convertValue(f.getValue(), Object.class)));
        }
        return map;
    }

    /**
     * Pretty JSON laid out as serde_json's pretty printer lays it out (two spaces, {@code "a": b},
     * {@code {}} and {@code []} when empty), so the output of {@code oracle replay} and
     * {@code connect-state replay} can be compared line by line. Scalars are Jackson's.
     */
    static String pretty(JsonNode node) throws java.io.IOException {
        StringBuilder out = new StringBuilder();
        pretty(node, 0, out);
        return out.toString();
    }

    private static void pretty(JsonNode node, int depth, StringBuilder out) throws java.io.IOException {
        String indent = "  ".repeat(depth + 1);
        if (node.isObject() && node.size() > 0) {
            out.append("{\n");
            Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> f = fields.next();
                out.append(indent).append(PROTOCOL.writeValueAsString(f.getKey())).append(": ");
                pretty(f.getValue(), depth + 1, out);
                out.append(fields.hasNext() ? ",\n" : "\n");
            }
            out.append("  ".repeat(depth)).append('}');
        } else if (node.isArray() && node.size() > 0) {
            out.append("[\n");
            for (int i = 0; i < node.size(); i++) {
                out.append(indent);
                pretty(node.get(i), depth + 1, out);
                out.append(i + 1 < node.size() ? ",\n" : "\n");
            }
            out.append("  ".repeat(depth)).append(']');
        } else {
            out.append(PROTOCOL.writeValueAsString(node));
        }
    }

    /** Bytes as text, decoded as UTF-8 with Java's replacement of malformed input. */
    static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    /** An object node whose members are added in sorted key order. */
    static ObjectNode sortedObject(Map<String, ? extends JsonNode> members) {
        TreeMap<String, JsonNode> sorted = new TreeMap<>(CODE_POINTS);
        sorted.putAll(members);
        ObjectNode object = NODES.objectNode();
        sorted.forEach(object::set);
        return object;
    }

    /** A sorted array of strings. */
    static ArrayNode sortedStrings(Collection<String> strings) {
        List<String> list = new ArrayList<>(strings);
        list.sort(CODE_POINTS);
        ArrayNode array = NODES.arrayNode();
        list.forEach(array::add);
        return array;
    }

    /** {@code {"class": ..., "message": ...}} of a throwable. */
    static ObjectNode exception(Throwable t) {
        ObjectNode node = NODES.objectNode();
        node.put("class", t.getClass().getName());
        node.put("message", t.getMessage());
        node.put("kafka_exception", t instanceof org.apache.kafka.common.KafkaException);
        return node;
    }
}
