package dev.sandboxmcp.bench;

import java.time.Duration;

/**
 * Resident memory of a server (one process, or the sum of a pair) shortly after it first
 * answered, and again once it has sat idle, with no calls in between. Two seconds in, a JVM is
 * still compiling what its start ran and holds the compilers' scratch memory; idle is after that
 * is done and the JVM's periodic native-heap trim has run.
 */
record Resident(double startedMib, double idleMib) {

    static final Duration STARTED = Duration.ofSeconds(2);
    static final Duration IDLE = Duration.ofSeconds(30);

    interface Sample {
        double mib() throws Exception;
    }

    /** {@code readyNanos}: the {@link System#nanoTime()} at which the server first answered. */
    static Resident measure(long readyNanos, Sample sample) throws Exception {
        sleepUntil(readyNanos + STARTED.toNanos());
        double started = sample.mib();
        sleepUntil(readyNanos + IDLE.toNanos());
        return new Resident(started, sample.mib());
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            Thread.sleep(Duration.ofNanos(left));
        }
    }
}
