package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What commands orphan, reaped by the runner and counted to the command it came from.
 *
 * <p>A process whose parent exits is re-parented to the nearest child subreaper among its
 * ancestors, else to the init. Without {@link #adopt}, that is the container's init (or the
 * host's), which reaps it: the CPU, memory and writes of a daemon a command started, or of a
 * background process its shell never waited for, would be missing from the command's usage.
 * After {@link #adopt} the runner is that subreaper: such a process comes back to it when its
 * parent exits, and is reaped here, its usage added to the command whose session it is in, or
 * whose tree found it alive by its marker (one that started a session of its own).
 *
 * <p>Reaping here must not take an exit status that someone else waits for. The only children
 * this process waits for by pid are the shells it spawned ({@link SpawnedProcess}, registered as
 * owned from before they can exit until they are reaped); nothing in the runner starts a
 * {@code ProcessBuilder} child (only {@link SessionShell}'s fallback, where posix_spawn is
 * missing, and then nothing is adopted). Every other child is an orphan, reaped by one thread
 * that waits for any child to exit ({@code waitid(P_ALL, WNOWAIT)}), and by a command's end,
 * which reaps its tree's orphans before it counts its usage.
 */
public final class Orphans {

    private static final Logger LOG = LoggerFactory.getLogger(Orphans.class);
    private static final Object LOCK = new Object();
    /** The spawned shells not yet reaped, by pid: theirs to reap. Guarded by LOCK. */
    private static final Map<Long, SpawnedProcess> OWNED = new HashMap<>();
    private static final Set<Account> ACCOUNTS = ConcurrentHashMap.newKeySet();
    private static volatile boolean adopting;

    private Orphans() {
    }

    /**
     * Makes this process the subreaper of the commands it starts, and starts reaping their
     * orphans; false (and nothing changed, a warning logged) where processes are not started
     * through posix_spawn or the kernel refuses. For the runner only: once called, every child of
     * this process that it did not spawn through {@link SessionShell} is reaped by it.
     */
    public static synchronized boolean adopt() {
        if (adopting) {
            return true;
        }
        if (!PosixSpawn.available()) {
            return false;
        }
        try {
            PosixSpawn.becomeSubreaper();
        } catch (IOException e) {
            LOG.warn("commands' orphans go to the init, and their usage is not counted", e);
            return false;
        }
        adopting = true;
        Thread.ofPlatform().daemon().name("orphan-reaper").start(Orphans::reapAsTheyExit);
        return true;
    }

    /** Spawns a shell while no orphan can be reaped, so that none of the shells is taken for one. */
    static SpawnedProcess spawn(PosixSpawnCall call) throws IOException {
        synchronized (LOCK) {
            SpawnedProcess process = call.spawn();
            OWNED.put(process.pid(), process);
            LOCK.notifyAll();
            return process;
        }
    }

    /** A spawned shell has been reaped by its own waiter. */
    static void reaped(long pid) {
        synchronized (LOCK) {
            OWNED.remove(pid);
        }
    }

    /** Starts a shell's spawn; the process it returns is registered as owned before anything can reap it. */
    @FunctionalInterface
    interface PosixSpawnCall {
        SpawnedProcess spawn() throws IOException;
    }

    /** Where the usage of a command's orphans adds up while it runs. */
    static final class Account {
        private final ProcessTree tree;
        private Usage usage = Usage.NONE;

        private Account(ProcessTree tree) {
            this.tree = tree;
        }

        synchronized Usage usage() {
            return usage;
        }

        private synchronized void add(Usage more) {
            usage = usage.plus(more);
        }
    }

    /** Opens the account of a command that has just started, its orphans counted to it until {@link #close}. */
    static Account open(ProcessTree tree) {
        Account account = new Account(tree);
        ACCOUNTS.add(account);
        return account;
    }

    /** How many accounts are open: one per command that has started and not ended. */
    static int openAccounts() {
        return ACCOUNTS.size();
    }

    /**
     * The runner's orphans, alive or not ({@link #children}): where what an exited shell left
     * running went; null when the runner does not adopt them (then it went to the init, and may
     * be anywhere).
     */
    static List<Long> adopted() {
        return adopting ? children(ProcessHandle.current().pid()) : null;
    }

    /** Reaps every orphan there is now (the account's tree has been killed), then closes the account. */
    static Usage close(Account account) {
        reapAll();
        ACCOUNTS.remove(account);
        return account.usage();
    }

    private static void reapAll() {
        if (!adopting) {
            return;
        }
        long self = ProcessHandle.current().pid();
        byte[] buffer = new byte[ProcStat.BUFFER_BYTES];
        for (long pid : children(self)) {
            ProcStat stat = ProcStat.read(pid, buffer);
            if (stat != null && stat.ppid() == self && stat.state() == 'Z') {
                reapOrphan(pid, buffer);
            }
        }
    }

    /**
     * The children an orphan may be among: the kernel re-parents an orphan to the subreaper's
     * first live thread, the main one, whose {@code children} file lists them at the cost of
     * one read; every process in {@code /proc} where that file is missing (a kernel without
     * {@code CONFIG_PROC_CHILDREN}). The reaping thread catches any other.
     */
    private static List<Long> children(long self) {
        try {
            String listed = Files.readString(Path.of("/proc/self/task/" + self + "/children"), StandardCharsets.US_ASCII);
            return Arrays.stream(listed.trim().split(" +")).filter(pid -> !pid.isEmpty()).map(Long::valueOf).toList();
        } catch (IOException noSuchFile) {
            return Arrays.stream(ProcStat.pids()).boxed().toList();
        }
    }

    /** The one thread that reaps orphans as they exit. */
    private static void reapAsTheyExit() {
        byte[] buffer = new byte[ProcStat.BUFFER_BYTES];
        while (true) {
            try {
                long pid = PosixSpawn.awaitAnyExited();
                SpawnedProcess owned;
                synchronized (LOCK) {
                    if (pid < 0) {
                        LOCK.wait(1000); // no child at all: until the next spawn
                        continue;
                    }
                    owned = OWNED.get(pid);
                }
                if (owned != null) {
                    owned.waitFor(); // its own waiter reaps it at once
                } else {
                    reapOrphan(pid, buffer);
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                LOG.warn("reaping orphaned processes failed; trying again in a second", e);
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    /** Reaps {@code pid} if it is an exited child that nobody else waits for, counting its usage to its command. */
    private static void reapOrphan(long pid, byte[] buffer) {
        synchronized (LOCK) {
            if (OWNED.containsKey(pid)) {
                return;
            }
            ProcStat stat = ProcStat.read(pid, buffer); // a zombie keeps its session until it is reaped
            try {
                PosixSpawn.reapIfExited(pid).ifPresent(reaped -> ACCOUNTS.stream()
                        .filter(account -> stat != null && account.tree.claims(pid, stat.session()))
                        .findFirst()
                        .ifPresent(account -> account.add(reaped.usage())));
            } catch (IOException notOurs) {
                // no such child (already reaped): nothing to count
            }
        }
    }
}
