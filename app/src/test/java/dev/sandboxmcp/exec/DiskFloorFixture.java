package dev.sandboxmcp.exec;

import dev.sandboxmcp.SmallTmpfs;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the disk floor's tests share: a small tmpfs of the test's own, commands (8 at most) and jobs
 * (4) to run on it, and the watch a test starts; all closed after each test.
 */
abstract class DiskFloorFixture {

    static final long MIB = 1 << 20;
    static final Map<String, String> ENVIRONMENT = Map.of("PATH", "/usr/bin:/bin");

    @TempDir
    Path temp;
    SmallTmpfs disk;
    CommandRunner commands;
    JobManager jobs;
    DiskFloorWatch watch;

    /** Takes {@code disk}, mounted by the test's set-up, and makes the commands and jobs. */
    void open(SmallTmpfs disk) {
        this.disk = disk;
        commands = new CommandRunner(ENVIRONMENT, 64 * 1024, Duration.ofSeconds(1), 8);
        jobs = new JobManager(ENVIRONMENT, 64 * 1024, Duration.ofSeconds(1), 4, 16);
    }

    void watch(DiskFloor floor) throws IOException {
        watch = DiskFloorWatch.start(floor, List.of(disk.path), commands, jobs, false);
    }

    /** The job {@code id} once it has ended; fails after a minute. */
    Job awaitEnd(String id) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            Job job = jobs.get(id).orElseThrow();
            if (!job.running()) {
                return job;
            }
            Thread.sleep(20);
        }
        throw new AssertionError(id + " still runs");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (watch != null) {
            watch.close();
        }
        if (commands != null) {
            commands.close();
            jobs.close();
        }
        if (disk != null) {
            disk.close();
        }
    }
}
