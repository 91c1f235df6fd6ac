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
    void closeKillsEveryJob() throws Exception {
        Job job = jobs.start("echo $$ > job.pid; sleep 300", dir, ".");
        long shell = CommandRunnerTest.awaitPid(dir.resolve("job.pid"));
        jobs.close();
        assertThat(CommandRunnerTest.isRunning(shell)).isFalse();
        assertThatThrownBy(() -> jobs.start("true", dir, ".")).hasMessageContaining("shutting down");
        assertThat(jobs.get(job.id())).isPresent();
    }
}
