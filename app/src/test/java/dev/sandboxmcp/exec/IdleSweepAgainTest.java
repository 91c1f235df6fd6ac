package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.exec.IdleSweep.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** When the idle sweep sweeps again: after a sweep cut short by its budget, while nothing runs. */
class IdleSweepAgainTest {

    private final AtomicInteger sweeps = new AtomicInteger();

    /** A sweep that ends as {@code outcomes} say, in turn, and cut short once they run out. */
    private IdleSweep sweepEnding(Duration retry, Outcome... outcomes) {
        Queue<Outcome> left = new ConcurrentLinkedQueue<>(List.of(outcomes));
        return new IdleSweep(() -> {
            sweeps.incrementAndGet();
            Outcome outcome = left.poll();
            return outcome == null ? Outcome.CUT_SHORT : outcome;
        }, retry);
    }

    /** Waits until {@code count} sweeps have run, then as long again as they took, for any more. */
    private void awaitSweeps(int count) throws InterruptedException {
        long start = System.nanoTime();
        while (sweeps.get() < count && System.nanoTime() - start < Duration.ofSeconds(20).toNanos()) {
            Thread.sleep(5);
        }
        Thread.sleep(Duration.ofNanos(System.nanoTime() - start));
        assertThat(sweeps.get()).isEqualTo(count);
    }

    @Test
    void sweepsAgainUntilASweepEndsClean() throws Exception {
        IdleSweep idle = sweepEnding(Duration.ofMillis(20), Outcome.CUT_SHORT, Outcome.CUT_SHORT, Outcome.CLEAN);
        idle.begin();
        idle.end();
        awaitSweeps(3);
    }

    @Test
    void aQuietEndIsNoReasonToSweepAgain() throws Exception {
        IdleSweep idle = sweepEnding(Duration.ofMillis(20), Outcome.QUIET);
        idle.begin();
        idle.end();
        awaitSweeps(1);
    }

    @Test
    void aLeftoverThatNeverDiesBringsOnlySoManySweeps() throws Exception {
        IdleSweep idle = sweepEnding(Duration.ofMillis(10));
        idle.begin();
        idle.end();
        awaitSweeps(1 + IdleSweep.RETRIES);
    }

    /** The next command begins well within the retry's second, however loaded the machine. */
    @Test
    void noSweepComesWhileACommandRunsAndItsEndSweepsAfresh() throws Exception {
        IdleSweep idle = sweepEnding(Duration.ofSeconds(1), Outcome.CUT_SHORT, Outcome.CLEAN);
        idle.begin();
        idle.end();
        idle.begin();
        Thread.sleep(1500);
        assertThat(sweeps.get()).as("sweeps while a command runs").isEqualTo(1);
        idle.end();
        awaitSweeps(2);
    }
}
