package dev.sandboxmcp.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class HealthProbeTest {

    static final Duration DEADLINE = Duration.ofMillis(300);

    @Test
    void healthyWhenEveryCheckPasses() {
        HealthProbe probe = new HealthProbe(List.of(new HealthProbe.Check("a", () -> { }),
                new HealthProbe.Check("b", () -> { })), DEADLINE, Duration.ZERO);
        assertThat(probe.report().healthy()).isTrue();
    }

    @Test
    void namesTheChecksThatFail() {
        HealthProbe probe = new HealthProbe(List.of(new HealthProbe.Check("workspace", () -> { }),
                new HealthProbe.Check("commands", () -> {
                    throw new IOException("error=11, Resource temporarily unavailable");
                })), DEADLINE, Duration.ZERO);
        assertThat(probe.report().failed()).containsExactly("commands");
    }

    @Test
    void aHangingCheckFailsAtTheDeadlineAndIsNotStartedAgainWhileItHangs() throws Exception {
        AtomicInteger started = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        HealthProbe probe = new HealthProbe(List.of(new HealthProbe.Check("stuck", () -> {
            started.incrementAndGet();
            release.await();
        })), DEADLINE, Duration.ZERO);
        for (int i = 0; i < 5; i++) {
            long begun = System.nanoTime();
            assertThat(probe.report().failed()).containsExactly("stuck");
            assertThat(Duration.ofNanos(System.nanoTime() - begun)).isLessThan(DEADLINE.plusSeconds(2));
        }
        assertThat(started).hasValue(1);
        release.countDown();
        Thread.sleep(100);
        assertThat(probe.report().healthy()).isTrue();
        assertThat(started).hasValue(2);
    }

    @Test
    void aFloodOfProbesSharesOneRound() throws Exception {
        AtomicInteger rounds = new AtomicInteger();
        HealthProbe probe = new HealthProbe(List.of(new HealthProbe.Check("counted", () -> {
            rounds.incrementAndGet();
            Thread.sleep(50);
        })), DEADLINE, Duration.ofMinutes(1));
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<HealthProbe.Report>> reports = new java.util.ArrayList<>();
            for (int i = 0; i < 200; i++) {
                reports.add(pool.submit(probe::report));
            }
            for (Future<HealthProbe.Report> report : reports) {
                assertThat(report.get().healthy()).isTrue();
            }
        }
        assertThat(rounds).hasValue(1);
    }

    @Test
    void aFailureIsReusedForASecondAtMostSoThatARecoveryShowsQuickly() throws Exception {
        AtomicInteger rounds = new AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean up = new java.util.concurrent.atomic.AtomicBoolean(false);
        HealthProbe probe = new HealthProbe(List.of(new HealthProbe.Check("runner", () -> {
            rounds.incrementAndGet();
            if (!up.get()) {
                throw new java.io.IOException("not listening yet");
            }
        })), DEADLINE, Duration.ofMinutes(1));
        assertThat(probe.report().failed()).containsExactly("runner");
        assertThat(probe.report().healthy()).as("reused within the second").isFalse();
        up.set(true);
        Thread.sleep(HealthProbe.FAILED_REUSE.toMillis() + 100);
        assertThat(probe.report().healthy()).isTrue();
        assertThat(probe.report().healthy()).isTrue();
        assertThat(rounds).as("the healthy report is kept for the whole reuse").hasValue(2);
    }

    @Test
    void aForgottenReportIsNotReusedNorIsTheRoundInProgressKept() throws Exception {
        AtomicInteger rounds = new AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean up = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        HealthProbe probe = new HealthProbe(List.of(new HealthProbe.Check("runner", () -> {
            rounds.incrementAndGet();
            if (hold.getAndSet(false)) {
                entered.countDown();
                release.await();
            }
            if (!up.get()) {
                throw new IOException("not connected");
            }
        })), DEADLINE.multipliedBy(10), Duration.ofMinutes(1));
        assertThat(probe.report().healthy()).isTrue();
        up.set(false);
        assertThat(probe.report().healthy()).as("reused for the minute").isTrue();
        probe.forget();
        assertThat(probe.report().failed()).as("after forget, a new round").containsExactly("runner");
        assertThat(rounds).hasValue(2);

        // A round that began before a forget answers its own probes but is not kept.
        up.set(true);
        Thread.sleep(HealthProbe.FAILED_REUSE.toMillis() + 100);
        hold.set(true);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<HealthProbe.Report> before = pool.submit(probe::report);
            assertThat(entered.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            probe.forget();
            release.countDown();
            assertThat(before.get().healthy()).isTrue();
        }
        assertThat(rounds).hasValue(3);
        up.set(false);
        assertThat(probe.report().failed()).containsExactly("runner");
        assertThat(rounds).hasValue(4);
    }
}
