package dev.sandboxmcp.exec;

import java.nio.charset.StandardCharsets;

/**
 * The combined output of a job: the last {@code capacity} bytes, addressed by absolute offsets
 * since the job started, so a reader can page through it and learn what was dropped.
 */
final class OutputLog {

    private final byte[] ring;
    private long total;

    OutputLog(int capacity) {
        this.ring = new byte[capacity];
    }

    synchronized void append(byte[] bytes, int length) {
        for (int i = 0; i < length; i++) {
            ring[(int) ((total + i) % ring.length)] = bytes[i];
        }
        total += length;
    }

    synchronized long total() {
        return total;
    }

    /** Up to {@code max} bytes from {@code offset} (clamped to what is retained), ending on a character boundary. */
    synchronized OutputPage read(long offset, int max) {
        long firstRetained = Math.max(0, total - ring.length);
        long start = Math.min(Math.max(offset, firstRetained), total);
        long end = Math.min(total, start + max);
        byte[] bytes = new byte[(int) (end - start)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = ring[(int) ((start + i) % ring.length)];
        }
        int usable = end < total ? completeUtf8Prefix(bytes) : bytes.length;
        String text = new String(bytes, 0, usable, StandardCharsets.UTF_8);
        return new OutputPage(text, start, start + usable, total, Math.max(0, start - Math.max(0, offset)));
    }

    /** Length of the longest prefix that does not end inside a multi-byte UTF-8 sequence. */
    private static int completeUtf8Prefix(byte[] bytes) {
        int n = bytes.length;
        for (int back = 1; back <= Math.min(3, n); back++) {
            int b = bytes[n - back] & 0xff;
            if ((b & 0xC0) == 0x80) {
                continue; // continuation byte: keep looking for the lead
            }
            int needed = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
            return needed > back ? n - back : n;
        }
        return n;
    }
}
