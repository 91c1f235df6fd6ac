package dev.sandboxmcp.exec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The sweeps of a command's tree after its call returned: a process caught between its parent's
 * fork and exit can slip past one scan of {@code /proc}, so each tree is swept twice more, about
 * 0.1 s and 1 s later, without delaying the result. A scan reads every process on the machine,
 * so the trees due within {@link #SHARED} of each other share one: commands in quick succession
 * cost one late scan per {@code SHARED}, not two each. A tree with members left gets its own
 * {@link ProcessTree#terminate} (SIGTERM, the grace, SIGKILL) on a thread of its own.
 */
final class LateSweeps {

    /** When a tree is swept, after its call returned. */
    static final List<Duration> AFTER = List.of(Duration.ofMillis(100), Duration.ofMillis(1000));
    /** A scan takes along the trees due within this much after it, sweeping them that much early. */
    static final Duration SHARED = Duration.ofMillis(50);

    /** {@code tree}'s sweep number {@code round}, due at {@code atNanos}; its call returned at {@code returnedNanos}. */
    private record Due(ProcessTree tree, Duration killGrace, long returnedNanos, int round, long atNanos) {
        Due next() {
            return round + 1 < AFTER.size() ? new Due(tree, killGrace, returnedNanos, round + 1,
                    returnedNanos + AFTER.get(round + 1).toNanos()) : null;
        }
    }

    private final PriorityQueue<Due> queue = new PriorityQueue<>(Comparator.comparingLong(Due::atNanos));
    /** Runs while anything is due; it ends when nothing is. */
    private Thread sweeper;

    /** Sweeps {@code tree} at each of {@link #AFTER} from now. */
    synchronized void add(ProcessTree tree, Duration killGrace) {
        long now = System.nanoTime();
        queue.add(new Due(tree, killGrace, now, 0, now + AFTER.getFirst().toNanos()));
        if (sweeper == null) {
            sweeper = Thread.ofPlatform().name("late-sweeps").daemon().start(this::run);
        } else {
            notifyAll(); // it may be waiting for a later round of another tree
        }
    }

    private void run() {
        while (true) {
            List<Due> batch = takeDue();
            if (batch == null) {
                return;
            }
            Map<ProcessTree, Set<Long>> members = ProcessTree.liveMembers(batch.stream().map(Due::tree).toList());
            for (Due due : batch) {
                if (!members.get(due.tree()).isEmpty()) {
                    Thread.ofVirtual().name("sweep").start(() -> due.tree().terminate(due.killGrace()));
                }
                Due next = due.next();
                if (next != null) {
                    synchronized (this) {
                        queue.add(next);
                    }
                }
            }
        }
    }

    /** Waits for the next due sweep; returns it with those due within {@link #SHARED} after it, or null when none is left. */
    private synchronized List<Due> takeDue() {
        while (true) {
            Due first = queue.peek();
            if (first == null) {
                sweeper = null;
                return null;
            }
            long wait = first.atNanos() - System.nanoTime();
            if (wait <= 0) {
                break;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, wait);
            } catch (InterruptedException e) {
                // only a shutdown interrupts a daemon thread; sweep what is due now
                break;
            }
        }
        long until = System.nanoTime() + SHARED.toNanos();
        List<Due> batch = new ArrayList<>();
        while (!queue.isEmpty() && queue.peek().atNanos() <= until) {
            batch.add(queue.poll());
        }
        return batch;
    }
}
