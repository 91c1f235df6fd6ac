package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The disk floor for inodes: a command that makes empty files by the million fills a filesystem's
 * inodes long before its bytes, and then nothing on the machine can make a file there. Each
 * filesystem whose number of inodes is fixed when it is made (ext2 to ext4, tmpfs; on XFS, btrfs
 * or ZFS it follows free space, which the byte floor keeps) keeps the same share of its inodes
 * free as of its bytes ({@link DiskFloor#inodesFor}).
 *
 * <p>Below that, what the filesystem loses between two looks counts against the sandbox when a
 * command or job ran at either of them or started in between; only what goes between two looks
 * with nothing of the sandbox running is the host's. Once that count has reached {@link #TAKEN}
 * (files removed count back), every command and job running at a look that finds fewer inodes
 * free than the last is stopped, and what commands left running outside every tree
 * ({@link DiskFloorStrays}): no counter says which process makes files. The count is kept until
 * free inodes are back above the floor, so that each later command making files is stopped within
 * a look of starting to. A command that only removes files, or makes none, goes on, unless
 * something else (the host) makes files on that filesystem while it runs: that counts too.
 * With nothing of the sandbox running, every {@link #TAKEN} lost stops what commands left
 * behind. Below the floor the looks come every {@link DiskFloorWatch#SHORTEST_POLL}, running or
 * not (a command making a thousand files takes longer); above it, before a
 * {@link #FAST_CREATOR_PER_SECOND} creator could take half of what is left.
 */
final class InodeFloor {

    /** The fastest a command is taken to make files: several processes on tmpfs. */
    static final long FAST_CREATOR_PER_SECOND = 1_000_000;
    static final long TAKEN = 1000;
    /** The filesystems (statfs types, as Java names them) whose number of inodes is fixed when they are made. */
    static final Set<String> FIXED_INODES = Set.of("ext2", "ext3", "ext4", "tmpfs");

    /**
     * {@code reading}: where its statvfs is among a look's; {@code previous}: free inodes at the
     * last look, -1 before the first; {@code taken}: counted against the sandbox.
     */
    private static final class Watched {
        final Path path;
        final int reading;
        final long floorInodes;
        long previous = -1;
        boolean ranBefore;
        long begunBefore;
        long taken;
        long takenIdle;

        Watched(Path path, int reading, long floorInodes) {
            this.path = path;
            this.reading = reading;
            this.floorInodes = floorInodes;
        }
    }

    private final List<Watched> filesystems;

    private InodeFloor(List<Watched> filesystems) {
        this.filesystems = filesystems;
    }

    /**
     * The inode floors of {@code paths} (each a filesystem of its own, of the statfs type in
     * {@code types} and the size in {@code totalBytes} at the same index); none where the number
     * of inodes is not fixed.
     */
    static InodeFloor of(DiskFloor floor, List<Path> paths, List<String> types, List<Long> totalBytes) throws IOException {
        List<Watched> watched = new ArrayList<>();
        for (int i = 0; i < paths.size(); i++) {
            Path path = paths.get(i);
            long floorInodes = FIXED_INODES.contains(types.get(i))
                    ? floor.inodesFor(totalBytes.get(i), Statvfs.read(path).totalInodes()) : 0;
            if (floorInodes > 0) {
                watched.add(new Watched(path, i, floorInodes));
            }
        }
        return new InodeFloor(List.copyOf(watched));
    }

    /**
     * Looks once at {@code readings} (each filesystem's statvfs, in the order {@link #of} was given
     * them, null where it failed; {@code busy}: whether a command or job is starting or running;
     * {@code begun}: how many have begun so far), stops what runs when the sandbox has taken
     * {@link #TAKEN} below the floor and files are still being made, and returns how long the
     * next look may wait.
     */
    Duration look(Statvfs.Reading[] readings, Map<ProcessTree, RunningCommand> running, boolean busy, long begun,
            DiskFloorStrays strays) {
        Duration next = DiskFloorWatch.LONGEST_POLL;
        boolean runs = !running.isEmpty() || busy;
        for (Watched filesystem : filesystems) {
            Statvfs.Reading reading = readings[filesystem.reading];
            if (reading == null) {
                continue;
            }
            long free = reading.freeInodes();
            long headroom = free - filesystem.floorInodes;
            next = min(next, DiskFloorWatch.pollAfter(headroom, FAST_CREATOR_PER_SECOND, DiskFloorWatch.SHORTEST_POLL));
            // Below the floor, only what went below it: the look that crosses it may come late.
            long lost = filesystem.previous < 0 ? 0 : Math.min(filesystem.previous, filesystem.floorInodes) - free;
            // Ours when something ran (or was starting) at either look, or started and ended in between.
            boolean ours = runs || filesystem.ranBefore || begun != filesystem.begunBefore;
            filesystem.previous = free;
            filesystem.ranBefore = runs;
            filesystem.begunBefore = begun;
            if (headroom >= 0) {
                filesystem.taken = 0;
                filesystem.takenIdle = 0;
            } else if (ours) {
                filesystem.taken = Math.max(0, filesystem.taken + lost);
                if (!running.isEmpty() && lost > 0 && filesystem.taken >= TAKEN) {
                    stopAll(filesystem, free, running, strays);
                }
            } else {
                filesystem.takenIdle = Math.max(0, filesystem.takenIdle + lost);
                if (filesystem.takenIdle >= TAKEN && strays != null) {
                    filesystem.takenIdle = 0;
                    leftovers(filesystem, free, strays, List.of());
                }
            }
        }
        return next;
    }

    private static void stopAll(Watched filesystem, long free, Map<ProcessTree, RunningCommand> running,
            DiskFloorStrays strays) {
        Map<ProcessTree, RunningCommand> alive = new java.util.HashMap<>(running);
        alive.values().removeIf(RunningCommand::killing); // stopped at an earlier look, and still ending
        if (alive.isEmpty()) {
            return;
        }
        InodeFloorStop stop = new InodeFloorStop(filesystem.path, free, filesystem.floorInodes);
        alive.forEach((tree, command) -> command.killNow(stop, tree.descendants()));
        // println: the log stream ends a line only there (LogLines)
        System.err.println(String.format("sandbox-mcp runner: %s had %d inodes free, below its %d-inode floor, and the "
                + "sandbox had taken %d or more of them: stopped every running command and job (%d)", filesystem.path, free,
                filesystem.floorInodes, TAKEN, alive.size()));
        if (strays != null) {
            leftovers(filesystem, free, strays, running.keySet());
        }
    }

    /** Kills what commands left running outside every tree of {@code running}. */
    private static void leftovers(Watched filesystem, long free, DiskFloorStrays strays, java.util.Collection<ProcessTree> running) {
        for (DiskFloorStrays.Stopped stray : strays.stopAll(running, false)) {
            System.err.println(String.format("sandbox-mcp runner: %s had %d inodes free, below its %d-inode floor: killed "
                    + "pid %d, left running by a command outside its tree", filesystem.path, free, filesystem.floorInodes,
                    stray.pid()));
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
