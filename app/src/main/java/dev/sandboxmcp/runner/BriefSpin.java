package dev.sandboxmcp.runner;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A call's thread spins for a short while before it parks to wait for the runner's answer. A
 * parked request thread is woken through its carrier thread, and on an idle machine (a virtual
 * CPU that halts when idle) each wake-up costs tens of microseconds; a file tool's whole exchange
 * takes about a hundred. Spinning through it roughly halves a lone {@code read_file}'s round trip
 * (BENCHMARKS.md, "waiting for the answer").
 *
 * <p>Only where it is free: one thread spins at a time, only for the one call in flight (under
 * load the processors are awake anyway, and spinners would take the carriers the answers need),
 * and only with more than one processor (with one, or a CPU quota of one in a container, the
 * spinner would take what the answer needs). A call that takes longer, a command, costs at most
 * {@code bound} of one processor's time.
 */
final class BriefSpin {

    /** Covers a file tool's exchange on an idle machine, with room (BENCHMARKS.md). */
    static final Duration BOUND = Duration.ofNanos(300_000);

    private final long boundNanos;
    private final boolean enabled;
    private final AtomicBoolean taken = new AtomicBoolean();

    /** {@code processors}: how many this process may run on at once. */
    BriefSpin(Duration bound, int processors) {
        this.boundNanos = bound.toNanos();
        this.enabled = processors > 1 && boundNanos > 0;
    }

    /** As the server runs it: {@link #BOUND}, on the processors the JVM reports. */
    static BriefSpin forThisMachine() {
        return new BriefSpin(BOUND, Runtime.getRuntime().availableProcessors());
    }

    /**
     * Spins until {@code answer} is done or the bound has passed, if {@code alone} (no other call
     * in flight) and no other thread spins. Whether it spun at all.
     */
    boolean await(Future<?> answer, boolean alone) {
        if (!enabled || !alone || answer.isDone() || !taken.compareAndSet(false, true)) {
            return false;
        }
        try {
            long until = System.nanoTime() + boundNanos;
            while (!answer.isDone() && System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
            return true;
        } finally {
            taken.set(false);
        }
    }

    /** Whether a thread spins now. */
    boolean spinning() {
        return taken.get();
    }
}
