package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A start that fails half-way, as one does when a command has taken the pids limit and the JVM
 * cannot make a pipe's thread: the slot and the sweep's count are given back, and the shell
 * already spawned is killed, so a command can neither leak them nor leave a process untracked.
 */
class StartFailureTest {

    private static final Map<String, String> ENVIRONMENT = Map.of("PATH", "/usr/local/bin:/usr/bin:/bin");
    private static final Pipes.Threads REAL = Pipes.threads;

    @TempDir
    Path dir;
    private final IdleSweep sweep = new IdleSweep(false);
    private final AtomicLong refusedShell = new AtomicLong(-1);

    @AfterEach
    void restoreThreads() {
        Pipes.threads = REAL;
    }

    /** Refuses the thread that would read the shell's stdout, as the JVM does at the pids limit. */
    private void refuseOutputThreads() {
        Pipes.threads = (name, body) -> {
            if (name.startsWith("stdout-")) {
                refusedShell.set(Long.parseLong(name.substring("stdout-".length())));
                throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource limits reached");
            }
            return REAL.start(name, body);
        };
    }

    @Test
    void aCommandWhoseThreadIsRefusedGivesBackItsSlotAndSweepAndLeavesNothingRunning() throws Exception {
        try (CommandRunner runner = new CommandRunner(ENVIRONMENT, 4096, 0, Duration.ofSeconds(1), 1, sweep)) {
            refuseOutputThreads();
            for (int attempt = 0; attempt < 3; attempt++) {
                assertThatThrownBy(() -> runner.run("sleep 300", dir, Duration.ofSeconds(600)))
                        .isInstanceOf(OutOfMemoryError.class);
                assertThat(sweep.active()).isZero();
                assertGone(refusedShell.get());
            }
            Pipes.threads = REAL;
            CommandResult result = runner.run("echo still-runs", dir, Duration.ofSeconds(30));
            assertThat(result.stdout().text()).isEqualTo("still-runs\n");
            assertThat(sweep.active()).isZero();
        }
    }

    @Test
    void aJobWhoseThreadIsRefusedGivesBackItsSweepAndLeavesNothingRunning() throws Exception {
        try (JobManager jobs = new JobManager(ENVIRONMENT, 4096, Duration.ofSeconds(1), 1, 4, 4, sweep)) {
            refuseOutputThreads();
            assertThatThrownBy(() -> jobs.start("sleep 300", dir, ".", true)).isInstanceOf(OutOfMemoryError.class);
            assertThat(sweep.active()).isZero();
            assertGone(refusedShell.get());
            assertThat(jobs.list()).isEmpty();
            Pipes.threads = REAL;
            Job job = jobs.start("sleep 300", dir, ".", false);
            assertThat(sweep.active()).isEqualTo(1);
            jobs.stop(job.id());
        }
    }

    @Test
    void aProbeWhoseStartThrowsGivesBackItsSweep() {
        CommandRunner runner = new CommandRunner(ENVIRONMENT, 4096, 0, Duration.ofSeconds(1), 1, sweep);
        assertThatThrownBy(() -> runner.probe(null, Duration.ofSeconds(5))).isInstanceOf(RuntimeException.class);
        assertThat(sweep.active()).isZero();
    }

    private static void assertGone(long pid) throws InterruptedException {
        assertThat(pid).as("the shell's pid, seen by the refused thread").isPositive();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).as("shell %d", pid).isNotEqualTo(java.util.Optional.of(true));
    }
}
