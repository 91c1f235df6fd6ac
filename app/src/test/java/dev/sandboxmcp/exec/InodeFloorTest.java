package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.SmallTmpfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The disk floor for inodes, on a tmpfs of 64 MiB that holds 20,000 files: with a floor of 24 MiB
 * (37.5 percent) it keeps 7,500 inodes free. A command making empty files, which the byte floor
 * never sees, is stopped with inodes left, and every running job with it; below the floor, a
 * command that removes files or makes none goes on.
 */
class InodeFloorTest extends DiskFloorFixture {

    static final DiskFloor FLOOR = new DiskFloor(24 * MIB, 0);
    static final long FLOOR_INODES = 7500;
    /** One process making empty files as fast as a shell can: builtins only. */
    static final String MAKE_FILES = "i=0; while :; do : > f$i; i=$((i+1)); done";

    @BeforeEach
    void setUp() throws Exception {
        open(SmallTmpfs.mountWithInodes(temp, 64, 20_000));
        watch(FLOOR);
    }

    long freeInodes() throws Exception {
        return Statvfs.read(disk.path).freeInodes();
    }

    @Test
    void theFloorIsTheSameShareOfInodesAsOfBytes() throws Exception {
        assertThat(Statvfs.read(disk.path).totalInodes()).isEqualTo(20_000);
        assertThat(FLOOR.inodesFor(64 * MIB, 20_000)).isEqualTo(FLOOR_INODES);
        assertThat(FLOOR.inodesFor(64 * MIB, 0)).as("no fixed number of inodes: no floor").isZero();
        assertThat(new DiskFloor(2L << 30, 5).inodesFor(1000L << 30, 60_000_000)).isEqualTo(3_000_000);
    }

    @Test
    void aCommandMakingEmptyFilesIsStoppedWithInodesLeftAndEveryRunningJobWithIt() throws Exception {
        Job sleeper = jobs.start("sleep 600", disk.path, ".");
        CommandResult result = commands.run(MAKE_FILES, disk.path, Duration.ofSeconds(60));

        assertThat(result.ending().cause()).as(result.stderr().text()).isInstanceOf(InodeFloorStop.class);
        InodeFloorStop stop = (InodeFloorStop) result.ending().cause();
        assertThat(stop.path()).isEqualTo(disk.path);
        assertThat(stop.floorInodes()).isEqualTo(FLOOR_INODES);
        assertThat(stop.freeInodes()).isLessThan(FLOOR_INODES);
        assertThat(result.stderr().text()).doesNotContain("No space left");
        long left = freeInodes();
        assertThat(left).as("inodes left").isGreaterThan(0);
        System.out.printf("inode floor on tmpfs: stopped %d inodes below the floor of %d, %d below once stopped (%d left)%n",
                FLOOR_INODES - stop.freeInodes(), FLOOR_INODES, FLOOR_INODES - left, left);
        assertThat(awaitEnd(sleeper.id()).ending().cause()).as("no counter says who made the files: every job is stopped")
                .isInstanceOf(InodeFloorStop.class);
    }

    @Test
    void belowTheFloorACommandThatRemovesFilesOrMakesNoneGoesOn() throws Exception {
        // Below the floor by files the test makes itself: no command's.
        Path made = Files.createDirectories(disk.path.resolve("made"));
        for (int i = 0; freeInodes() > FLOOR_INODES - 2000; i++) {
            Files.createFile(made.resolve("f" + i));
        }
        Thread.sleep(100);
        CommandResult quiet = commands.run("echo still here; sleep 0.3", disk.path, Duration.ofSeconds(60));
        assertThat(quiet.ending().cause()).isInstanceOf(Ending.Exited.class);
        CommandResult cleanup = commands.run("rm -r made; sleep 0.3", disk.path, Duration.ofSeconds(60));
        assertThat(cleanup.ending().cause()).as(cleanup.stderr().text()).isInstanceOf(Ending.Exited.class);
        assertThat(cleanup.exitCode()).isZero();
        assertThat(freeInodes()).isGreaterThan(FLOOR_INODES);
    }

    /**
     * Below the floor, what commands take adds up across calls, whatever lies between them: a
     * command that makes 999 files at a time, again and again, is stopped by the second time.
     */
    @Test
    void belowTheFloorCommandsThatEachMakeFewerFilesThanTheAllowanceAddUp() throws Exception {
        Path made = Files.createDirectories(disk.path.resolve("made"));
        for (int i = 0; freeInodes() > FLOOR_INODES - 10; i++) {
            Files.createFile(made.resolve("f" + i));
        }
        Thread.sleep(100);
        CommandResult first = commands.run(makeFiles(1, 999), disk.path, Duration.ofSeconds(60));
        assertThat(first.ending().cause()).isInstanceOf(Ending.Exited.class);
        Thread.sleep(200); // idle looks between the calls
        CommandResult second = commands.run(makeFiles(2, 999), disk.path, Duration.ofSeconds(60));
        assertThat(second.ending().cause()).as("999 and 999 more").isInstanceOf(InodeFloorStop.class);
    }

    /** A command that makes {@code count} empty files named after {@code batch}. */
    static String makeFiles(int batch, int count) {
        return "i=0; while [ $i -lt " + count + " ]; do : > b" + batch + ".$i; i=$((i+1)); done";
    }
}
