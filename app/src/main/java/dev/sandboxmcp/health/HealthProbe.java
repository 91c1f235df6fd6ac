package dev.sandboxmcp.health;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@code /healthz} answers: whether the parts a tool call needs still work, not only that
 * a thread is left to answer. Each {@link Check} runs the way a call would (a file system
 * lookup, a process start) on a thread of its own, and the probe waits at most
 * {@code deadline} for all of them: a check that hangs (a hung mount, a pinned scheduler) is a
 * failure, not a hung probe.
 *
 * <p>The endpoint needs no token, so the checks are shared: at most one round runs at a time,
 * and its report is reused for {@code reuse}; a flood of probes costs one process start per
 * {@code reuse}, not one per request. A failed report is reused for at most {@link #FAILED_REUSE},
 * so that a part coming back (a runner starting or restarting) is seen within a second, not
 * after a whole {@code reuse}. A round still running past its deadline is not started
 * again until it returns; every probe meanwhile reports it as failing. A failure is logged as a
 * warning once its check has passed, or after {@link #STARTING}; before that it is what a part
 * coming up looks like (the runner connects after the server starts), logged at INFO.
 * {@link #forget} drops the report at once when what it describes is known to have changed (the
 * runner's connection began or ended): the next probe runs a new round.
 */
public final class HealthProbe {

    private static final Logger LOG = LoggerFactory.getLogger(HealthProbe.class);
    static final Duration FAILED_REUSE = Duration.ofSeconds(1);
    /** How long a check that never passed may fail quietly (INFO): the part it checks is still starting. */
    static final Duration STARTING = Duration.ofSeconds(60);

    /** One thing a tool call depends on; {@code run} throws when it does not work. */
    public record Check(String name, Step run) {
    }

    /** The work of a check. */
    @FunctionalInterface
    public interface Step {
        void run() throws Exception;
    }

    /** The outcome of a round: the names of the checks that failed (none when healthy). */
    public record Report(List<String> failed) {
        public boolean healthy() {
            return failed.isEmpty();
        }
    }

    private final List<Check> checks;
    private final Map<String, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();
    private final Duration deadline;
    private final Duration reuse;
    private final long createdNanos = System.nanoTime();
    private final Set<String> passedOnce = ConcurrentHashMap.newKeySet();
    private CompletableFuture<Report> round;
    private Report last;
    private long lastNanos;
    /** Counts {@link #forget} calls: a round begun before one is not kept as the last report. */
    private long generation;

    public HealthProbe(List<Check> checks, Duration deadline, Duration reuse) {
        this.checks = List.copyOf(checks);
        this.deadline = deadline;
        this.reuse = reuse;
    }

    /** The latest report, running a new round when the last one is older than {@code reuse}. */
    public Report report() {
        CompletableFuture<Report> current;
        synchronized (this) {
            Duration kept = last != null && !last.healthy() && FAILED_REUSE.compareTo(reuse) < 0 ? FAILED_REUSE : reuse;
            if (last != null && System.nanoTime() - lastNanos < kept.toNanos()) {
                return last;
            }
            current = round;
            if (current == null) {
                CompletableFuture<Report> started = CompletableFuture.supplyAsync(this::runChecks,
                        task -> Thread.ofPlatform().name("health-round").daemon().start(task));
                long of = generation;
                round = started;
                started.whenComplete((report, error) -> finished(started, of,
                        report != null ? report : new Report(List.of("probe"))));
                current = started;
            }
        }
        try {
            // The round itself gives up on its checks at the deadline; the margin lets it say which.
            return current.get(deadline.plusSeconds(1).toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return new Report(List.of("deadline"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Report(List.of("interrupted"));
        } catch (ExecutionException e) {
            return new Report(List.of("probe"));
        }
    }

    private synchronized void finished(CompletableFuture<Report> done, long of, Report report) {
        if (round == done) {
            round = null;
        }
        if (of == generation) {
            last = report;
            lastNanos = System.nanoTime();
        }
    }

    /**
     * Forgets the last report and any round in progress: what they describe has changed (the
     * runner's connection began or ended), so the next probe runs a new round instead of reusing
     * one for up to {@code reuse}. Probes already waiting for a round still get its answer.
     */
    public synchronized void forget() {
        generation++;
        last = null;
        round = null;
    }

    private Report runChecks() {
        Map<String, CompletableFuture<Void>> running = new LinkedHashMap<>();
        for (Check check : checks) {
            // A check still running from an earlier round is not started again: it stays failing.
            running.put(check.name(), inFlight.compute(check.name(),
                    (name, earlier) -> earlier == null || earlier.isDone() ? start(check) : earlier));
        }
        running.forEach((name, future) -> future.whenComplete((ok, error) -> inFlight.remove(name, future)));
        long end = System.nanoTime() + deadline.toNanos();
        List<String> failed = new ArrayList<>();
        running.forEach((name, future) -> {
            try {
                future.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                passedOnce.add(name);
            } catch (TimeoutException e) {
                logFailure(name, "did not finish within " + deadline.toMillis() + " ms");
                failed.add(name);
            } catch (ExecutionException e) {
                logFailure(name, "failed: " + e.getCause());
                failed.add(name);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failed.add(name);
            }
        });
        return new Report(List.copyOf(failed));
    }

    /** A warning, but for a check that has not passed yet while what it checks may still be starting. */
    private void logFailure(String name, String what) {
        if (passedOnce.contains(name) || System.nanoTime() - createdNanos > STARTING.toNanos()) {
            LOG.warn("health check '{}' {}", name, what);
        } else {
            LOG.info("health check '{}' {} (not passed yet: starting)", name, what);
        }
    }

    private static CompletableFuture<Void> start(Check check) {
        CompletableFuture<Void> future = new CompletableFuture<>();
        Thread.ofPlatform().name("health-" + check.name()).daemon().start(() -> {
            try {
                check.run().run();
                future.complete(null);
            } catch (Throwable e) {
                future.completeExceptionally(e);
            }
        });
        return future;
    }
}
