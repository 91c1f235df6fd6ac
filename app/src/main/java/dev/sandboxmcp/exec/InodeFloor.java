package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The disk floor for inodes: a command that makes empty files by the million fills a filesystem's
 * inodes long before its bytes, and then nothing on the machine can make a file there. Each
 * filesystem keeps the same share of its inodes free as of its bytes ({@link DiskFloor#inodesFor}).
 * Below that, once free inodes fell by {@link #SHRINK} since they were first seen below (or since
 * the last stop), every running command and job is stopped, and what commands left running
 * outside every tree ({@link DiskFloorStrays}): no counter says which process makes files, and
 * a command that only removes files, or makes none, is never stopped. Polled with the byte
 * floor, at a pace that comes before a {@link #FAST_CREATOR_PER_SECOND} creator could take half
 * of what is left above the floor.
 */
final class InodeFloor {

    /** The fastest a command is taken to make files: several processes on tmpfs. */
    static final long FAST_CREATOR_PER_SECOND = 1_000_000;
    static final long SHRINK = 1000;

    private record Watched(Path path, long floorInodes) {
    }

    private final List<Watched> filesystems;
    /** Per filesystem: free inodes when first seen below the floor, or at the last stop; -1 above the floor. */
    private final long[] mark;

    private InodeFloor(List<Watched> filesystems) {
        this.filesystems = filesystems;
        this.mark = new long[filesystems.size()];
        Arrays.fill(mark, -1);
    }

    /** The inode floors of {@code paths} (each a filesystem of its own); none where inodes are not fixed. */
    static InodeFloor of(DiskFloor floor, List<Path> paths) throws IOException {
        List<Watched> watched = new ArrayList<>();
        for (Path path : paths) {
            long floorInodes = floor.inodesFor(path.toFile().getTotalSpace(), Statvfs.inodes(path).total());
            if (floorInodes > 0) {
                watched.add(new Watched(path, floorInodes));
            }
        }
        return new InodeFloor(List.copyOf(watched));
    }

    /**
     * Looks once, stops what runs when free inodes fell below the floor far enough, and returns
     * how long the next look may wait ({@code shortest} at or below the floor).
     */
    Duration look(Map<ProcessTree, RunningCommand> running, DiskFloorStrays strays, Duration shortest) {
        Duration next = DiskFloorWatch.LONGEST_POLL;
        for (int i = 0; i < filesystems.size(); i++) {
            Watched filesystem = filesystems.get(i);
            long free;
            try {
                free = Statvfs.inodes(filesystem.path()).free();
            } catch (IOException e) {
                continue;
            }
            long headroom = free - filesystem.floorInodes();
            next = min(next, DiskFloorWatch.pollAfter(headroom, FAST_CREATOR_PER_SECOND, shortest));
            if (headroom >= 0) {
                mark[i] = -1;
            } else if (mark[i] < 0 || running.isEmpty()) {
                mark[i] = free; // what goes while nothing of ours runs is not ours
            } else if (free <= mark[i] - SHRINK) {
                mark[i] = free;
                stopAll(filesystem, free, running, strays);
            } else {
                mark[i] = Math.max(mark[i], free); // files removed: measured from there
            }
        }
        return next;
    }

    private static void stopAll(Watched filesystem, long free, Map<ProcessTree, RunningCommand> running,
            DiskFloorStrays strays) {
        InodeFloorStop stop = new InodeFloorStop(filesystem.path(), free, filesystem.floorInodes());
        running.forEach((tree, command) -> command.killNow(stop, tree.descendants()));
        // println: the log stream ends a line only there (LogLines)
        System.err.println(String.format("sandbox-mcp runner: %s had %d inodes free, below its %d-inode floor: stopped "
                + "every running command and job (%d)", filesystem.path(), free, filesystem.floorInodes(), running.size()));
        if (strays != null) {
            for (DiskFloorStrays.Stopped stray : strays.stopAll(running.keySet(), false)) {
                System.err.println(String.format("sandbox-mcp runner: %s below its inode floor: killed pid %d, left running "
                        + "by a command outside its tree", filesystem.path(), stray.pid()));
            }
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
