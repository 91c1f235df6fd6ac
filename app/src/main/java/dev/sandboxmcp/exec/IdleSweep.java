package dev.sandboxmcp.exec;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Kills everything a command left behind that escaped its tree's bookkeeping (a process that
 * both left the command's session and cleared its environment, {@code setsid env -i ...}), at
 * the only moment that can be done without knowing the process: when no command and no job is
 * running, every process of this user is left over but the runner itself (and the container's
 * init) and what was entered from outside the container. Only for the runner's own container,
 * where everything of that user is the runner's or an operator's; {@link #NONE} elsewhere (the jar
 * on a host shares its user with everything else).
 *
 * <p>Entered from outside: a process whose parent is outside the container's PID namespace has
 * parent pid 0 there; that is the init, and every process {@code docker exec} starts (an
 * operator's shell, Docker's health check). No command can make one: a process's parent is the
 * one that forked it, inside the namespace, and an orphan goes to the init (ppid 1) or, from a
 * command, to the runner ({@link Orphans}), never to a
 * process outside. So a process is spared when its chain of parents, as one snapshot of
 * {@code /proc} reads it, reaches a live ppid-0 process other than the init and the runner's own
 * root. What an operator's session leaves running after it ends is an orphan of the init, and
 * swept like the rest. A link that cannot be trusted counts as no link: a parent missing from the
 * snapshot, dead (a zombie, or being released, when the kernel shows ppid and session 0), or
 * started after its child (its pid was reused); and while anything entered from outside is
 * spared, a sweep ends only when two scans in a row find nothing alive to kill, so that a link
 * torn during one scan is read again. One way in
 * remains that this cannot see: a command that may ptrace a process of its own user (a host
 * without Yama's {@code ptrace_scope} 1) can make an operator's shell or a health check fork for
 * it, and that child is spared while its parent lives.
 *
 * <p>Commands and jobs {@link #begin()} and {@link #end()}; a sweep runs only while none is
 * active, and none can start until it is over.
 */
public final class IdleSweep {

    /** Never sweeps: outside the runner's container. */
    public static final IdleSweep NONE = new IdleSweep(false);

    private static final int ROUNDS = 20;
    private static final long INIT = 1;

    private final boolean enabled;
    private int active;

    /** {@code enabled}: sweeps when the last command or job ends; else only counts them. */
    IdleSweep(boolean enabled) {
        this.enabled = enabled;
    }

    /** Sweeps: only in the runner's own container. */
    public static IdleSweep everythingButTheRunner() {
        return new IdleSweep(true);
    }

    synchronized void begin() {
        active++;
    }

    /** How many commands and jobs have begun and not ended. */
    synchronized int active() {
        return active;
    }

    /** Ends a command or job; the last one to end sweeps. */
    synchronized void end() {
        active--;
        if (enabled && active == 0) {
            sweep();
        }
    }

    private static void sweep() {
        long self = ProcessHandle.current().pid();
        byte[] buffer = new byte[ProcStat.BUFFER_BYTES];
        boolean clean = false;
        for (int round = 0; round < ROUNDS; round++) {
            // A fork loop may add processes while we kill; a few rounds catch its children too.
            Map<Long, ProcStat> processes = snapshot(buffer);
            Set<Long> leftovers = leftovers(processes, self);
            leftovers.forEach(pid -> kill(pid, processes.get(pid), buffer));
            // Zombies are killed too (a process whose main thread exited shows as one while its
            // other threads run), but only live ones are worth another round.
            if (leftovers.stream().noneMatch(pid -> alive(processes.get(pid)))) {
                // One more scan at once: a process spared through a parent whose pid was reused
                // during a scan was reparented to the init before that reuse, and shows it now.
                if (clean || !sparesEntered(processes, leftovers, self)) {
                    return;
                }
                clean = true;
                continue;
            }
            clean = false;
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Every process in {@code /proc} now, by pid; one that ends while it is read is left out. */
    static Map<Long, ProcStat> snapshot(byte[] buffer) {
        Map<Long, ProcStat> processes = new HashMap<>();
        ProcStat.eachProcess(buffer, (pid, stat) -> {
            processes.put(pid, stat);
            return true;
        });
        return processes;
    }

    /**
     * What a sweep kills in {@code processes} (a snapshot of {@code /proc}): everything but the
     * init, the runner ({@code self}) and its ancestors, and what was entered from outside.
     */
    static Set<Long> leftovers(Map<Long, ProcStat> processes, long self) {
        Set<Long> runner = new HashSet<>();
        chain(processes, self, runner);
        Set<Long> leftovers = new HashSet<>();
        Set<Long> links = new HashSet<>();
        processes.forEach((pid, stat) -> {
            if (pid == INIT || runner.contains(pid)) {
                return;
            }
            links.clear();
            long root = chain(processes, pid, links);
            if (root <= 0 || root == INIT || runner.contains(root) || !alive(processes.get(root))
                    || processes.get(root).session() == 0) {
                leftovers.add(pid);
            }
        });
        return leftovers;
    }

    /** Whether the decision spared anything but the init and the runner: only then can a torn link have misled it. */
    private static boolean sparesEntered(Map<Long, ProcStat> processes, Set<Long> leftovers, long self) {
        Set<Long> runner = new HashSet<>();
        chain(processes, self, runner);
        return processes.keySet().stream().anyMatch(pid -> pid != INIT && !runner.contains(pid) && !leftovers.contains(pid));
    }

    /**
     * Follows the parents of {@code pid} in {@code processes}, adding each pid on the way to
     * {@code links}; returns the ppid-0 process it ends at, or -1 when a link cannot be trusted.
     */
    private static long chain(Map<Long, ProcStat> processes, long pid, Set<Long> links) {
        long at = pid;
        ProcStat stat = processes.get(at);
        while (stat != null && links.add(at)) {
            if (stat.ppid() == 0) {
                return at;
            }
            ProcStat parent = processes.get(stat.ppid());
            if (parent == null || !alive(parent) || parent.startTicks() > stat.startTicks()) {
                return -1;
            }
            at = stat.ppid();
            stat = parent;
        }
        return -1; // gone, or a loop that only a torn snapshot can show
    }

    private static boolean alive(ProcStat stat) {
        return stat != null && stat.state() != 'Z' && stat.state() != 'X';
    }

    /** Kills {@code pid} if it is still the process the snapshot saw ({@code seen}), not a reuse of its pid. */
    private static void kill(long pid, ProcStat seen, byte[] buffer) {
        ProcessHandle.of(pid).ifPresent(handle -> {
            // The handle keeps the start time it found, and destroying it checks that again.
            ProcStat now = ProcStat.read(pid, buffer);
            if (now != null && now.startTicks() == seen.startTicks()) {
                handle.destroyForcibly();
            }
        });
    }
}
