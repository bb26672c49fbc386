package org.apache.kafka.connect.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Base64;

/**
 * One real backing store driven over given records, for one case: records are applied one at a
 * time through the store's own consume callback (so every record is its own poll batch), then the
 * store is read through its public API and written in connect-state's JSON contract.
 *
 * <p>Exceptions the store throws while applying a record are reported with the record and the
 * phase (a real worker fails to start on most of them during start-up, and drops the rest of the
 * poll batch after it); they never stop the case.
 */
abstract class TopicOracle {
    /** The listener callbacks (config) heard so far, in order. */
    protected final ArrayNode events = OracleJson.NODES.arrayNode();
    private final ArrayNode exceptions = OracleJson.NODES.arrayNode();
    private String phase = "catch_up";

    /** The capturing log under the store. */
    abstract CapturingLog<?> log();

    /** Hands one record to the store's consume callback. */
    abstract void apply(OracleRecord record);

    /** What the store does when its initial read to the end is complete. */
    abstract void completeStartup();

    /** The store's state in the JSON contract. */
    abstract ObjectNode snapshot();

    /** Runs one write call ({@code {"method": ..., ...}}) on the store. */
    abstract void write(JsonNode call) throws Exception;

    /** Releases what the store holds (threads). */
    void close() {
    }

    /** Applies a record, reporting instead of throwing what the store throws. */
    final void read(OracleRecord record) {
        log().noteRead(record.partition(), record.offset());
        try {
            apply(record);
        } catch (Exception | StackOverflowError e) {
            ObjectNode report = OracleJson.exception(e);
            report.put("phase", phase);
            report.put("partition", record.partition());
            report.put("offset", record.offset());
            exceptions.add(report);
        }
    }

    /** Ends the start-up read: from here on the store is started (listener callbacks fire). */
    final void start() {
        if (!"catch_up".equals(phase)) {
            return;
        }
        try {
            completeStartup();
        } catch (Exception e) {
            ObjectNode report = OracleJson.exception(e);
            report.put("phase", "start");
            exceptions.add(report);
        }
        phase = "live";
    }

    /** Whether {@link #start()} ran. */
    final boolean started() {
        return !"catch_up".equals(phase);
    }

    /** Runs a write call and returns {@code {"records": [...], "error": ...}}. */
    final ObjectNode runWrite(JsonNode call) {
        ObjectNode result = OracleJson.NODES.objectNode();
        log().takeSteps();
        log().failSendsFrom(call.path("fail_sends_from").asInt(-1));
        JsonNode error = OracleJson.NODES.nullNode();
        try {
            write(call);
        } catch (HarnessException e) {
            // The oracle's own code failed: not Connect's answer (the judge fails the case).
            ObjectNode report = OracleJson.exception(e.getCause() == null ? e : e.getCause());
            report.put("harness", true);
            error = report;
        } catch (Exception e) {
            error = OracleJson.exception(e);
        }
        ArrayNode steps = result.putArray("steps");
        log().takeSteps().forEach(steps::add);
        log().failSendsFrom(-1);
        ArrayNode records = result.putArray("records");
        for (CapturingLog.Sent sent : log().takeSent()) {
            ObjectNode r = records.addObject();
            r.put("partition", sent.partition());
            r.put("key_base64", sent.key() == null ? null : Base64.getEncoder().encodeToString(sent.key()));
            r.put("value_base64", sent.value() == null ? null : Base64.getEncoder().encodeToString(sent.value()));
        }
        result.set("error", error);
        // The records written are read back, as a worker reads its own writes.
        log().deliver();
        return result;
    }

    /** The exceptions reported so far. */
    final ArrayNode exceptions() {
        return exceptions;
    }

    /** Reports an exception that is not tied to one record (e.g. a snapshot accessor). */
    final void reportSnapshotException(Exception e, String connector) {
        ObjectNode report = OracleJson.exception(e);
        report.put("phase", "snapshot");
        report.put("connector", connector);
        exceptions.add(report);
    }

    /** A required text member of a write call. */
    static String text(JsonNode call, String name) {
        JsonNode node = call.get(name);
        if (node == null || !node.isTextual()) {
            throw new HarnessException("write call needs a string member \"" + name + "\": " + call);
        }
        return node.asText();
    }

    /** An optional text member of a write call. */
    static String optionalText(JsonNode call, String name) {
        JsonNode node = call.get(name);
        return node == null || node.isNull() ? null : node.asText();
    }
}
