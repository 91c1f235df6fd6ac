package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A command still running at its call's budget goes on as a job; a cancelled call takes its tree down. */
class CallBudgetTest {

    private static final Duration GRACE = Duration.ofSeconds(1);

    @TempDir
    Path dir;
    CommandRunner runner;
    JobManager jobs;

    @BeforeEach
    void setUp() {
        Map<String, String> env = Map.of("PATH", "/usr/bin:/bin");
        runner = new CommandRunner(env, 64 * 1024, 4096, GRACE, 2, IdleSweep.NONE);
        jobs = new JobManager(env, 64 * 1024, GRACE, 2, 8, 4, IdleSweep.NONE);
    }

    @AfterEach
    void tearDown() {
        runner.close();
        jobs.close();
    }

    private static Duration budget(long millis) {
        return Duration.ofMillis(millis);
    }

    /** As run_command does: a command given back still running is handed over to the jobs. */
    private Job handOver(CommandOutcome outcome) {
        assertThat(outcome).isInstanceOf(RunningCommand.class);
        return jobs.adopt((RunningCommand) outcome, "the command", "sub");
    }

    @Test
    void commandStillRunningAtTheBudgetGoesOnAsAJobWithAllItsOutput() throws Exception {
        long started = System.nanoTime();
        CommandOutcome outcome = runner.run("echo before; echo oops >&2; sleep 2; echo after", dir, Duration.ofSeconds(20),
                null, budget(700));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        assertThat(millis).as("returns at the budget").isBetween(650L, 1_500L);
        assertThat(((RunningCommand) outcome).streams().get("stdout").text()).isEqualTo("before\n");
        Job job = handOver(outcome);
        assertThat(job.exitCode()).isNull();
        assertThat(runner.runningCount()).as("the command keeps its slot").isEqualTo(1);
        String id = job.id();
        assertThat(jobs.list()).extracting(Job::id).contains(id);
        assertThat(jobs.get(id).orElseThrow().running()).isTrue();
        assertThat(jobs.get(id).orElseThrow().cwd()).isEqualTo("sub");

        Job done = awaitEnd(id, Duration.ofSeconds(10));
        assertThat(done.exitCode()).isZero();
        assertThat(done.timedOut()).isFalse();
        assertThat(done.streams()).containsExactly("stdout", "stderr");
        assertThat(jobs.output(id, "stdout", 0, 1024).orElseThrow().text()).isEqualTo("before\nafter\n");
        assertThat(jobs.output(id, "stderr", 0, 1024).orElseThrow().text()).isEqualTo("oops\n");
        assertThat(runner.runningCount()).as("the slot is released when it ends").isZero();
    }

    @Test
    void handedOverCommandIsKilledAtItsOwnDeadlineWithItsWholeTree() throws Exception {
        Job job = handOver(runner.run("sleep 300 & echo $! > bg.pid; sleep 300", dir, Duration.ofSeconds(3), null,
                budget(500)));
        Job done = awaitEnd(job.id(), Duration.ofSeconds(3 + 5));
        assertThat(done.timedOut()).isTrue();
        assertThat(done.durationMillis()).isBetween(2_900L, 6_000L);
        long pid = Long.parseLong(Files.readString(dir.resolve("bg.pid")).strip());
        assertThat(CommandRunnerTest.isRunning(pid)).as("background child").isFalse();
    }

    @Test
    void commandWithinTheBudgetIsAnOrdinaryResult() throws Exception {
        CommandOutcome outcome = runner.run("echo quick", dir, Duration.ofSeconds(20), null, budget(5_000));
        assertThat(outcome).isInstanceOf(CommandResult.class);
        assertThat(((CommandResult) outcome).exitCode()).isZero();
        assertThat(jobs.list()).isEmpty();
    }

    @Test
    void timeoutShorterThanTheBudgetKillsAsBefore() throws Exception {
        CommandOutcome outcome = runner.run("sleep 30", dir, Duration.ofSeconds(1), null, budget(5_000));
        assertThat(outcome).isInstanceOf(CommandResult.class);
        assertThat(((CommandResult) outcome).timedOut()).isTrue();
        assertThat(jobs.list()).isEmpty();
    }

    @Test
    void cancelledCallKillsTheWholeTreeWithinTheGrace() throws Exception {
        CompletableFuture<Thread> worker = new CompletableFuture<>();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            worker.complete(Thread.currentThread());
            try {
                runner.run("trap '' TERM; sleep 300 & echo $! > bg.pid; sleep 300", dir, Duration.ofSeconds(60), null,
                        budget(30_000));
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        });
        Path pidFile = dir.resolve("bg.pid");
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while ((!Files.exists(pidFile) || Files.size(pidFile) == 0) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        long pid = Long.parseLong(Files.readString(pidFile).strip());
        long cancelled = System.nanoTime();
        worker.get().interrupt();
        assertThat(outcome.get(GRACE.toMillis() + 3_000, TimeUnit.MILLISECONDS)).isInstanceOf(InterruptedException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cancelled)).isLessThan(GRACE.toMillis() + 1_000);
        assertThat(CommandRunnerTest.isRunning(pid)).isFalse();
        assertThat(runner.runningCount()).isZero();
        assertThat(jobs.list()).as("a cancelled command is not handed over").isEmpty();
    }

    private Job awaitEnd(String id, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            Job job = jobs.get(id).orElseThrow();
            if (!job.running()) {
                return job;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(id + " still running after " + within);
    }
}
