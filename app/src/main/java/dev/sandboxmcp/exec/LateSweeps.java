package dev.sandboxmcp.exec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sweeps after a command's end, shared by all commands. A process caught between its
 * parent's fork and exit can slip past one scan of /proc, so an ended command's tree is looked
 * for again {@link #AFTER} its end without delaying its result. The sweeps due in the same
 * {@link #TICK} are one scan of /proc for all their trees: many short commands in a row do not
 * each read all of /proc again, twice.
 */
final class LateSweeps {

    /** When, after its end, a command's tree is looked for again. */
    static final List<Duration> AFTER = List.of(Duration.ofMillis(100), Duration.ofMillis(1000));
    /** Sweeps due within one tick share a scan; each is at most this much later than {@link #AFTER} says. */
    static final Duration TICK = Duration.ofMillis(50);

    private static final Logger LOG = LoggerFactory.getLogger(LateSweeps.class);
    /** The runner's, for every command. */
    static final LateSweeps SHARED = new LateSweeps(ProcessTree::withLiveMembers);

    private final DelayQueue<Due> queue = new DelayQueue<>();
    private final Function<Set<ProcessTree>, Set<ProcessTree>> scan;

    /** {@code scan}: those of the trees given that have a live member, in one look at /proc. */
    LateSweeps(Function<Set<ProcessTree>, Set<ProcessTree>> scan) {
        this.scan = scan;
        Thread.ofVirtual().name("late-sweeps").start(this::run);
    }

    /** Looks for {@code tree}'s live members {@link #AFTER} now, and ends them within {@code grace}. */
    void after(ProcessTree tree, Duration grace) {
        enqueue(System.nanoTime(), 0, tree, grace);
    }

    /** A tree's {@code sweep}-th look, due at {@code atNanos} (its moment rounded up to a tick). */
    private record Due(long atNanos, long endNanos, int sweep, ProcessTree tree, Duration grace) implements Delayed {

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(atNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }

    /** Queues the {@code sweep}-th look at {@code tree}, whose command ended at {@code endNanos}. */
    private void enqueue(long endNanos, int sweep, ProcessTree tree, Duration grace) {
        long tick = TICK.toNanos();
        long at = endNanos + AFTER.get(sweep).toNanos();
        queue.add(new Due(Math.floorDiv(at + tick - 1, tick) * tick, endNanos, sweep, tree, grace));
    }

    private void run() {
        while (true) {
            List<Due> due = new ArrayList<>();
            try {
                due.add(queue.take());
            } catch (InterruptedException e) {
                return;
            }
            queue.drainTo(due);
            try {
                sweep(due);
            } catch (RuntimeException | OutOfMemoryError e) { // the next sweeps go on whatever this one met
                LOG.warn("a late sweep failed: {}", e.toString());
            }
            for (Due done : due) {
                if (done.sweep() + 1 < AFTER.size()) {
                    enqueue(done.endNanos(), done.sweep() + 1, done.tree(), done.grace());
                }
            }
        }
    }

    /** One scan for every tree due; a tree found alive is ended on a thread of its own (its grace is waited there). */
    private void sweep(List<Due> due) {
        Map<ProcessTree, Duration> graces = new IdentityHashMap<>();
        due.forEach(d -> graces.merge(d.tree(), d.grace(), (a, b) -> a.compareTo(b) >= 0 ? a : b));
        for (ProcessTree alive : scan.apply(Collections.unmodifiableSet(graces.keySet()))) {
            Duration grace = graces.get(alive);
            try {
                Thread.ofVirtual().name("sweep").start(() -> alive.terminate(grace));
            } catch (OutOfMemoryError noThread) { // the pids limit full: ended here, the other sweeps wait for it
                alive.terminate(grace);
            }
        }
    }
}
