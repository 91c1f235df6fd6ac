package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
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
        String[] leader = statFields(PROC.resolve(Long.toString(sessionId)));
        this.leaderStartTicks = leader == null ? 0 : Long.parseLong(leader[STARTTIME]);
    }

    /** Index of starttime (field 22 of /proc/pid/stat) in the fields after the command name. */
    private static final int STARTTIME = 22 - 3;

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
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC, ProcessTree::isPidDirectory)) {
            for (Path entry : entries) {
                long pid = Long.parseLong(entry.getFileName().toString());
                if (pid != ProcessHandle.current().pid() && belongs(entry)) {
                    members.add(pid);
                }
            }
        } catch (IOException e) {
            // /proc unreadable: nothing we can find, nothing we can kill
        }
        return members;
    }

    private boolean belongs(Path procEntry) {
        String[] fields = statFields(procEntry);
        if (fields == null) {
            return false;
        }
        String state = fields[0];
        if (state.equals("Z") || state.equals("X")) {
            return false;
        }
        if (Long.parseLong(fields[3]) == sessionId) {
            return true;
        }
        return Long.parseLong(fields[STARTTIME]) >= leaderStartTicks && environmentHasMarker(procEntry);
    }

    /** The fields of /proc/pid/stat after the command name (which may contain spaces), or null. */
    private static String[] statFields(Path procEntry) {
        try {
            String stat = Files.readString(procEntry.resolve("stat"), StandardCharsets.ISO_8859_1);
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        } catch (IOException | RuntimeException gone) {
            return null;
        }
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

    private static boolean isPidDirectory(Path entry) {
        String name = entry.getFileName().toString();
        return !name.isEmpty() && name.chars().allMatch(Character::isDigit);
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
