package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Keeps commands and jobs from filling the filesystems they write (the workspace, the runner's
 * home; {@code /tmp} is a bounded tmpfs of its own): when one's free space falls below its
 * {@link DiskFloor}, the command or job writing to it is stopped, whole tree, before the disk is
 * full, and its result says why (its ending's cause is a {@link DiskFloorStop}). Nothing else
 * is killed for space. Free inodes are looked at in the same polls, from the same statvfs
 * ({@link InodeFloor}).
 *
 * <p><b>Free space</b> is polled with statvfs (a few microseconds), more often the nearer it is to
 * the floor: the next poll comes before a writer at {@link #FAST_WRITER_BYTES_PER_SECOND} could
 * eat half of what is left above it, so a writer at full speed is caught within one
 * {@link #SHORTEST_POLL} of the floor, plus the time to find and kill it.
 *
 * <p><b>The writer</b> is the tree that wrote the most since the writes were last counted, with
 * any other that wrote nearly as much ({@link #writers}). Counts come from {@code /proc/<pid>/io}
 * ({@link ProcIo}; a process's reaped children are in its counts) of each tree's processes:
 * {@code write_bytes} on a disk, since it counts only what reaches a filesystem's page cache (not
 * output to a pipe); {@code wchar} on tmpfs, which has no backing device and so counts nothing in
 * {@code write_bytes}. It does not matter who opened the file (a job's file written by a
 * command's process counts for the command): the process that calls write(2) is charged. While a
 * fast writer could reach the floor within two {@link #COUNT_EVERY}, counts are kept that fresh;
 * below the floor, the writers are looked for whenever free space has shrunk by {@link #SHRINK}
 * since the last count. A tree is blamed only when it wrote at least {@link #WRITER} since the
 * last count above the floor or the last stop (writes add up across looks). When none did,
 * what a command left running outside every tree is stopped ({@link DiskFloorStrays},
 * in the runner's container); when nothing did (the host filled the disk, or space went through
 * fallocate(2) or a memory mapping of a tmpfs file, which no counter shows) nothing is stopped,
 * and {@code write_file} and {@code edit_file} still refuse below the floor.
 */
public final class DiskFloorWatch implements AutoCloseable {

    /** The fastest a command is taken to write: tmpfs or a fast NVMe disk. */
    static final long FAST_WRITER_BYTES_PER_SECOND = 4L << 30;
    static final Duration LONGEST_POLL = Duration.ofSeconds(1);
    static final Duration SHORTEST_POLL = Duration.ofMillis(1);
    /**
     * Below the floor with no command or job running, the polls' pace: nothing of ours writes,
     * and a new command is seen within this.
     */
    static final Duration IDLE_SHORTEST_POLL = Duration.ofMillis(10);
    static final Duration COUNT_EVERY = Duration.ofMillis(250);
    static final long SHRINK = 1L << 20;
    static final long WRITER = SHRINK / 2;
    static final double ALONGSIDE = 0.25;

    /** A watched filesystem, by the first path given on it; {@code memory}: tmpfs (writes show in wchar only). */
    private record Filesystem(Path path, long floorBytes, boolean memory) {
    }

    /** What every live member of the running trees had written at one moment. */
    record Counts(long nanos, Set<ProcessTree> trees, Map<Long, Sample> written, Map<ProcessTree, List<Long>> members) {
    }

    /**
     * What one process had written, and when it started: below the floor the counts a look
     * compares with may be minutes old, and a pid in them may since be another process's.
     */
    record Sample(long startTicks, ProcIo io) {
    }

    /** Reads /proc/<pid>/stat and /proc/<pid>/io. */
    static final int BUFFER_BYTES = Math.max(ProcStat.BUFFER_BYTES, ProcIo.BUFFER_BYTES);

    private final List<Filesystem> filesystems;
    /** The running commands and jobs, by their trees, taken anew at each poll. */
    private final Supplier<Map<ProcessTree, RunningCommand>> trees;
    /**
     * What commands and jobs begin in: how many have begun (one may begin and end between two
     * looks), and whether one is starting or running (the start takes up to hundreds of
     * milliseconds, while the command runs).
     */
    private final IdleSweep sweep;
    /** Null: no process outside the trees is judged (outside the runner's container). */
    private final DiskFloorStrays strays;
    private final InodeFloor inodes;
    private final Thread thread;
    private volatile boolean closed;

    private DiskFloorWatch(List<Filesystem> filesystems, InodeFloor inodes, Supplier<Map<ProcessTree, RunningCommand>> trees,
            IdleSweep sweep, DiskFloorStrays strays) {
        this.filesystems = filesystems;
        this.inodes = inodes;
        this.trees = trees;
        this.sweep = sweep;
        this.strays = strays;
        if (filesystems.isEmpty()) {
            this.thread = null;
        } else {
            warmUp();
            this.thread = Thread.ofPlatform().name("disk-floor").daemon().start(this::watch);
        }
    }

    /**
     * Watches the filesystems of {@code paths} (one watch for paths on the same filesystem, under
     * the first one's name) while {@code commands} and {@code jobs}, which take part in the same
     * {@link IdleSweep}, run; with the floor off, watches nothing. {@code strays}: below the floor,
     * also stops what commands left running outside every tree ({@link DiskFloorStrays}; only in
     * the runner's container).
     */
    public static DiskFloorWatch start(DiskFloor floor, List<Path> paths, CommandRunner commands, JobManager jobs,
            boolean strays) throws IOException {
        return start(floor, paths, commands, jobs, strays ? new DiskFloorStrays(stat -> true) : null);
    }

    /** As above, {@code strays} null or judging the processes it is given. */
    static DiskFloorWatch start(DiskFloor floor, List<Path> paths, CommandRunner commands, JobManager jobs,
            DiskFloorStrays strays) throws IOException {
        return start(floor, paths, () -> {
            Map<ProcessTree, RunningCommand> running = new HashMap<>();
            commands.running().forEach(command -> running.put(command.tree(), command));
            jobs.running().forEach(job -> running.put(job.tree(), job));
            return running;
        }, commands.sweep(), strays);
    }

    private static DiskFloorWatch start(DiskFloor floor, List<Path> paths, Supplier<Map<ProcessTree, RunningCommand>> trees,
            IdleSweep sweep, DiskFloorStrays strays) throws IOException {
        List<Filesystem> filesystems = new ArrayList<>();
        List<String> types = new ArrayList<>();
        List<Long> totalBytes = new ArrayList<>();
        if (!floor.off()) {
            Set<Object> devices = new HashSet<>();
            for (Path path : paths) {
                if (devices.add(Files.getAttribute(path, "unix:dev"))) {
                    String type = Files.getFileStore(path).type();
                    long total = path.toFile().getTotalSpace();
                    types.add(type);
                    totalBytes.add(total);
                    filesystems.add(new Filesystem(path, floor.bytesFor(total), type.equals("tmpfs") || type.equals("ramfs")));
                }
            }
        }
        InodeFloor inodes = InodeFloor.of(floor, filesystems.stream().map(Filesystem::path).toList(), types, totalBytes);
        return new DiskFloorWatch(List.copyOf(filesystems), inodes, trees, sweep, strays);
    }

    private void watch() {
        long[] free = new long[filesystems.size()];
        // Each filesystem's one statvfs of this poll, for both floors; null where it failed.
        Statvfs.Reading[] readings = new Statvfs.Reading[free.length];
        Counts last = null;
        // The most free space seen since the last count: below the floor, a shrink is measured from it.
        long[] freeSinceCount = new long[free.length];
        while (!closed) {
            long headroom = Long.MAX_VALUE;
            int below = -1;
            for (int i = 0; i < free.length; i++) {
                Filesystem filesystem = filesystems.get(i);
                try {
                    readings[i] = Statvfs.read(filesystem.path());
                    free[i] = readings[i].usableBytes();
                } catch (IOException e) {
                    readings[i] = null;
                    free[i] = 0; // as File.getUsableSpace says when statvfs fails
                }
                freeSinceCount[i] = Math.max(freeSinceCount[i], free[i]);
                headroom = Math.min(headroom, free[i] - filesystem.floorBytes());
                if (below < 0 && free[i] < filesystem.floorBytes()) {
                    below = i;
                }
            }
            long begun = sweep.begun(); // before what runs: one may begin, and end, while it is read
            boolean busy = sweep.active() > 0;
            Map<ProcessTree, RunningCommand> running = trees.get();
            boolean countNow;
            if (running.isEmpty()) {
                last = null;
                countNow = false;
            } else if (below < 0) {
                // Counts are kept fresh while a fast writer could reach the floor within two periods.
                boolean reachable = headroom < FAST_WRITER_BYTES_PER_SECOND / 1000 * 2 * COUNT_EVERY.toMillis();
                countNow = reachable && (last == null || !last.trees().containsAll(running.keySet())
                        || System.nanoTime() - last.nanos() >= COUNT_EVERY.toNanos());
            } else {
                countNow = last == null || free[below] <= freeSinceCount[below] - SHRINK;
            }
            if (countNow) {
                try {
                    last = below < 0 ? count(running.keySet()) : stopTheWriter(last, running, filesystems.get(below), free[below]);
                } catch (RuntimeException e) {
                    System.err.println("sandbox-mcp runner: the disk floor's count failed: " + e);
                    last = null;
                }
                System.arraycopy(free, 0, freeSinceCount, 0, free.length);
            }
            Duration inodePace;
            try {
                inodePace = inodes.look(readings, running, busy, begun, strays);
            } catch (RuntimeException e) {
                System.err.println("sandbox-mcp runner: the inode floor's look failed: " + e);
                inodePace = SHORTEST_POLL;
            }
            try {
                Duration bytePace = pollAfter(headroom, below >= 0 && running.isEmpty() ? IDLE_SHORTEST_POLL : SHORTEST_POLL);
                Thread.sleep(bytePace.compareTo(inodePace) <= 0 ? bytePace : inodePace);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /**
     * Below the floor: stops the {@link #writers} since {@code last} and returns the counts the
     * next look compares with. Cheapest first, since the writer goes on while we look (and a
     * loaded machine makes a scan of all of /proc take up to a hundred milliseconds): the members
     * {@code last} saw, read again; then each tree's descendants; only when neither shows the
     * writer, /proc scanned for members that left their leader's line. After a kill, the counts it
     * was found in are the new ones, so the next look comes as soon. When nothing was stopped,
     * {@code last} stays what the next look compares with: writes add up from the last count
     * above the floor (or the last stop), so that several slow writers, none of which wrote
     * {@link #WRITER} while free space shrank by {@link #SHRINK}, are caught a few looks later.
     */
    private Counts stopTheWriter(Counts last, Map<ProcessTree, RunningCommand> running, Filesystem filesystem,
            long free) {
        DiskFloorStop stop = new DiskFloorStop(filesystem.path(), free, filesystem.floorBytes());
        Counts now = null;
        for (int step = last == null ? 1 : 0; step < 3; step++) {
            now = switch (step) {
                case 0 -> recount(last);
                case 1 -> count(running.keySet());
                default -> scan(running.keySet());
            };
            List<ProcessTree> writers = writers(last, now, filesystem.memory());
            if (!writers.isEmpty()) {
                for (ProcessTree writer : writers) {
                    RunningCommand command = running.get(writer); // null: it ended since last counted
                    if (command != null) {
                        command.killNow(stop, now.members().get(writer));
                    }
                }
                return now;
            }
        }
        if (strays != null) {
            for (DiskFloorStrays.Stopped stray : strays.stopAll(running.keySet(), filesystem.memory())) {
                // println: the log stream ends a line only there (LogLines)
                System.err.println(String.format("sandbox-mcp runner: %s had %d bytes free, below its %d-byte floor, and no "
                        + "running command or job wrote enough to be stopped: killed pid %d, left running by one outside its "
                        + "tree (it had written %d bytes)", filesystem.path(), free, filesystem.floorBytes(), stray.pid(),
                        stray.bytes()));
            }
        }
        return last == null ? now : last;
    }

    /**
     * Runs each step of a look once, on the runner's own process, so that the first real look
     * does not load and link its code while a writer goes on (tens of milliseconds, measured).
     */
    private static void warmUp() {
        long self = ProcessHandle.current().pid();
        ProcessTree runner = new ProcessTree(self, "SANDBOX_MCP_DISK_FLOOR_WARM_UP=1");
        Counts first = count(List.of(runner));
        writers(first, recount(first), true);
        writers(null, scan(List.of()), false);
        pollAfter(SHRINK, SHORTEST_POLL);
        ProcessHandle.of(self).ifPresent(ProcessHandle::isAlive);
    }

    /** The next poll comes before a fast writer could eat half of {@code headroom}. */
    static Duration pollAfter(long headroom, Duration shortest) {
        return pollAfter(headroom, FAST_WRITER_BYTES_PER_SECOND, shortest);
    }

    /** The next poll comes before something taking {@code perSecond} could take half of {@code headroom}. */
    static Duration pollAfter(long headroom, long perSecond, Duration shortest) {
        if (headroom <= 0) {
            return shortest;
        }
        double seconds = headroom / 2.0 / perSecond;
        long nanos = (long) Math.min(seconds * 1e9, LONGEST_POLL.toNanos());
        return nanos < shortest.toNanos() ? shortest : Duration.ofNanos(nanos);
    }

    /** Each running tree's leader and descendants ({@link ProcessTree#descendants}) and what each has written. */
    static Counts count(Collection<ProcessTree> running) {
        byte[] buffer = new byte[BUFFER_BYTES];
        Map<Long, Sample> written = new HashMap<>();
        Map<ProcessTree, List<Long>> members = new HashMap<>();
        for (ProcessTree tree : running) {
            for (long pid : tree.descendants()) {
                add(tree, pid, ProcStat.read(pid, buffer), buffer, written, members);
            }
        }
        return new Counts(System.nanoTime(), Set.copyOf(running), written, members);
    }

    /**
     * One scan of /proc: each running tree's live members, those that left the leader's line
     * too (a double fork, a new session with the tree's marker), and what each has written.
     */
    static Counts scan(Collection<ProcessTree> running) {
        byte[] buffer = new byte[BUFFER_BYTES];
        Map<Long, Sample> written = new HashMap<>();
        Map<ProcessTree, List<Long>> members = new HashMap<>();
        Environs environs = new Environs();
        IdleSweep.snapshot(buffer).forEach((pid, stat) -> {
            for (ProcessTree tree : running) {
                if (tree.owns(pid, stat, environs)) {
                    add(tree, pid, stat, buffer, written, members);
                    break;
                }
            }
        });
        return new Counts(System.nanoTime(), Set.copyOf(running), written, members);
    }

    /** {@code stat}: the process's, read just before (null: gone). */
    private static void add(ProcessTree tree, long pid, ProcStat stat, byte[] buffer, Map<Long, Sample> written,
            Map<ProcessTree, List<Long>> members) {
        ProcIo io = stat == null ? null : ProcIo.read(pid, buffer);
        if (io != null) {
            written.put(pid, new Sample(stat.startTicks(), io));
            members.computeIfAbsent(tree, t -> new ArrayList<>()).add(pid);
        }
    }

    /** The members {@code last} found, read again: those that still live, the same processes (their start unchanged). */
    static Counts recount(Counts last) {
        byte[] buffer = new byte[BUFFER_BYTES];
        Map<Long, Sample> written = new HashMap<>();
        Map<ProcessTree, List<Long>> members = new HashMap<>();
        last.members().forEach((tree, pids) -> pids.forEach(pid -> {
            ProcStat stat = ProcStat.read(pid, buffer);
            if (stat != null && stat.startTicks() == last.written().get(pid).startTicks()) {
                add(tree, pid, stat, buffer, written, members);
            }
        }));
        return new Counts(System.nanoTime(), last.trees(), written, members);
    }

    /**
     * The trees that wrote the most between {@code before} (null: since each process started) and
     * {@code now}, by the counter that sees writes to the filesystem: the largest writer, if it
     * wrote at least {@link #WRITER}, and any other that wrote at least {@link #ALONGSIDE} of
     * what it did (writers at full speed side by side, which one look must catch together: the
     * next may come late on a loaded machine). Empty when none wrote enough.
     */
    static List<ProcessTree> writers(Counts before, Counts now, boolean memory) {
        Map<ProcessTree, Long> written = new HashMap<>();
        long most = 0;
        for (Map.Entry<ProcessTree, List<Long>> tree : now.members().entrySet()) {
            ProcIo sum = ProcIo.NONE;
            for (long pid : tree.getValue()) {
                Sample current = now.written().get(pid);
                Sample earlier = before == null ? null : before.written().get(pid);
                boolean same = earlier != null && earlier.startTicks() == current.startTicks();
                sum = sum.plus(current.io().since(same ? earlier.io() : ProcIo.NONE));
            }
            long bytes = memory ? sum.wchar() : sum.writeBytes();
            written.put(tree.getKey(), bytes);
            most = Math.max(most, bytes);
        }
        List<ProcessTree> writers = new ArrayList<>();
        for (Map.Entry<ProcessTree, Long> tree : written.entrySet()) {
            if (tree.getValue() >= WRITER && tree.getValue() >= most * ALONGSIDE) {
                writers.add(tree.getKey());
            }
        }
        return writers;
    }

    /** Whether this watches anything (the floor is on). */
    public boolean watching() {
        return thread != null;
    }

    @Override
    public void close() {
        closed = true;
        if (thread != null) {
            thread.interrupt();
        }
    }
}
