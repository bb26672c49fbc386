package org.apache.kafka.connect.storage;

/** Placeholder replaced below. */
final class OracleBench {
    private OracleBench() {
    }

    static int main(String[] args) {
        System.err.println("bench: not built yet");
        return 2;
    }
}
