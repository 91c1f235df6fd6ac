package dev.sandboxmcp.exec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Below the disk floor, when no running command or job wrote enough to be blamed: the processes
 * a command left running outside every tree (a new session and a cleared environment, {@code
 * setsid env -i ...}). The idle sweep kills such a process once nothing runs; while a job runs it
 * could write on, to a full disk. Only where the idle sweep sweeps (the runner's container,
 * {@link IdleSweep#leftovers}: neither the runner nor what {@code docker exec} entered):
 * elsewhere the user's other processes are not the runner's to judge.
 *
 * <p>Every such process is killed, not only one that wrote: what a stray writes through children
 * that exit at once is counted nowhere it could be judged (an orphan's counts go to whoever reaps
 * it: the runner), and the idle sweep would kill them all anyway. A process that may be a
 * command's own (its environment unreadable or empty, in the middle of an exec) is left alone;
 * the kill is {@link IdleSweep#killJudged}'s, as the idle sweep's.
 */
final class DiskFloorStrays {

    /** A stray stopped: its pid and what it had written (by the counter of the filesystem below its floor). */
    record Stopped(long pid, long bytes) {
    }

    private final Predicate<ProcStat> scope;

    /** {@code scope}: which processes may be judged (the runner's: all of them; the tests': their own). */
    DiskFloorStrays(Predicate<ProcStat> scope) {
        this.scope = scope;
    }

    /** Kills every process a command left outside all of {@code running}. */
    List<Stopped> stopAll(Collection<ProcessTree> running, boolean memory) {
        byte[] buffer = new byte[DiskFloorWatch.BUFFER_BYTES];
        Map<Long, ProcStat> processes = IdleSweep.snapshot(buffer);
        Environs environs = new Environs();
        List<Stopped> stopped = new ArrayList<>();
        for (long pid : IdleSweep.leftovers(processes, ProcessHandle.current().pid())) {
            ProcStat stat = processes.get(pid);
            if (!scope.test(stat) || !running.stream().allMatch(tree -> tree.disowns(pid, stat, environs))) {
                continue;
            }
            ProcIo io = ProcIo.read(pid, buffer);
            if (IdleSweep.killJudged(pid, stat, buffer)) {
                stopped.add(new Stopped(pid, io == null ? 0 : memory ? io.wchar() : io.writeBytes()));
            }
        }
        return stopped;
    }
}
