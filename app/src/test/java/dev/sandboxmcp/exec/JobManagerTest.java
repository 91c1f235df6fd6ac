package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobManagerTest {

    @TempDir
    Path dir;
    JobManager jobs;

    @BeforeEach
    void setUp() {
        jobs = new JobManager(Map.of("PATH", "/usr/bin:/bin"), 64 * 1024, Duration.ofSeconds(1), 2, 4);
    }

    @AfterEach
    void tearDown() {
        jobs.close();
    }

    Job awaitFinished(String id) throws Exception {
        for (int i = 0; i < 200; i++) {
            Job job = jobs.get(id).orElseThrow();
            if (!job.running()) {
                return job;
            }
            Thread.sleep(25);
        }
        throw new AssertionError("job " + id + " still running");
    }

    @Test
    void runsInTheBackgroundAndKeepsCombinedOutput() throws Exception {
        Job job = jobs.start("echo out; echo err >&2; sleep 0.3; echo done; exit 3", dir, ".");
        assertThat(job.running()).isTrue();
        assertThat(job.exitCode()).isNull();
        Job finished = awaitFinished(job.id());
        assertThat(finished.exitCode()).isEqualTo(3);
        OutputPage page = jobs.output(job.id(), "output", 0, 1024).orElseThrow();
        assertThat(page.text()).contains("out\n").contains("err\n").endsWith("done\n");
        assertThat(page.next()).isEqualTo(page.total());
        assertThat(jobs.output(job.id(), "output", 4, 1024).orElseThrow().text()).doesNotStartWith("out");
    }

    @Test
    void outputPagesAndReportsWhatWasDropped() throws Exception {
        Job job = jobs.start("head -c 100000 /dev/zero | tr '\\0' a", dir, ".");
        awaitFinished(job.id());
        OutputPage first = jobs.output(job.id(), "output", 0, 1000).orElseThrow();
        assertThat(first.total()).isEqualTo(100_000);
        assertThat(first.dropped()).isEqualTo(100_000 - 64 * 1024);
        assertThat(first.start()).isEqualTo(100_000 - 64 * 1024);
        assertThat(first.text()).hasSize(1000);
        OutputPage next = jobs.output(job.id(), "output", first.next(), 1000).orElseThrow();
        assertThat(next.start()).isEqualTo(first.next());
        assertThat(next.dropped()).isZero();
    }

    @Test
    void pagesNeverSplitACharacter() throws Exception {
        Job job = jobs.start("printf 'é%.0s' $(seq 1 100)", dir, ".");
        awaitFinished(job.id());
        OutputPage page = jobs.output(job.id(), "output", 0, 3).orElseThrow();
        assertThat(page.text()).isEqualTo("é");
        assertThat(page.next()).isEqualTo(2);
    }

    @Test
    void stopKillsTheWholeTree() throws Exception {
        Job job = jobs.start("sleep 300 & echo $! > child.pid; trap '' TERM; sleep 300", dir, ".");
        long child = CommandRunnerTest.awaitPid(dir.resolve("child.pid"));
        Job stopped = jobs.stop(job.id()).orElseThrow();
        assertThat(stopped.running()).isFalse();
        assertThat(stopped.stopped()).isTrue();
        assertThat(CommandRunnerTest.isRunning(child)).isFalse();
    }

    @Test
    void runningJobsAreBoundedAndFinishedOnesForgottenOldestFirst() throws Exception {
        Job a = jobs.start("sleep 300", dir, ".");
        jobs.start("sleep 300", dir, ".");
        assertThatThrownBy(() -> jobs.start("true", dir, ".")).isInstanceOf(JobManager.TooManyJobsException.class)
                .extracting(refused -> ((JobManager.TooManyJobsException) refused).limit()).isEqualTo(2);
        jobs.stop(a.id());
        Job c = jobs.start("true", dir, ".");
        awaitFinished(c.id());
        Job d = jobs.start("true", dir, ".");
        // Only b may still be running when e starts, or e would be refused for the running limit.
        awaitFinished(d.id());
        assertThat(jobs.list()).hasSize(4);
        Job e = jobs.start("true", dir, ".");
        assertThat(jobs.list()).hasSize(4).noneMatch(j -> j.id().equals(a.id())).anyMatch(j -> j.id().equals(e.id()));
    }

    @Test
    void aJobWhoseShellExitedCountsAsRunningWhileWhatItLeftHoldsItsOutput() throws Exception {
        // The shell exits at once; the job runs on (list_jobs says so) while sleep holds its output.
        Job a = jobs.start("sleep 300 &", dir, ".");
        Job b = jobs.start("sleep 300 &", dir, ".");
        Thread.sleep(200);
        assertThat(jobs.get(a.id()).orElseThrow().ending()).as("still running").isNull();
        assertThatThrownBy(() -> jobs.start("true", dir, ".")).isInstanceOf(JobManager.TooManyJobsException.class);
        jobs.stop(b.id());
        awaitFinished(jobs.start("true", dir, ".").id());
    }

    /** Waits until the job's output holds {@code text}, and returns the output. */
    String awaitOutput(String id, String text) throws Exception {
        for (int i = 0; i < 400; i++) {
            String output = jobs.output(id, "output", 0, 64 * 1024).orElseThrow().text();
            if (output.contains(text)) {
                return output;
            }
            Thread.sleep(25);
        }
        throw new AssertionError(id + "'s output never held " + text + ": "
                + jobs.output(id, "output", 0, 64 * 1024).orElseThrow().text());
    }

    @Test
    void inputAnswersAPromptAndClosingItGivesEndOfFile() throws Exception {
        Job job = jobs.start("printf 'Continue? [y/N] '; read answer; echo \"got $answer\"; cat; echo \"eof after cat\"",
                dir, ".", true);
        assertThat(job.stdinOpen()).isTrue();
        awaitOutput(job.id(), "[y/N] ");
        assertThat(jobs.input(job.id(), "y\n".getBytes(), false)).contains(new InputOutcome.Written(2, 0, false));
        awaitOutput(job.id(), "got y\n");
        assertThat(jobs.input(job.id(), "rest\n".getBytes(), true)).contains(new InputOutcome.Written(5, 0, true));
        assertThat(awaitFinished(job.id()).exitCode()).isZero();
        assertThat(awaitOutput(job.id(), "eof after cat")).endsWith("got y\nrest\neof after cat\n");
        assertThat(jobs.input(job.id(), "late\n".getBytes(), false))
                .contains(new InputOutcome.Refused(InputOutcome.Reason.ENDED, 0));
    }

    @Test
    void anEscapedProcessHoldingStdinWithoutReadingLeavesNoWriterBehindOnceTheJobIsStopped() throws Exception {
        // The escaped sleep keeps the job's stdin (fd 3) and never reads it: writes fill the pipe and wait.
        // It keeps the job's output too, and never writes to it.
        Job job = jobs.start("exec 3<&0; setsid env -i /bin/sleep 47.321 <&3 & exec 3<&-; exec sleep 300", dir, ".", true);
        try {
            assertThat(jobs.input(job.id(), new byte[64 * 1024], false)).get().isInstanceOf(InputOutcome.Written.class);
            assertThat(jobs.input(job.id(), new byte[64 * 1024], false)).get()
                    .isInstanceOfAny(InputOutcome.Written.class, InputOutcome.Refused.class);
            jobs.stop(job.id());
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (stdinWriters() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(stdinWriters()).as("stdin writer threads left").isZero();
            // It holds the output too: the job ends all the same, its output given up on.
            assertThat(awaitFinished(job.id()).stopped()).isTrue();
        } finally {
            ProcessHandle.allProcesses()
                    .filter(p -> p.info().arguments().map(a -> java.util.List.of(a).equals(java.util.List.of("47.321")))
                            .orElse(false))
                    .forEach(ProcessHandle::destroyForcibly);
        }
    }

    private static long stdinWriters() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("stdin-") && t.isAlive())
                .count();
    }

    @Test
    void inputIsRefusedWhenStdinWasNeverOpenedOrIsClosed() throws Exception {
        Job closedFromTheStart = jobs.start("sleep 300", dir, ".");
        assertThat(closedFromTheStart.stdinOpen()).isFalse();
        assertThat(jobs.input(closedFromTheStart.id(), "x\n".getBytes(), false))
                .contains(new InputOutcome.Refused(InputOutcome.Reason.NOT_OPEN, 0));
        Job open = jobs.start("sleep 300", dir, ".", true);
        assertThat(jobs.input(open.id(), new byte[0], true)).contains(new InputOutcome.Written(0, 0, true));
        assertThat(jobs.get(open.id()).orElseThrow().stdinOpen()).isFalse();
        assertThat(jobs.input(open.id(), "x".getBytes(), false))
                .contains(new InputOutcome.Refused(InputOutcome.Reason.CLOSED, 0));
        assertThat(jobs.input("job-nosuch", "x".getBytes(), false)).isEmpty();
    }

    @Test
    void inputAJobDoesNotReadWaitsInOrderAndTheNextIsRefusedUntilItHasGone() throws Exception {
        Job job = jobs.start("sleep 300", dir, ".", true);
        byte[] big = new byte[256 * 1024]; // more than a pipe holds
        InputOutcome first = jobs.input(job.id(), big, false).orElseThrow();
        assertThat(first).isInstanceOfSatisfying(InputOutcome.Written.class, written -> {
            assertThat(written.pending()).as("the pipe is full: the rest waits").isPositive();
            assertThat(written.bytes() + written.pending()).isEqualTo(big.length);
        });
        assertThat(jobs.input(job.id(), "more".getBytes(), false).orElseThrow())
                .isInstanceOfSatisfying(InputOutcome.Refused.class,
                        refused -> assertThat(refused.reason()).isEqualTo(InputOutcome.Reason.BUSY));
        jobs.stop(job.id());
    }

    @Test
    void aJobThatClosesItsStdinRefusesMoreInput() throws Exception {
        Job job = jobs.start("exec 0<&-; echo closed; sleep 300", dir, ".", true);
        awaitOutput(job.id(), "closed");
        InputOutcome outcome = jobs.input(job.id(), "x\n".getBytes(), false).orElseThrow();
        assertThat(outcome).isEqualTo(new InputOutcome.Refused(InputOutcome.Reason.BROKEN, 0));
        assertThat(jobs.input(job.id(), "x\n".getBytes(), false).orElseThrow())
                .isEqualTo(new InputOutcome.Refused(InputOutcome.Reason.BROKEN, 0));
        jobs.stop(job.id());
    }

    @Test
    void closeKillsEveryJob() throws Exception {
        Job job = jobs.start("echo $$ > job.pid; sleep 300", dir, ".");
        long shell = CommandRunnerTest.awaitPid(dir.resolve("job.pid"));
        jobs.close();
        assertThat(CommandRunnerTest.isRunning(shell)).isFalse();
        assertThatThrownBy(() -> jobs.start("true", dir, ".")).hasMessageContaining("shutting down");
        assertThat(jobs.get(job.id())).isPresent();
    }
}
