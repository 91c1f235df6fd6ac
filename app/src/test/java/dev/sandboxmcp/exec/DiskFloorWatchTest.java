package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.SmallTmpfs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The disk floor on a filesystem of a fixed size (a 512 MiB tmpfs, floor 192 MiB: room for how
 * far past the floor writers get on a loaded machine, which the tests print): writers at full
 * speed are stopped with free space left and say why; what does not write goes on; without a
 * floor the writer fills the filesystem, as before.
 */
class DiskFloorWatchTest extends DiskFloorFixture {

    static final DiskFloor FLOOR = new DiskFloor(192 * MIB, 0);

    @BeforeEach
    void setUp() throws Exception {
        open(SmallTmpfs.mount(temp, 512));
    }

    CommandResult run(String command) throws Exception {
        return commands.run(command, disk.path, Duration.ofSeconds(60));
    }

    /** Why the disk floor stopped it, or null when it did not. */
    static DiskFloorStop floorStop(CommandResult result) {
        return result.ending().cause() instanceof DiskFloorStop stop ? stop : null;
    }

    static DiskFloorStop floorStop(Job job) {
        return job.ending() != null && job.ending().cause() instanceof DiskFloorStop stop ? stop : null;
    }

    /** How far below the floor the stop came (free space when it was seen, and once all was written). */
    void report(String what, DiskFloorStop stop) {
        System.out.printf("disk floor, %s on tmpfs: seen %.1f MiB below the floor, %.1f MiB below once stopped "
                + "(floor %d MiB, %.1f MiB free left)%n", what, (stop.floorBytes() - stop.freeBytes()) / (double) MIB,
                (stop.floorBytes() - disk.free()) / (double) MIB, stop.floorBytes() / MIB, disk.free() / (double) MIB);
    }

    @Test
    void aWriterAtFullSpeedIsStoppedWithFreeSpaceLeftAndItsResultSaysWhy() throws Exception {
        watch(FLOOR);
        CommandResult result = run("dd if=/dev/zero of=fill bs=1M");
        DiskFloorStop stop = floorStop(result);
        assertThat(stop).as("stopped by the floor: %s", result.stderr().text()).isNotNull();
        assertThat(stop.path()).isEqualTo(disk.path);
        assertThat(stop.floorBytes()).isEqualTo(192 * MIB);
        assertThat(stop.freeBytes()).isLessThan(192 * MIB);
        assertThat(result.exitCode()).isIn(128 + 9, 128 + 15);
        assertThat(result.stderr().text()).doesNotContain("No space left");
        assertThat(disk.free()).as("free space left").isGreaterThan(0);
        report("one dd", stop);
    }

    @Test
    void parallelWritersOfOneCommandAreStoppedTogether() throws Exception {
        watch(FLOOR);
        CommandResult result = run("for i in 1 2 3 4; do dd if=/dev/zero of=fill$i bs=1M 2>/dev/null & done; wait");
        assertThat(floorStop(result)).isNotNull();
        assertThat(disk.free()).isGreaterThan(0);
        report("four dd in one command", floorStop(result));
    }

    @Test
    void writersInJobsAreStoppedAndAJobThatOnlyPrintsGoesOn() throws Exception {
        watch(FLOOR);
        Job ticker = jobs.start("while true; do echo tick; sleep 0.05; done", disk.path, ".");
        Job first = jobs.start("dd if=/dev/zero of=a bs=1M", disk.path, ".");
        Job second = jobs.start("dd if=/dev/zero of=b bs=1M", disk.path, ".");
        Job firstEnd = awaitEnd(first.id());
        Job secondEnd = awaitEnd(second.id());
        assertThat(floorStop(firstEnd)).isNotNull();
        assertThat(floorStop(secondEnd)).isNotNull();
        assertThat(disk.free()).isGreaterThan(0);
        report("two dd jobs", floorStop(firstEnd).freeBytes() < floorStop(secondEnd).freeBytes()
                ? floorStop(firstEnd) : floorStop(secondEnd));

        // Below the floor still: what writes nothing carries on, and a new command that writes nothing runs.
        Thread.sleep(300);
        assertThat(jobs.get(ticker.id()).orElseThrow().running()).isTrue();
        CommandResult quiet = run("echo still here; sleep 0.3");
        assertThat(quiet.exitCode()).isZero();
        assertThat(floorStop(quiet)).isNull();
        assertThat(floorStop(jobs.get(ticker.id()).orElseThrow())).isNull();
    }

