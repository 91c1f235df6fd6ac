package dev.sandboxmcp.http;

import dev.sandboxmcp.tools.HeapBudget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the heap that MCP messages in flight may cost at once: request bodies, and the runner's
 * answers ({@link HeapBudget}: an answer holds its cost before it is read, and its request keeps
 * the hold, {@link Charge#keep}, until answered). A body is charged for its
 * bytes as they arrive, and once scanned for what its parse will cost ({@link JsonBounds#worstCost}), so a client that declares a large body and sends it slowly holds only
 * what it has sent. Without a bound a burst of large messages exhausts the heap and takes every
 * running command down with the server.
 *
 * <p>A body that holds nothing yet may wait for room up to the budget's wait. A body that already
 * holds part of the budget waits at most {@link #HOLDING_WAIT} for more: bodies that each hold a
 * part and wait for the rest would otherwise wait for one another until every one timed out.
 */
public final class RequestBodyBudget implements HeapBudget {

    /** The request attribute under which a message POST's {@link Charge} is found while it is handled. */
    static final String CHARGE_ATTRIBUTE = "sandbox-mcp.body-charge";

    /** The longest a body already holding part of the budget waits for more before it is refused as busy. */
    static final Duration HOLDING_WAIT = Duration.ofSeconds(1);

    /** What asking for more of the budget came to. */
    enum Outcome { CHARGED, BUSY, PAST_THE_BUDGET }

    private final int capacity;
    private final Semaphore bytes;
    private final Duration wait;

    RequestBodyBudget(int capacityBytes, Duration wait) {
        this.capacity = capacityBytes;
        // Not fair: a small body finding room goes ahead of a large one waiting for much more.
        this.bytes = new Semaphore(capacityBytes, false);
        this.wait = wait;
    }

    /**
     * Half the heap: the charges are the heap a message really costs, the rest is the server's own
     * (and the channel reader's one line being read and parsed, uncharged).
     */
    public static RequestBodyBudget forHeap(Duration wait) {
        return new RequestBodyBudget((int) Math.min(Integer.MAX_VALUE, Runtime.getRuntime().maxMemory() / 2), wait);
    }

    @Override
    public long capacity() {
        return capacity;
    }

    @Override
    public Hold tryHold(long cost) {
        if (cost > capacity || !bytes.tryAcquire((int) Math.max(0, cost))) {
            return null;
        }
        return new Hold() {
            private boolean given;

            @Override
            public synchronized void close() {
                if (!given) {
                    given = true;
                    bytes.release((int) Math.max(0, cost));
                }
            }
        };
    }

    /** A charge for one body, empty until {@link Charge#add} and given back whole by {@link Charge#close}. */
    Charge open() {
        return new Charge(System.nanoTime() + wait.toNanos());
    }

    /** What one body holds of the budget; all its waits together end at the budget's wait. */
    final class Charge implements AutoCloseable {
        private final long deadline;
        private long held;
        private final List<Hold> kept = new ArrayList<>(); // guarded by this

        /** Keeps {@code hold} (an answer's, for this request's call) until this charge is given back. */
        synchronized void keep(Hold hold) {
            kept.add(hold);
        }

        private Charge(long deadline) {
            this.deadline = deadline;
        }

        long capacity() {
            return capacity;
        }

        /** Adds {@code cost} bytes to the charge, waiting for room as the class comment says. */
        Outcome add(long cost) throws InterruptedException {
            if (cost <= 0) {
                return Outcome.CHARGED;
            }
            if (held + cost > capacity) {
                return Outcome.PAST_THE_BUDGET;
            }
            long left = Math.max(0, deadline - System.nanoTime());
            long waitNanos = held == 0 ? left : Math.min(left, HOLDING_WAIT.toNanos());
            if (!bytes.tryAcquire((int) cost, waitNanos, TimeUnit.NANOSECONDS)) {
                return Outcome.BUSY;
            }
            held += cost;
            return Outcome.CHARGED;
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
            synchronized (this) {
                kept.forEach(Hold::close);
                kept.clear();
            }
        }
    }
}
