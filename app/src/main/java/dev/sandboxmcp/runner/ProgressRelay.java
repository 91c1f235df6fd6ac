package dev.sandboxmcp.runner;

import dev.sandboxmcp.tools.Progress;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One call's progress, passed on to its client by a thread of its own, never by the thread that
 * reads the runner's connection: a client that stops reading its stream blocks the notification
 * being written to it, and on the reading thread that would stall every other call's answer (and
 * the health ping). Updates go out in order; while a report is held up, the latest {@link #KEPT}
 * wait behind it and older ones are dropped.
 */
final class ProgressRelay {

    static final int KEPT = 16;
    private static final Logger LOG = LoggerFactory.getLogger(ProgressRelay.class);
    /**
     * Shared by every call whose client listens to no progress (most calls): what a runner sends
     * for it goes nowhere, and neither {@link #offer} nor {@link #close} takes a lock on it, so
     * those calls never queue behind each other here.
     */
    private static final ProgressRelay DISCARD = new ProgressRelay(Progress.NONE);

    private final Progress client;
    /** Held while reports are made, so that {@link #close} comes after one under way. */
    private final ReentrantLock reporting = new ReentrantLock();
    private final ArrayDeque<Protocol.Progress> waiting = new ArrayDeque<>(); // guarded by this
    private boolean scheduled; // guarded by this
    private boolean closed; // guarded by this

    private ProgressRelay(Progress client) {
        this.client = client;
    }

    /** The relay of one call to {@code client}. */
    static ProgressRelay to(Progress client) {
        return client == Progress.NONE ? DISCARD : new ProgressRelay(client);
    }

    /** Queues {@code update} for the client (called by the channel's reading thread: never waits on the client). */
    void offer(Protocol.Progress update) {
        if (this == DISCARD) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            if (waiting.size() == KEPT) {
                waiting.removeFirst();
            }
            waiting.addLast(update);
            if (scheduled) {
                return;
            }
            scheduled = true;
        }
        Thread.ofVirtual().name("channel-progress").start(this::deliver);
    }

    private void deliver() {
        reporting.lock();
        try {
            while (true) {
                Protocol.Progress next;
                synchronized (this) {
                    next = waiting.pollFirst();
                    if (next == null) {
                        scheduled = false;
                        return;
                    }
                }
                report(next);
            }
        } finally {
            reporting.unlock();
        }
    }

    /**
     * Reports what still waits, then nothing more: called as the call's result is about to go out
     * (a progress after it would break the protocol). Waits for a report under way, which only the
     * call's own client can hold up.
     */
    void close() {
        if (this == DISCARD) {
            return;
        }
        reporting.lock();
        try {
            List<Protocol.Progress> rest;
            synchronized (this) {
                closed = true;
                rest = List.copyOf(waiting);
                waiting.clear();
            }
            rest.forEach(this::report);
        } finally {
            reporting.unlock();
        }
    }

    private void report(Protocol.Progress update) {
        try {
            client.report(update.done(), update.total(), update.message());
        } catch (RuntimeException e) { // a lost progress report must not cost the call its result
            LOG.debug("progress not delivered: {}", e.toString());
        }
    }
}
