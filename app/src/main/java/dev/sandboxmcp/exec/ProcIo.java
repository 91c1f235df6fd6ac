package dev.sandboxmcp.exec;

/**
 * What {@code /proc/<pid>/io} says a process has written, its reaped children included (the
 * kernel adds a child's counts to its parent's when the parent reaps it).
 *
 * @param wchar      bytes handed to write(2) and its kin, wherever they went: files on any
 *                   filesystem, but also pipes, sockets and terminals
 * @param writeBytes bytes the process dirtied in the page cache of a filesystem with a backing
 *                   device (a disk): a write to tmpfs, which has none, does not count here
 */
record ProcIo(long wchar, long writeBytes) {

    static final ProcIo NONE = new ProcIo(0, 0);

    /** Seven short lines of a name and a number. */
    static final int BUFFER_BYTES = 512;

    /** Reads the counts of {@code pid} into {@code buffer}; null when the process is gone or unreadable. */
    static ProcIo read(long pid, byte[] buffer) {
        int length = ProcStat.readInto(pid, "io", buffer);
        return length < 0 ? null : parse(buffer, length);
    }

    /** Parses the lines {@code name: number}; null when either count is missing. */
    static ProcIo parse(byte[] text, int length) {
        long wchar = -1;
        long writeBytes = -1;
        int line = 0;
        while (line < length) {
            int colon = line;
            while (colon < length && text[colon] != ':' && text[colon] != '\n') {
                colon++;
            }
            int at = colon + 1;
            while (at < length && text[at] == ' ') {
                at++;
            }
            long value = 0;
            int end = at;
            for (; end < length && text[end] >= '0' && text[end] <= '9'; end++) {
                value = value * 10 + (text[end] - '0');
            }
            if (colon < length && text[colon] == ':' && end > at) {
                if (is(text, line, colon, "wchar")) {
                    wchar = value;
                } else if (is(text, line, colon, "write_bytes")) {
                    writeBytes = value;
                }
            }
            while (end < length && text[end] != '\n') {
                end++;
            }
            line = end + 1;
        }
        return wchar < 0 || writeBytes < 0 ? null : new ProcIo(wchar, writeBytes);
    }

    private static boolean is(byte[] text, int from, int to, String name) {
        if (to - from != name.length()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (text[from + i] != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** What was written between {@code before} and this, never less than nothing. */
    ProcIo since(ProcIo before) {
        return new ProcIo(Math.max(0, wchar - before.wchar), Math.max(0, writeBytes - before.writeBytes));
    }

    ProcIo plus(ProcIo other) {
        return new ProcIo(wchar + other.wchar, writeBytes + other.writeBytes);
    }
}
