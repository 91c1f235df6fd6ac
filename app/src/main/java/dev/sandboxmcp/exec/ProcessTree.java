package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds and kills every process that belongs to one command, by reading {@code /proc}.
 *
 * <p>A command runs as the leader of its own session (started through {@code setsid}), and
 * carries a marker in its environment. A process belongs to the command when it is in that
 * session, or when its environment holds the marker: that catches background children,
 * double-forked daemons that were re-parented to init, and children that started a session of
 * their own. A process that both leaves the session and clears its environment (or makes it
 * unreadable, no longer dumpable) escapes this bookkeeping; the container's pids limit still
 * bounds it, and the idle sweep ends it once no command runs.
 */
final class ProcessTree {

    private static final Path PROC = Path.of("/proc");
    /** How long processes that show no environment (in the middle of an exec) are looked at again, a millisecond apart. */
    private static final Duration EXEC_WAIT = Duration.ofMillis(10);

    private final long sessionId;
    private final byte[] marker;
    private final long leaderStartTicks;
    /** Members found by their marker outside the session: orphans of theirs are the command's too. */
    private final Set<Long> strays = ConcurrentHashMap.newKeySet();

    ProcessTree(long sessionId, String markerEntry) {
        this.sessionId = sessionId;
        this.marker = (markerEntry + "\0").getBytes(StandardCharsets.UTF_8);
        // Nothing started before the command can belong to it: only younger processes are
        // worth reading the environment of, which keeps a scan of a busy /proc cheap.
        ProcStat leader = ProcStat.read(sessionId, new byte[ProcStat.BUFFER_BYTES]);
        this.leaderStartTicks = leader == null ? 0 : leader.startTicks();
    }

