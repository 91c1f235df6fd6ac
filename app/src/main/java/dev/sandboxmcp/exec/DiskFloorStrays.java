package dev.sandboxmcp.exec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Below the disk floor, when no running command or job wrote enough to be blamed: the processes
 * a command left running outside every tree (a new session and a cleared environment, {@code
 * setsid env -i ...}) that write. The idle sweep kills such a process once nothing runs; while a
 * job runs it would write on, to a full disk. Only where the idle sweep sweeps (the runner's
 * container, {@link IdleSweep#leftovers}: neither the runner nor what {@code docker exec}
 * entered): elsewhere the user's other processes are not the runner's to judge.
 *
 * <p>A stray is judged by what it wrote since it was first seen below the floor: at least {@link
 * DiskFloorWatch#WRITER}, by the counter that sees writes to the filesystem (as for trees). The
 * first look below the floor only notes what each had written; so a stray writing at full speed
 * gets one more look's worth past the floor than a tree would.
 */
final class DiskFloorStrays {

    /** A process, by pid and start time (a pid is reused). */
    private record Seen(long pid, long startTicks) {
    }

    /** A stray stopped: its pid and what it wrote since first seen below the floor. */
    record Stopped(long pid, long bytes) {
    }

    private final Predicate<ProcStat> scope;
    /** What each stray had written when first seen below the floor; emptied above it. */
    private final Map<Seen, ProcIo> firstSeen = new HashMap<>();

    /** {@code scope}: which processes may be judged (the runner's: all of them; the tests': their own). */
    DiskFloorStrays(Predicate<ProcStat> scope) {
        this.scope = scope;
    }

    /** Above the floor again: what strays write is counted afresh the next time it is crossed. */
    void reset() {
        if (!firstSeen.isEmpty()) {
            firstSeen.clear();
        }
    }

    /** Kills each stray that wrote at least {@link DiskFloorWatch#WRITER} since first seen below the floor. */
    List<Stopped> stopWriters(Collection<ProcessTree> running, boolean memory) {
        byte[] buffer = new byte[Math.max(ProcStat.BUFFER_BYTES, ProcIo.BUFFER_BYTES)];
        Map<Long, ProcStat> processes = IdleSweep.snapshot(buffer);
        Environs environs = new Environs();
        Map<Seen, ProcIo> seenNow = new HashMap<>();
        List<Stopped> stopped = new ArrayList<>();
        for (long pid : IdleSweep.leftovers(processes, ProcessHandle.current().pid())) {
            ProcStat stat = processes.get(pid);
            if (!scope.test(stat) || running.stream().anyMatch(tree -> tree.owns(pid, stat, environs))) {
                continue;
            }
            ProcIo io = ProcIo.read(pid, buffer);
            if (io == null) {
                continue;
            }
            Seen seen = new Seen(pid, stat.startTicks());
            seenNow.put(seen, io);
            ProcIo first = firstSeen.get(seen);
            if (first == null) {
                continue;
            }
            ProcIo since = io.since(first);
            long bytes = memory ? since.wchar() : since.writeBytes();
            if (bytes >= DiskFloorWatch.WRITER && kill(seen, buffer)) {
                stopped.add(new Stopped(pid, bytes));
            }
        }
        firstSeen.keySet().retainAll(seenNow.keySet());
        seenNow.forEach(firstSeen::putIfAbsent);
        return stopped;
    }

    /**
     * SIGKILL to the process seen, if its pid is still its own: the handle notes the start time
     * it finds, and the stat read after it must show the one seen; a pid reused after that is
     * refused by the handle.
     */
    private static boolean kill(Seen seen, byte[] buffer) {
        Optional<ProcessHandle> handle = ProcessHandle.of(seen.pid());
        ProcStat now = ProcStat.read(seen.pid(), buffer);
        return handle.isPresent() && now != null && now.startTicks() == seen.startTicks() && handle.get().destroyForcibly();
    }
}