    @Test
    void slowWritersSideBySideAreStoppedThoughNoneWritesMuchWhileSpaceShrinksByAMebibyte() throws Exception {
        // Three jobs at about 1.3 MiB/s each: while free space shrinks by 1 MiB, each writes a
        // third of it, under the 512 KiB that blames a tree. Each writes 40 MiB at most, so that,
        // not stopped, they end by themselves with the disk far from full.
        CommandResult fill = run("head -c " + (512 - 180) * MIB + " /dev/zero > fill");
        assertThat(fill.exitCode()).isZero();
        watch(FLOOR);
        List<Job> slow = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            slow.add(jobs.start("for i in $(seq 640); do printf '%65536s' '' >> slow" + i + "; sleep 0.05; done",
                    disk.path, "."));
        }
        for (Job job : slow) {
            Job end = awaitEnd(job.id());
            assertThat(floorStop(end)).as("%s: %s", job.id(), jobs.output(job.id(), "output", 0, 4096).orElseThrow().text())
                    .isNotNull();
        }
        System.out.printf("disk floor, three slow writers: stopped with %.1f MiB free (floor 192 MiB)%n",
                disk.free() / (double) MIB);
        assertThat(disk.free()).isGreaterThan(100 * MIB);
    }

    @Test
    void belowTheFloorAWriterOutsideEveryTreeIsStoppedWhileAJobRuns() throws Exception {
        // What a command leaves in a session of its own with a cleared environment belongs to no
        // tree, and the idle sweep waits while a job runs: here the test starts such a writer
        // itself (about 6 MiB/s, 100 MiB at most), and the strays judged are its session only.
        CommandResult fill = run("head -c " + (512 - 180) * MIB + " /dev/zero > fill");
        assertThat(fill.exitCode()).isZero();
        Job job = jobs.start("sleep 60", disk.path, ".");
        Process stray = new ProcessBuilder("setsid", "sh", "-c", "for i in $(seq 1600); do head -c 65536 /dev/zero >> stray; "
                + "sleep 0.01; done").directory(disk.path.toFile()).redirectErrorStream(true).start();
        long session = stray.pid(); // setsid makes the session in place: the test's child leads no group
        watch = DiskFloorWatch.start(FLOOR, List.of(disk.path), commands, jobs,
                new DiskFloorStrays(stat -> stat.session() == session));
        assertThat(stray.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).as("the stray ended").isTrue();
        long written = java.nio.file.Files.size(disk.path.resolve("stray"));
        System.out.printf("disk floor, a writer outside every tree: killed after %.1f MiB%n", written / (double) MIB);
        assertThat(stray.exitValue()).as("killed: %s", new String(stray.getInputStream().readAllBytes())).isEqualTo(128 + 9);
        assertThat(written).isLessThan(100 * MIB);
        assertThat(jobs.get(job.id()).orElseThrow().running()).as("the job, which writes nothing, goes on").isTrue();
    }

    @Test
    void aPidCountedLongAgoIsReadAgainOnlyWhileItIsStillTheSameProcess() throws Exception {
        // Below the floor the counts a look compares with may be minutes old: a pid in them that
        // another process has taken since is not that tree's member any more.
        Process sleeper = new ProcessBuilder("sleep", "30").start();
        try {
            long pid = sleeper.pid();
            ProcStat stat = ProcStat.read(pid, new byte[ProcStat.BUFFER_BYTES]);
            ProcessTree tree = new ProcessTree(pid, "SANDBOX_MCP_TEST=1");
            for (long start : new long[] {stat.startTicks(), stat.startTicks() - 1}) {
                DiskFloorWatch.Counts last = new DiskFloorWatch.Counts(System.nanoTime(), java.util.Set.of(tree),
                        Map.of(pid, new DiskFloorWatch.Sample(start, ProcIo.NONE)), Map.of(tree, List.of(pid)));
                Map<ProcessTree, List<Long>> again = DiskFloorWatch.recount(last).members();
                if (start == stat.startTicks()) {
                    assertThat(again).as("the same process").containsEntry(tree, List.of(pid));
                } else {
                    assertThat(again).as("another process under the same pid").isEmpty();
                }
            }
        } finally {
            sleeper.destroyForcibly();
        }
    }

    @Test
    void belowTheFloorANewWriterIsStoppedAsSoonAsItWrites() throws Exception {
        CommandResult fill = run("head -c " + (512 - 150) * MIB + " /dev/zero > fill");
        assertThat(fill.exitCode()).isZero();
        assertThat(disk.free()).isLessThan(192 * MIB);
        watch(FLOOR);
        CommandResult result = run("sleep 0.2; dd if=/dev/zero of=more bs=1M");
        assertThat(floorStop(result)).isNotNull();
        assertThat(result.stderr().text()).doesNotContain("No space left");
        assertThat(disk.free()).isGreaterThan(0);
    }

    /**
     * The same on a real disk, only when asked (it writes about 1 GiB per writer there):
     * {@code -Dsandbox.diskfloor.disk=<a directory on a disk>}. The floor is set 1 GiB below the
     * free space found; what else writes to that disk meanwhile counts too.
     */
    @Test
    void onADiskWritersAtFullSpeedAreStoppedNearTheFloor() throws Exception {
        String asked = System.getProperty("sandbox.diskfloor.disk");
        org.junit.jupiter.api.Assumptions.assumeTrue(asked != null,
                "writes about 1 GiB per writer to a real disk; run with -Dsandbox.diskfloor.disk=<directory> to measure there");
        Path dir = java.nio.file.Files.createTempDirectory(Path.of(asked), "disk-floor-");
        try {
            for (String writers : List.of("1", "4")) {
                long floor = dir.toFile().getUsableSpace() - (1L << 30);
                watch = DiskFloorWatch.start(new DiskFloor(floor, 0), List.of(dir), commands, jobs, false);
                CommandResult result = commands.run("for i in $(seq " + writers + "); do dd if=/dev/zero of=fill$i bs=1M "
                        + "count=" + (4L << 10) + " 2>/dev/null & done; wait; sync", dir, Duration.ofSeconds(120));
                DiskFloorStop stop = floorStop(result);
                assertThat(stop).isNotNull();
                long after = dir.toFile().getUsableSpace();
                System.out.printf("disk floor, %s dd on a disk: seen %.1f MiB below the floor, %.1f MiB below once stopped%n",
                        writers, (stop.floorBytes() - stop.freeBytes()) / (double) MIB, (stop.floorBytes() - after) / (double) MIB);
                watch.close();
                commands.run("rm -f fill*; sync", dir, Duration.ofSeconds(60));
            }
        } finally {
            commands.run("rm -rf " + dir, temp, Duration.ofSeconds(60));
        }
    }

    @Test
    void withTheFloorOffTheWriterFillsTheFilesystemAsBefore() throws Exception {
        watch(DiskFloor.OFF);
        assertThat(watch.watching()).isFalse();
        CommandResult result = run("dd if=/dev/zero of=fill bs=1M");
        assertThat(floorStop(result)).isNull();
        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.stderr().text()).contains("No space left on device");
        assertThat(disk.free()).isZero();
    }

    @Test
    void theCountersSeeWritesToTmpfsOnlyInWchar() throws Exception {
        CommandResult result = run("dd if=/dev/zero of=x bs=1M count=8 2>/dev/null; cat /proc/$$/io");
        ProcIo io = ProcIo.parse(result.stdout().text().getBytes(StandardCharsets.US_ASCII),
                result.stdout().text().length());
        assertThat(io.wchar()).isGreaterThanOrEqualTo(8 * MIB);
        assertThat(io.writeBytes()).isLessThan(MIB);
    }

    @Test
    void pollsComeSoonerNearTheFloor() {
        Duration far = DiskFloorWatch.pollAfter(100L << 30, DiskFloorWatch.SHORTEST_POLL);
        Duration near = DiskFloorWatch.pollAfter(64 * MIB, DiskFloorWatch.SHORTEST_POLL);
        Duration at = DiskFloorWatch.pollAfter(1, DiskFloorWatch.SHORTEST_POLL);
        assertThat(far).isEqualTo(DiskFloorWatch.LONGEST_POLL);
        assertThat(near).isLessThan(Duration.ofMillis(10)).isGreaterThan(DiskFloorWatch.SHORTEST_POLL);
        assertThat(at).isEqualTo(DiskFloorWatch.SHORTEST_POLL);
        assertThat(DiskFloorWatch.pollAfter(-5, DiskFloorWatch.IDLE_SHORTEST_POLL)).isEqualTo(DiskFloorWatch.IDLE_SHORTEST_POLL);
    }

    @Test
    void theFloorIsTheLargerOfItsBytesAndItsShare() {
        DiskFloor floor = new DiskFloor(2L << 30, 5);
        assertThat(floor.bytesFor(10L << 30)).isEqualTo(2L << 30);
        assertThat(floor.bytesFor(1000L << 30)).isEqualTo(50L << 30);
        assertThat(new DiskFloor(0, 0).off()).isTrue();
        assertThat(DiskFloor.OFF.shortfall(temp, Long.MAX_VALUE / 2)).isEmpty();
    }

    @Test
    void aWriteThatWouldGoBelowTheFloorIsFound() {
        long free = disk.free();
        assertThat(FLOOR.shortfall(disk.path, free - 192 * MIB)).isEmpty();
        DiskFloorStop stop = FLOOR.shortfall(disk.path, free - 192 * MIB + 1).orElseThrow();
        assertThat(stop).isEqualTo(new DiskFloorStop(disk.path, free, 192 * MIB));
    }
}
