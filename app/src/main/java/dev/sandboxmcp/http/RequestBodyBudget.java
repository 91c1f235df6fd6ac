package dev.sandboxmcp.http;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the bytes of MCP message bodies being processed at once. Each body is held several
 * times over while it is parsed, validated and handled (raw bytes, the envelope check, the SDK's
 * parse, the schema check), so without a bound a burst of large messages exhausts the heap and
 * takes every running command down with the server. Past the budget a message waits a little,
 * then is refused as busy; small messages are never held up by each other.
 */
final class RequestBodyBudget {

    private final int capacity;
    private final Semaphore bytes;
    private final Duration wait;

    RequestBodyBudget(int capacityBytes, Duration wait) {
        this.capacity = capacityBytes;
        this.bytes = new Semaphore(capacityBytes, true);
        this.wait = wait;
    }

    /** A budget of an eighth of the heap: a body costs about five times its size while handled. */
    static RequestBodyBudget forHeap(Duration wait) {
        return new RequestBodyBudget((int) Math.min(Integer.MAX_VALUE, Runtime.getRuntime().maxMemory() / 8), wait);
    }

    /**
     * Reserves room for a body of {@code size} bytes (a body larger than the whole budget
     * reserves all of it); returns what was reserved, to be given back with {@link #release},
     * or -1 when no room came free in time.
     */
    int reserve(long size) throws InterruptedException {
        int wanted = (int) Math.max(1, Math.min(size, capacity));
        return bytes.tryAcquire(wanted, wait.toNanos(), TimeUnit.NANOSECONDS) ? wanted : -1;
    }

    void release(int reserved) {
        bytes.release(reserved);
    }
}
