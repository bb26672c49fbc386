package org.apache.kafka.connect.storage;

/**
 * One record of a topic as the oracle receives it: exact key and value bytes ({@code null} value:
 * a tombstone), offset and partition.
 */
record OracleRecord(int partition, long offset, byte[] key, byte[] value) {
}
