package org.apache.kafka.common.utils;

/**
 * A compatibility shim for the FileStream connectors of connect-file 4.3.1 (Maven Central has no
 * 4.4.0): their {@code version()} calls {@code org.apache.kafka.common.utils.AppInfoParser},
 * which Kafka 4.4 moved to {@code org.apache.kafka.common.utils.internals}. This class answers
 * the one method they call with the running Kafka's version. Nothing else uses it.
 */
public final class AppInfoParser {
    private AppInfoParser() {
    }

    /** The version of the Kafka clients on the class path. */
    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }
}
