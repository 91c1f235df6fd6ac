package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * Finds and kills every process that belongs to one command, by reading {@code /proc}.
 *
 * <p>A command runs as the leader of its own session (started through {@code setsid}), and
 * carries a marker in its environment. A process belongs to the command when it is in that
 * session, or when its environment holds the marker: that catches background children,
 * double-forked daemons that were re-parented to init, and children that started a session of
 * their own. A process that both leaves the session and clears its environment escapes this
 * bookkeeping; the container's pids limit still bounds it.
 */
final class ProcessTree {

    private static final Path PROC = Path.of("/proc");

    private final long sessionId;
    private final byte[] marker;
    private final long leaderStartTicks;

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

    /** Members that are still running (zombies are already dead and only wait to be reaped). */
    Set<Long> liveMembers() {
        Set<Long> members = new HashSet<>();
        String[] names = PROC.toFile().list();
        if (names == null) {
            return members; // /proc unreadable: nothing we can find, nothing we can kill
        }
        long self = ProcessHandle.current().pid();
        byte[] buffer = new byte[ProcStat.BUFFER_BYTES];
        for (String name : names) {
            long pid = pidOf(name);
            if (pid > 0 && pid != self && belongs(pid, buffer)) {
                members.add(pid);
            }
        }
        return members;
    }

    private boolean belongs(long pid, byte[] buffer) {
        ProcStat stat = ProcStat.read(pid, buffer);
        if (stat == null || stat.state() == 'Z' || stat.state() == 'X') {
            return false;
        }
        return stat.session() == sessionId
                || stat.startTicks() >= leaderStartTicks && environmentHasMarker(PROC.resolve(Long.toString(pid)));
    }

    /** The number a /proc entry is named by, or -1 for the entries that are not processes. */
    static long pidOf(String name) {
        if (name.isEmpty() || name.length() > 18) {
            return -1;
        }
        long pid = 0;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            pid = pid * 10 + (c - '0');
        }
        return pid;
    }

    private boolean environmentHasMarker(Path procEntry) {
        byte[] environ;
        try {
            environ = Files.readAllBytes(procEntry.resolve("environ"));
        } catch (IOException unreadable) {
            return false;
        }
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
