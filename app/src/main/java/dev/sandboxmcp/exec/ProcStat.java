package dev.sandboxmcp.exec;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.util.Arrays;

/**
 * The fields of {@code /proc/<pid>/stat} that {@link ProcessTree} and {@link IdleSweep} need,
 * parsed from bytes: a scan reads one of these per process on the machine for every command, so
 * it allocates no string and splits nothing.
 *
 * @param state      the one-letter state ({@code R}, {@code S}, {@code Z}...)
 * @param ppid       the parent's pid as the reader's PID namespace sees it: 0 for a parent outside
 *                   it (the namespace's init, and whatever {@code docker exec} entered), and 0 too
 *                   while a dead process is being released
 * @param session    the session id (0 as well while a dead process is being released)
 * @param startTicks when the process started, in clock ticks after boot
 * @param threads    how many threads its thread group has, as each thread's stat reads
 *                   ({@code /proc/<tid>/stat} reads though {@code /proc} lists only leaders);
 *                   1 proves the id read a thread group's leader
 */
record ProcStat(char state, long ppid, long session, long startTicks, long threads) {

    /** A single-threaded process: what the tests write out. */
    ProcStat(char state, long ppid, long session, long startTicks) {
        this(state, ppid, session, startTicks, 1);
    }

    /** Enough for any stat line: the command name in it is at most 64 bytes. */
    static final int BUFFER_BYTES = 1024;

    /** Positions after the command name: state is the first field, then ppid, pgrp, session. */
    private static final int PPID = 1;
    private static final int SESSION = 3;
    /** num_threads is field 20 of the line, the 17th after the command name; starttime is field 22. */
    private static final int THREADS = 17;
    private static final int STARTTIME = 19;

    /** What a scan of /proc does with each process it reads; false ends the scan. */
    interface Visitor {
        boolean visit(long pid, ProcStat stat);
    }

    /**
     * Reads the stat of every process in {@code /proc} in turn into {@code buffer} and gives it to
     * {@code visitor}, until it says stop; a process that ends while it is read is left out, and
     * an unreadable {@code /proc} has none.
     */
    static void eachProcess(byte[] buffer, Visitor visitor) {
        for (long pid : pids()) {
            ProcStat stat = read(pid, buffer);
            if (stat != null && !visitor.visit(pid, stat)) {
                return;
            }
        }
    }

    /** The pids {@code /proc} lists now; none when it cannot be read. */
    static long[] pids() {
        String[] names = new File("/proc").list();
        return names == null ? new long[0]
                : Arrays.stream(names).mapToLong(ProcStat::pidOf).filter(pid -> pid > 0).toArray();
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

    /** Reads the stat of {@code pid} into {@code buffer}; null when the process is gone or unreadable. */
    static ProcStat read(long pid, byte[] buffer) {
        int length = readInto(pid, "stat", buffer);
        return length < 0 ? null : parse(buffer, length);
    }

    /** Reads {@code /proc/<pid>/<file>} into {@code buffer}: its length, or -1 when the process is gone or unreadable. */
    static int readInto(long pid, String file, byte[] buffer) {
        try (FileInputStream in = new FileInputStream("/proc/" + pid + "/" + file)) {
            return in.readNBytes(buffer, 0, buffer.length);
        } catch (IOException gone) {
            return -1;
        }
    }

    /** Parses a stat line; the command name may hold spaces and parentheses, so fields start after the last ')'. */
    static ProcStat parse(byte[] line, int length) {
        int at = length - 1;
        while (at >= 0 && line[at] != ')') {
            at--;
        }
        at += 2; // ") "
        if (at <= 1 || at >= length) {
            return null;
        }
        char state = (char) line[at];
        long ppid = -1;
        long session = -1;
        long startTicks = -1;
        long threads = -1;
        int field = 0;
        for (int i = at; i < length && field <= STARTTIME; i++) {
            if (line[i] == ' ') {
                field++;
                if (field == PPID || field == SESSION || field == THREADS || field == STARTTIME) {
                    long value = 0;
                    int j = i + 1;
                    for (; j < length && line[j] >= '0' && line[j] <= '9'; j++) {
                        value = value * 10 + (line[j] - '0');
                    }
                    switch (field) {
                        case PPID -> ppid = value;
                        case SESSION -> session = value;
                        case THREADS -> threads = value;
                        default -> startTicks = value;
                    }
                }
            }
        }
        return ppid < 0 || session < 0 || threads < 0 || startTicks < 0 ? null
                : new ProcStat(state, ppid, session, startTicks, threads);
    }
}
