package dev.sandboxmcp.exec;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.FileInputStream;
import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * process outside. So a process is spared when its chain of parents, as one scan of
 * {@code /proc} reads it, reaches a live ppid-0 process other than the init and the runner's own
 * root. What an operator's session leaves running after it ends is an orphan of the init, and
 * swept like the rest. A link that cannot be trusted counts as no link: a parent missing from the
 * snapshot, dead (a zombie, or being released, when the kernel shows ppid and session 0), or
 * started after its child (its pid was reused); and while anything entered from outside is
 * spared, a sweep ends only when two scans in a row prove nothing alive is left, so that a link
 * torn during one scan is read again.
 *
 * <p>A fork chain (each generation forks the next and exits at once) lives a fork's time per pid,
 * less than a scan: a scan looks at the newest pid first (never judging a thread by its own
 * id: {@link Scan}) and kills each leftover as soon as it is judged, and a sweep goes on until a scan during which no pid was handed out finds nothing
 * alive to kill ({@link #sweep(long, Predicate)}). Processes of other users are never killed:
 * the runner has no capabilities, and the kernel refuses them. One way in
 * remains that this cannot see: a command that may ptrace a process of its own user (a host
 * without Yama's {@code ptrace_scope} 1) can make an operator's shell or a health check fork for
 * it, and that child is spared while its parent lives.
 *
 * <p>Commands and jobs {@link #begin()} and {@link #end()}; a sweep runs only while none is
 * active, and none can start until it is over. A sweep cut short by its budget is followed by
 * up to {@link #RETRIES} more, 1, 2, 4... s apart, while none is active.
 */
public final class IdleSweep {

    /** Never sweeps: outside the runner's container. */
    public static final IdleSweep NONE = new IdleSweep(false);

    /** How long a sweep may go on killing; a leftover that does not die (uninterruptible sleep) is left to the next. */
    private static final Duration BUDGET = Duration.ofSeconds(1);
    private static final int QUIET_SCANS = 3;
    private static final Duration QUIET = Duration.ofMillis(50);
    private static final Duration PAUSE = Duration.ofMillis(5);
    private static final Logger LOG = LoggerFactory.getLogger(IdleSweep.class);
    private static final long INIT = 1;
    private static final int SIGKILL = 9;
    /** libc's {@code kill(2)}: {@link ProcessHandle} would read the process's stat twice more before signalling it. */
    private static final MethodHandle KILL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("kill").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));

    /** How long after a sweep cut short the next one comes, while nothing runs; doubled each time. */
    private static final Duration RETRY = Duration.ofSeconds(1);
    /** How many sweeps in a row a sweep cut short brings, at most: a leftover that never dies does not keep the runner busy. */
    static final int RETRIES = 5;

    /** Null: never sweeps. */
    private final Supplier<Outcome> sweeper;
    private final Duration retry;
    private int active;
    /** How many commands and jobs have begun so far: the disk floor tells by it that one ran between two looks. */
    private long begun;
    /** Counts sweeps: a sweep scheduled after a sweep cut short is dropped when another came first. */
    private long sweeps;

    /** {@code enabled}: sweeps when the last command or job ends; else only counts them. */
    IdleSweep(boolean enabled) {
        this(enabled ? IdleSweep::sweepAllButTheRunner : null, RETRY);
    }

    /** {@code sweeper}: one sweep (the tests' stands in for it); {@code retry}: see {@link #RETRY}. */
    IdleSweep(Supplier<Outcome> sweeper, Duration retry) {
        this.sweeper = sweeper;
        this.retry = retry;
    }

    /** Sweeps: only in the runner's own container. */
    public static IdleSweep everythingButTheRunner() {
        return new IdleSweep(true);
    }

    /** Whether it sweeps: only in the runner's own container, where all of its user's processes are the runner's. */
    public boolean sweeps() {
        return sweeper != null;
    }

    /** Begins a command or job, before its spawn. */
    synchronized void begin() {
        active++;
        begun++;
    }

    /** Begins the health probe: no sweep runs while it does, but it is no command or job ({@link #begun}). */
    synchronized void beginProbe() {
        active++;
    }

    /** How many commands and jobs have begun and not ended, the health probe included. */
    synchronized int active() {
        return active;
    }

    /** How many commands and jobs have begun so far. */
    synchronized long begun() {
        return begun;
    }

    /** Ends a command or job; the last one to end sweeps. */
    synchronized void end() {
        active--;
        if (sweeper != null && active == 0) {
            sweep(0);
        }
    }

    /**
     * Sweeps, the {@code retries}-th time in a row; when cut short (a fork chain the load kept it
     * from catching), sweeps again later unless a command or job has begun or another sweep came
     * meanwhile. Called holding this lock.
     */
    private void sweep(int retries) {
        long sweep = ++sweeps;
        if (sweeper.get() != Outcome.CUT_SHORT) {
            return;
        }
        if (retries >= RETRIES) {
            LOG.warn("{} idle sweeps in a row ran out of their {} budget: what they left alive lives until the next command ends",
                    retries + 1, BUDGET);
            return;
        }
        Duration after = retry.multipliedBy(1L << retries);
        LOG.info("The idle sweep ran out of its {} budget: sweeping again in {}", BUDGET, after);
        Thread.ofVirtual().name("idle-sweep-again").start(() -> {
            try {
                Thread.sleep(after);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (this) {
                if (active == 0 && sweeps == sweep) {
                    sweep(retries + 1);
                }
            }
        });
    }

    private static Outcome sweepAllButTheRunner() {
        return sweep(ProcessHandle.current().pid(), stat -> true);
    }

    /** How a sweep ended. */
    enum Outcome {
        /** A scan proved that nothing it may kill is left alive. */
        CLEAN,
        /**
         * Pids kept being handed out while something was spared (an operator's build), or the
         * kernel does not tell them: it ended after scans that found nothing alive to kill.
         */
        QUIET,
        /** Its budget ran out, or it was interrupted: a leftover may live on. */
        CUT_SHORT
    }

    /**
     * Scans until a scan proves nothing is left: it killed nothing alive and no pid was handed out
     * while it ran, so every process alive at its end was listed at its start (and, while
     * something is spared, the scan before was such a scan too). While pids are handed out and
     * nothing spared can be forking them, a leftover is, however seldom a scan sees it alive (a
     * fork chain): the scans go on back to back. Forks by what is spared (an operator's build), or
     * a kernel that does not tell, end it after {@link #QUIET_SCANS} scans in a row that kill
     * nothing alive, spread over {@link #QUIET}. At most {@link #BUDGET}. {@code scope}: what it
     * may kill (the tests'; the runner's is everything).
     */
    static Outcome sweep(long self, Predicate<ProcStat> scope) {
        byte[] buffer = new byte[ProcStat.BUFFER_BYTES];
        long start = System.nanoTime();
        long quietSince = 0;
        int quiet = 0;
        boolean proved = false;
        while (System.nanoTime() - start < BUDGET.toNanos()) {
            long lastPid = lastPid(buffer);
            Scan scan = new Scan(self, scope, buffer);
            scan.run(lastPid);
            boolean forked = lastPid < 0 || lastPid(buffer) != lastPid;
            if (!scan.killedAlive && !forked) {
                // A link torn during the scan (a parent that died after its child was read) may
                // have spared something: the next scan reads it again.
                if (proved || !scan.spared) {
                    return Outcome.CLEAN;
                }
                proved = true;
                quiet = 0;
                continue;
            }
            proved = false;
            if (scan.killedAlive || !(scan.spared || lastPid < 0)) {
                quiet = 0;
                if (forked) {
                    continue; // the sooner a fork chain's newest pid is read, the likelier the kill lands
                }
            } else if (quiet++ == 0) {
                quietSince = System.nanoTime();
            } else if (quiet >= QUIET_SCANS && System.nanoTime() - quietSince >= QUIET.toNanos()) {
                return Outcome.QUIET;
            }
            try {
                Thread.sleep(PAUSE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Outcome.CUT_SHORT;
            }
        }
        return Outcome.CUT_SHORT;
    }

    /**
     * One look at every process, newest pid first. Each is judged and, if left over, killed as soon
     * as its stat and its parents' are read, not after the whole scan: a generation of a fork chain
     * lives about as long as a fork takes, well under a scan of {@code /proc}.
     *
     * <p>The last id handed out, which {@code /proc}'s listing does not give, is as often a
     * thread's: {@code /proc/<tid>/stat} reads though {@code /proc} lists no thread, a thread's
     * stat names its process's parent, and {@code kill(2)} on a thread's id kills its whole
     * process. The runner's own threads would be judged left over (their parent is the init) and
     * the runner killed. So that id is judged only when its stat shows a thread group of one
     * thread, which is then its leader (no status file to read on the way to the kill); a process
     * of more threads is judged through its leader's pid, which the listing gives.
     */
    static final class Scan {
        private final Map<Long, ProcStat> read = new HashMap<>();
        private final Set<Long> runner = new HashSet<>();
        private final Set<Long> links = new HashSet<>();
        private final Predicate<ProcStat> scope;
        private final byte[] buffer;
        /** Whether it signalled a leftover that was alive when read. */
        boolean killedAlive;
        /** Whether it judged anything in scope but the init and the runner not a leftover. */
        boolean spared;

        /** {@code self}: the runner's pid; it and its ancestors are never judged. */
        Scan(long self, Predicate<ProcStat> scope, byte[] buffer) {
            this.scope = scope;
            this.buffer = buffer;
            chain(this::stat, self, runner);
        }

        /** {@code newest}: the last pid handed out, looked at before {@code /proc} is listed; -1 if unknown. */
        void run(long newest) {
            if (newest > 0) {
                visit(newest, false);
            }
            long[] pids = ProcStat.pids();
            Arrays.sort(pids);
            // Newest first: pids are handed out in a cycle, so down from the last one, then down from the top.
            int next = Arrays.binarySearch(pids, newest + 1);
            int below = next >= 0 ? next : -next - 1;
            for (int i = 0; i < pids.length; i++) {
                long pid = pids[Math.floorMod(below - 1 - i, pids.length)];
                if (pid != newest) {
                    visit(pid, true);
                }
            }
        }

        private void visit(long id, boolean listed) {
            if (victim(id, listed) && killJudged(id, read.get(id), buffer) && alive(read.get(id))) {
                killedAlive = true;
            }
        }

        /**
         * Whether {@code id} is a leftover to kill: neither the init nor the runner or one of
         * its ancestors, in scope, left over, and, unless {@code listed} (given by {@code /proc}'s
         * listing, which names only thread group leaders), a process of one thread.
         */
        boolean victim(long id, boolean listed) {
            if (id == INIT || runner.contains(id)) {
                return false;
            }
            ProcStat stat = stat(id);
            if (stat == null || !listed && stat.threads() != 1 || !scope.test(stat)) {
                return false;
            }
            links.clear();
            if (!leftover(this::stat, id, runner, links)) {
                spared = true;
                return false;
            }
            return true;
        }

        /** The stat of {@code pid} as this scan first read it; null when it was gone. */
        private ProcStat stat(long pid) {
            ProcStat stat = read.get(pid);
            if (stat == null && !read.containsKey(pid)) {
                stat = ProcStat.read(pid, buffer);
                read.put(pid, stat);
            }
            return stat;
        }

    }

    /**
     * SIGKILL to {@code pid} if, read again microseconds before, it is still the process {@code
     * judged} (null: none): a stat kept from earlier (a parent read while judging its child, a
     * snapshot) may be a whole scan old, and its pid reused since; a pid is reused only after the
     * whole pid space has been handed out. A process entered from outside (ppid 0: {@code docker
     * exec}'s runc init, before its setsid) is never signalled, though its children may be judged
     * through it: no command can make one. Whether it was sent; the kernel refuses a process of
     * another user (EPERM), which is neither killed nor waited for.
     */
    static boolean killJudged(long pid, ProcStat judged, byte[] buffer) {
        ProcStat now = ProcStat.read(pid, buffer);
        if (judged == null || now == null || now.startTicks() != judged.startTicks() || now.ppid() == 0) {
            return false;
        }
        try {
            return (int) KILL.invokeExact((int) pid, SIGKILL) == 0;
        } catch (Throwable impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** The last pid handed out in this PID namespace; -1 when it cannot be read. */
    private static long lastPid(byte[] buffer) {
        try (FileInputStream in = new FileInputStream("/proc/sys/kernel/ns_last_pid")) {
            int length = in.readNBytes(buffer, 0, buffer.length);
            long pid = -1;
            for (int i = 0; i < length && buffer[i] >= '0' && buffer[i] <= '9'; i++) {
                pid = Math.max(pid, 0) * 10 + (buffer[i] - '0');
            }
            return pid;
        } catch (IOException unreadable) {
            return -1;
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
        chain(processes::get, self, runner);
        Set<Long> leftovers = new HashSet<>();
        Set<Long> links = new HashSet<>();
        processes.keySet().forEach(pid -> {
            links.clear();
            if (pid != INIT && !runner.contains(pid) && leftover(processes::get, pid, runner, links)) {
                leftovers.add(pid);
            }
        });
        return leftovers;
    }

    /** Whether {@code pid}, neither the init nor in {@code runner}, is a leftover: its chain of parents spares it not. */
    private static boolean leftover(LongFunction<ProcStat> processes, long pid, Set<Long> runner, Set<Long> links) {
        long root = chain(processes, pid, links);
        return root <= 0 || root == INIT || runner.contains(root) || !alive(processes.apply(root))
                || processes.apply(root).session() == 0;
    }

    /**
     * Follows the parents of {@code pid} in {@code processes}, adding each pid on the way to
     * {@code links}; returns the ppid-0 process it ends at, or -1 when a link cannot be trusted.
     */
    private static long chain(LongFunction<ProcStat> processes, long pid, Set<Long> links) {
        long at = pid;
        ProcStat stat = processes.apply(at);
        while (stat != null && links.add(at)) {
            if (stat.ppid() == 0) {
                return at;
            }
            ProcStat parent = processes.apply(stat.ppid());
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
}
