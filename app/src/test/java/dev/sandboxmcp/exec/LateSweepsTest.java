package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The sweeps after commands' ends: what escaped is found and killed, and trees due together cost one scan. */
class LateSweepsTest {

    private static final String MARKER = "SANDBOX_MCP_RUN=late-sweeps-test";

    /** A scan of /proc as the runner makes it, with what it was asked and when. */
    private static final class CountedScans {
        final long startedNanos = System.nanoTime();
        final List<Integer> treesPerScan = Collections.synchronizedList(new ArrayList<>());
        final List<Long> millisAfterStart = Collections.synchronizedList(new ArrayList<>());

        Set<ProcessTree> scan(Set<ProcessTree> trees) {
            treesPerScan.add(trees.size());
            millisAfterStart.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos));
            return ProcessTree.withLiveMembers(trees);
        }
    }

    @Test
    void whatStillRunsAfterItsCommandEndedIsKilledByALateSweep() throws Exception {
        // setsid makes the sleep the leader of a session of its own, as a command's shell is.
        Process escaped = new ProcessBuilder("setsid", "sleep", "60").start();
        try {
            ProcessTree tree = new ProcessTree(escaped.pid(), MARKER);
            CountedScans scans = new CountedScans();
            new LateSweeps(scans::scan).after(tree, Duration.ofMillis(200));
            assertThat(escaped.isAlive()).as("not killed before the first late sweep").isTrue();
            assertThat(escaped.waitFor(3, TimeUnit.SECONDS)).as("killed by a late sweep").isTrue();
            assertThat(scans.millisAfterStart.getFirst()).isGreaterThanOrEqualTo(LateSweeps.AFTER.getFirst().toMillis());
        } finally {
            escaped.destroyForcibly();
        }
    }

    @Test
    void aSweepThatFailsLeavesTheNextOnesToRun() throws Exception {
        Process escaped = new ProcessBuilder("setsid", "sleep", "60").start();
        try {
            CountedScans scans = new CountedScans();
            LateSweeps sweeps = new LateSweeps(trees -> {
                if (scans.treesPerScan.isEmpty()) {
                    scans.scan(Set.of());
                    throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource limits reached");
                }
                return scans.scan(trees);
            });
            sweeps.after(new ProcessTree(escaped.pid(), MARKER), Duration.ofMillis(200));
            assertThat(escaped.waitFor(3, TimeUnit.SECONDS)).as("killed by the sweep after the one that failed").isTrue();
            assertThat(scans.millisAfterStart.getLast()).isGreaterThanOrEqualTo(LateSweeps.AFTER.getLast().toMillis());
        } finally {
            escaped.destroyForcibly();
        }
    }

    @Test
    void treesDueTogetherAreLookedForInOneScanPerSweep() throws Exception {
        List<ProcessTree> ended = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            Process done = new ProcessBuilder("true").start();
            done.waitFor();
            ended.add(new ProcessTree(done.pid(), MARKER));
        }
        CountedScans scans = new CountedScans();
        LateSweeps sweeps = new LateSweeps(scans::scan);
        ended.forEach(tree -> sweeps.after(tree, Duration.ofMillis(200)));
        long last = LateSweeps.AFTER.getLast().plus(LateSweeps.TICK).toMillis();
        Thread.sleep(last + 500);

        System.out.printf("30 trees ended together: %d scans of /proc (trees in each: %s, at ms %s)%n",
                scans.treesPerScan.size(), scans.treesPerScan, scans.millisAfterStart);
        assertThat(scans.treesPerScan.stream().mapToInt(Integer::intValue).sum())
                .as("each tree looked for once per sweep").isEqualTo(30 * LateSweeps.AFTER.size());
        // 30 trees handed over within a few milliseconds: one scan per sweep, two if a tick's edge fell among them.
        assertThat(scans.treesPerScan.size()).isBetween(LateSweeps.AFTER.size(), 2 * LateSweeps.AFTER.size());
        assertThat(scans.millisAfterStart.getFirst()).isGreaterThanOrEqualTo(LateSweeps.AFTER.getFirst().toMillis());
        assertThat(scans.millisAfterStart.getLast()).isGreaterThanOrEqualTo(LateSweeps.AFTER.getLast().toMillis())
                .isLessThanOrEqualTo(last + 300);
    }
}
