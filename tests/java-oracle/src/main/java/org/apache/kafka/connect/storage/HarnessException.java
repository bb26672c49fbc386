package org.apache.kafka.connect.storage;

import java.util.concurrent.Callable;

/**
 * An exception the oracle's own code raised while preparing a call (reading the call's
 * arguments, building a {@code TargetState} or a {@code SecretKeySpec}), not Kafka Connect's:
 * the judge treats it as a harness error, never as a verdict on the core.
 */
final class HarnessException extends RuntimeException {
    HarnessException(String message) {
        super(message);
    }

    HarnessException(Throwable cause) {
        super(cause.toString(), cause);
    }

    /** Runs the harness's own preparation, turning what it throws into a harness exception. */
    static <T> T prepare(Callable<T> step) {
        try {
            return step.call();
        } catch (HarnessException e) {
            throw e;
        } catch (Exception e) {
            throw new HarnessException(e);
        }
    }
}
