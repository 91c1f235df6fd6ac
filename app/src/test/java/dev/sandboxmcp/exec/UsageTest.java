package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * A command's usage against {@code /usr/bin/time -v}'s figures for the same run: the command is
 * {@code /usr/bin/time -v -o time.txt <work>}, so both measure one execution (the runner's
 * figures add the login shell and time itself, a few milliseconds and a few MiB).
 */
@EnabledIf(value = "timeIsInstalled", disabledReason = "needs /usr/bin/time (Debian's time package) and python3")
class UsageTest {

    @TempDir
    Path dir;
    CommandRunner runner;

    static boolean timeIsInstalled() {
        return Files.isExecutable(Path.of("/usr/bin/time")) && Files.isExecutable(Path.of("/usr/bin/python3"));
    }

    @BeforeEach
    void setUp() {
        runner = new CommandRunner(Map.of("PATH", "/usr/bin:/bin"), 64 * 1024, Duration.ofSeconds(1), 2);
    }

    @AfterEach
    void tearDown() {
        runner.close();
    }

    /** The figure {@code /usr/bin/time -v} wrote under {@code label}. */
    private double timeSays(String label) throws Exception {
        Matcher m = Pattern.compile("\\s*" + Pattern.quote(label) + ": ([0-9.]+)")
                .matcher(Files.readString(dir.resolve("time.txt")));
        assertThat(m.find()).as(label).isTrue();
        return Double.parseDouble(m.group(1));
    }

    private Usage measured(String work) throws Exception {
        CommandResult result = runner.run("/usr/bin/time -v -o time.txt " + work, dir, Duration.ofSeconds(60));
        assertThat(result.exitCode()).as(result.stderr().text()).isZero();
        assertThat(result.ending().usage()).isNotNull();
        return result.ending().usage();
    }

    @Test
    void cpuTimeOfACpuBoundCommandIsWithinTenPercentOfTimes() throws Exception {
        Usage usage = measured("python3 -c 'sum(i * i for i in range(30_000_000))'");
        double timeCpuSeconds = timeSays("User time (seconds)") + timeSays("System time (seconds)");
        double ourCpuSeconds = (usage.userMicros() + usage.systemMicros()) / 1e6;
        assertThat(timeCpuSeconds).as("the work is CPU-bound").isGreaterThan(0.5);
        assertThat(ourCpuSeconds).isCloseTo(timeCpuSeconds, within(timeCpuSeconds * 0.10));
        assertThat(usage.userMicros() / 1e6).isCloseTo(timeSays("User time (seconds)"), within(timeCpuSeconds * 0.10));
    }

    @Test
    void peakMemoryOfAMemoryBoundCommandIsWithinTenPercentOfTimes() throws Exception {
        Usage usage = measured("python3 -c \"b = b'x' * (300 * 1024 * 1024)\"");
        double timeKib = timeSays("Maximum resident set size (kbytes)");
        assertThat(timeKib).as("the work holds 300 MiB").isGreaterThan(300 * 1024);
        assertThat((double) usage.peakRssKib()).isCloseTo(timeKib, within(timeKib * 0.10));
        assertThat(usage.peakIsBound()).as("above the runner's own size: exact").isFalse();
    }

    @Test
    void aPeakBelowTheRunnersOwnSizeIsOnlyABoundAndSaysSo() throws Exception {
        Usage usage = runner.run("true", dir, Duration.ofSeconds(10)).ending().usage();
        assertThat(usage.peakIsBound()).isTrue();
        assertThat(usage.peakRssKib()).as("the runner's size when the shell was spawned")
                .isGreaterThan(4 * 1024).isLessThanOrEqualTo(OwnPeak.kib());
    }

    @Test
    void bytesWrittenToAFileAreWithinTenPercentOfTimes() throws Exception {
        Usage usage = measured("dd if=/dev/zero of=written bs=1M count=20 conv=fsync status=none");
        double timeBytes = timeSays("File system outputs") * 512;
        assertThat(timeBytes).as("20 MiB reached the file system").isGreaterThanOrEqualTo(20 * 1024 * 1024);
        assertThat((double) usage.writtenBytes()).isCloseTo(timeBytes, within(timeBytes * 0.10));
    }

    @Test
    void whatTheShellWaitedForIsCounted() throws Exception {
        CommandResult result = runner.run("python3 -c 'sum(range(10_000_000))' & python3 -c 'sum(range(10_000_000))'; wait",
                dir, Duration.ofSeconds(60));
        CommandResult one = runner.run("python3 -c 'sum(range(10_000_000))'", dir, Duration.ofSeconds(60));
        long both = result.ending().usage().userMicros();
        long single = one.ending().usage().userMicros();
        assertThat(both).as("two runs of the same work, one in the background").isGreaterThan(single * 3 / 2);
    }

    @Test
    void aJobsEndingCarriesItsUsage() throws Exception {
        try (JobManager jobs = new JobManager(Map.of("PATH", "/usr/bin:/bin"), 64 * 1024, Duration.ofSeconds(1), 1, 4)) {
            Job job = jobs.start("python3 -c \"b = b'x' * (300 * 1024 * 1024)\"", dir, ".");
            assertThat(job.ending()).as("running").isNull();
            for (int i = 0; i < 400 && jobs.get(job.id()).orElseThrow().running(); i++) {
                Thread.sleep(50);
            }
            Ending ending = jobs.get(job.id()).orElseThrow().ending();
            assertThat(ending).isNotNull();
            assertThat(ending.cause()).isInstanceOf(Ending.Exited.class);
            assertThat(ending.usage().peakRssKib()).isGreaterThan(300 * 1024);
            assertThat(ending.usage().peakIsBound()).isFalse();
        }
    }
}
