package dev.sandboxmcp.http;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the heap that MCP message bodies in flight may cost at once. A body is charged as its
 * bytes arrive, and once parsed for what its shape costs ({@link JsonBounds#worstCost}), so a
 * client that declares a large body and sends it slowly holds only what it has sent. Without a
 * bound a burst of large messages exhausts the heap and takes every running command down with the
 * server. Past the budget a body waits a little, then is refused as busy.
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

    /** Half the heap: the charges are the heap a body really costs, the rest is the server's own. */
    static RequestBodyBudget forHeap(Duration wait) {
        return new RequestBodyBudget((int) Math.min(Integer.MAX_VALUE, Runtime.getRuntime().maxMemory() / 2), wait);
    }

    int capacity() {
        return capacity;
    }

    /** A charge for one body, empty until {@link Charge#add} and given back whole by {@link Charge#close}. */
    Charge open() {
        return new Charge(System.nanoTime() + wait.toNanos());
    }

    /** What one body holds of the budget; every wait it makes together is bounded by the budget's wait. */
    final class Charge implements AutoCloseable {
        private final long deadline;
        private long held;

        private Charge(long deadline) {
            this.deadline = deadline;
        }

        /**
         * Adds {@code cost} bytes to the charge, waiting for room until the body's deadline; false
         * when no room came free in time, or when the charge would pass the whole budget.
         */
        boolean add(long cost) throws InterruptedException {
            if (cost <= 0) {
                return true;
            }
            if (exceedsBudget(cost)) {
                return false;
            }
            long left = deadline - System.nanoTime();
            if (!bytes.tryAcquire((int) cost, Math.max(0, left), TimeUnit.NANOSECONDS)) {
                return false;
            }
            held += cost;
            return true;
        }

        /** The whole budget's size. */
        int capacity() {
            return capacity;
        }

        /** Whether adding {@code cost} would pass the whole budget, so that no wait can make room for it. */
        boolean exceedsBudget(long cost) {
            return held + cost > capacity;
        }

        /** Gives back {@code cost} bytes of the charge (a chunk that was not filled). */
        void refund(long cost) {
            long given = Math.min(cost, held);
            held -= given;
            bytes.release((int) given);
        }

        @Override
        public void close() {
            refund(held);
        }
    }
}