    /**
     * Sends SIGTERM to every member, waits up to {@code grace} for them to go, then SIGKILLs
     * whatever is left, repeating until no live member remains (a fork loop gets a few rounds).
     */
    void terminate(Duration grace) {
        Set<Long> members = liveMembers();
        if (members.isEmpty()) {
            return;
        }
        members.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy));
        long deadline = System.nanoTime() + grace.toNanos();
        while (System.nanoTime() < deadline && !liveMembers().isEmpty()) {
            sleep(Duration.ofMillis(20));
        }
        for (int round = 0; round < 50; round++) {
            members = liveMembers();
            if (members.isEmpty()) {
                return;
            }
            members.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            sleep(Duration.ofMillis(10));
        }
    }

    /**
     * Members that are still running (zombies are already dead and only wait to be reaped). An
     * orphan the runner adopted that shows no environment is most likely in the middle of an exec
     * (a daemon exec'ing its program as its command ends). When the scan finds no member, those
     * are looked at again until they can be told, or {@link #terminate} would stop there and miss
     * them; when it finds some, the next scan of {@link #terminate} looks. A process caught in
     * an exec whose parent is not the runner is left to the late sweeps.
     */
    Set<Long> liveMembers() {
        Set<Long> members = new HashSet<>();
        List<Long> untold = new ArrayList<>();
        long self = ProcessHandle.current().pid();
        Environs environs = new Environs();
        ProcStat.eachProcess(new byte[ProcStat.BUFFER_BYTES], (pid, stat) -> {
            Membership seen = pid == self ? Membership.OTHER : membership(pid, stat, environs);
            if (seen == Membership.MEMBER) {
                members.add(pid);
            } else if (seen == Membership.UNKNOWN && stat.ppid() == self) {
                untold.add(pid);
            }
            return true;
        });
        if (members.isEmpty()) {
            members.addAll(lookAgain(untold, environs));
        }
        return members;
    }

    /** Those of {@code trees} with a live member, found in one scan of /proc for all of them. */
    static Set<ProcessTree> withLiveMembers(Set<ProcessTree> trees) {
        Set<ProcessTree> alive = Collections.newSetFromMap(new IdentityHashMap<>());
        if (trees.isEmpty()) {
            return alive;
        }
        long self = ProcessHandle.current().pid();
        Environs environs = new Environs();
        ProcStat.eachProcess(new byte[ProcStat.BUFFER_BYTES], (pid, stat) -> {
            if (pid != self) {
                for (ProcessTree tree : trees) {
                    if (!alive.contains(tree) && tree.owns(pid, stat, environs)) {
                        alive.add(tree);
                    }
                }
            }
            return alive.size() < trees.size();
        });
        return alive;
    }

    /**
     * The leader and its descendants, followed down {@code /proc/<pid>/task/<tid>/children}: a
     * few reads, against a scan of all of /proc, but blind to what left the leader's line (an
     * orphan goes to the subreaper, the runner); empty once the leader is gone.
     */
    List<Long> descendants() {
        return descendantsOf(List.of(sessionId));
    }

    /**
     * Whether a live member may be among {@code roots} and their descendants: one is, or one
     * cannot be told. A process outside the session whose environment shows nothing is looked at
     * again for a few milliseconds, since that is what one shows in the middle of an exec (a
     * setsid'd daemon exec'ing its program as the shell exits); one that still shows nothing
     * counts as a member. Once the shell has exited, whatever the command left running is there
     * when {@code roots} are the runner's orphans (it adopts them, {@link Orphans#adopted()}): a
     * few reads, against a read of every process in /proc.
     */
    boolean mayHaveMembersAmong(List<Long> roots) {
        byte[] buffer = new byte[ProcStat.BUFFER_BYTES];
        Environs environs = new Environs();
        List<Long> untold = new ArrayList<>();
        for (long pid : descendantsOf(roots)) {
            Membership seen = membership(pid, ProcStat.read(pid, buffer), environs);
            if (seen == Membership.MEMBER) {
                return true;
            } else if (seen == Membership.UNKNOWN) {
                untold.add(pid);
            }
        }
        return !lookAgain(untold, environs).isEmpty() || !untold.isEmpty();
    }

    /**
     * Looks at the processes in {@code untold} again, all together, a millisecond apart, for
     * {@link #EXEC_WAIT} however many there are: the members found; {@code untold} keeps those
     * that still cannot be told.
     */
    private Set<Long> lookAgain(List<Long> untold, Environs environs) {
        Set<Long> members = new HashSet<>();
        byte[] buffer = new byte[ProcStat.BUFFER_BYTES];
        long deadline = System.nanoTime() + EXEC_WAIT.toNanos();
        while (!untold.isEmpty() && System.nanoTime() < deadline) {
            sleep(Duration.ofMillis(1));
            untold.removeIf(pid -> {
                ProcStat stat = ProcStat.read(pid, buffer); // before the environment: a pid reused meanwhile shows its own
                environs.readAgain(pid);
                Membership seen = membership(pid, stat, environs);
                if (seen == Membership.MEMBER) {
                    members.add(pid);
                }
                return seen != Membership.UNKNOWN;
            });
        }
        return members;
    }

    private static List<Long> descendantsOf(List<Long> roots) {
        List<Long> found = new ArrayList<>();
        ArrayDeque<Long> next = new ArrayDeque<>(roots);
        while (!next.isEmpty() && found.size() < 4096) {
            long pid = next.poll();
            String[] tasks = PROC.resolve(Long.toString(pid)).resolve("task").toFile().list();
            if (tasks == null) {
                continue; // gone
            }
            found.add(pid);
            for (String task : tasks) {
                try {
                    for (String child : Files.readString(PROC.resolve(pid + "/task/" + task + "/children")).split(" ")) {
                        long childPid = ProcStat.pidOf(child.strip());
                        if (childPid > 0) {
                            next.add(childPid);
                        }
                    }
                } catch (IOException gone) {
                    // the thread or the process ended meanwhile
                }
            }
        }
        return found;
    }

    /** Whether {@code pid}, whose stat is {@code stat} (null when unreadable), is a live member. */
    boolean owns(long pid, ProcStat stat, Environs environs) {
        return membership(pid, stat, environs) == Membership.MEMBER;
    }

    /** Whether {@code pid} is surely not a live member: not in the session, and without the marker in its environment. */
    boolean disowns(long pid, ProcStat stat, Environs environs) {
        return membership(pid, stat, environs) == Membership.OTHER;
    }

    /** What one read of a process tells: a live member, not one, or (its environment empty or unreadable) unknown. */
    private enum Membership { MEMBER, OTHER, UNKNOWN }

    private Membership membership(long pid, ProcStat stat, Environs environs) {
        if (stat == null || stat.state() == 'Z' || stat.state() == 'X') {
            return Membership.OTHER;
        }
        if (stat.session() == sessionId) {
            return Membership.MEMBER;
        }
        if (stat.startTicks() < leaderStartTicks) {
            return Membership.OTHER;
        }
        byte[] environ = environs.of(pid);
        if (environ == null || environ.length == 0) {
            return Membership.UNKNOWN;
        }
        if (hasMarker(environ)) {
            strays.add(pid);
            return Membership.MEMBER;
        }
        return Membership.OTHER;
    }

    /**
     * Whether an exited process ({@code pid}, in {@code session}) was one of the command's: in its
     * session, or found alive by its marker outside it (a zombie's environment is gone).
     */
    boolean claims(long pid, long session) {
        return session == sessionId || strays.contains(pid);
    }

    private boolean hasMarker(byte[] environ) {
        outer:
        for (int start = 0; start + marker.length <= environ.length; start++) {
            if (start > 0 && environ[start - 1] != 0) {
                continue;
            }
            for (int i = 0; i < marker.length; i++) {
                if (environ[start + i] != marker[i]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
