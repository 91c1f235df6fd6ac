package dev.sandboxmcp.exec;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The output of one stream (or of a job's combined stdout and stderr), addressed by absolute byte
 * offsets since the process started, so a reader can page through it by offset and learn what
 * was dropped. It keeps the first {@code headBytes} and the last {@code capacity} bytes; what lies
 * between is counted, not kept. Memory grows with the output, up to those bounds.
 */
public final class OutputLog {

    private final int headBytes;
    private final int capacity;
    private byte[] head = new byte[0];
    private byte[] ring = new byte[0];
    private long total;
    private long newlines;

    /** A log of the last {@code capacity} bytes. */
    OutputLog(int capacity) {
        this(0, capacity);
    }

    OutputLog(int headBytes, int capacity) {
        this.headBytes = headBytes;
        this.capacity = capacity;
    }

    synchronized void append(byte[] bytes, int length) {
        for (int i = 0; i < length; i++) {
            if (bytes[i] == '\n') {
                newlines++;
            }
        }
        if (total < headBytes) {
            int n = (int) Math.min(length, headBytes - total);
            head = grown(head, (int) total + n, headBytes);
            System.arraycopy(bytes, 0, head, (int) total, n);
        }
        ring = grown(ring, (int) Math.min(capacity, total + length), capacity);
        int skip = Math.max(0, length - capacity); // only the last capacity bytes of a huge write can stay
        for (int i = skip; i < length; i++) {
            ring[(int) ((total + i) % capacity)] = bytes[i];
        }
        total += length;
    }

    /** The array, at least {@code needed} long (at most {@code bound}), doubled as it grows. */
    private static byte[] grown(byte[] array, int needed, int bound) {
        if (needed <= array.length) {
            return array;
        }
        return Arrays.copyOf(array, Math.min(bound, Math.max(needed, Math.max(8192, 2 * array.length))));
    }

    /** Bytes written in all, kept or not. */
    public synchronized long totalBytes() {
        return total;
    }

    /** Newline characters written in all. */
    public synchronized long newlines() {
        return newlines;
    }

    /** Where the kept tail starts: bytes from {@code min(headBytes, total)} up to here are gone. */
    synchronized long tailStart() {
        return Math.max(Math.min(headBytes, total), total - capacity);
    }

    /** Bytes written but no longer kept (between the head and the tail). */
    public synchronized long droppedBytes() {
        return tailStart() - Math.min(headBytes, total);
    }

    /** Whether some of the output is no longer kept. */
    public boolean truncated() {
        return droppedBytes() > 0;
    }

    /** Everything kept, decoded (invalid UTF-8 becomes U+FFFD); the whole output when nothing was dropped. */
    public synchronized String text() {
        return TextCut.decode(bytes(0, total));
    }

    /**
     * The bytes of {@code [from, to)} that are kept, clamped to what was written; a range that
     * reaches into the dropped middle gets only its kept parts.
     */
    public synchronized byte[] bytes(long from, long to) {
        long start = Math.max(0, from);
        long end = Math.min(total, to);
        if (end <= start) {
            return new byte[0];
        }
        long headEnd = Math.min(headBytes, total);
        long tailStart = tailStart();
        byte[] out = new byte[(int) (end - start)];
        int n = 0;
        for (long p = start; p < end; p++) {
            if (p < headEnd) {
                out[n++] = head[(int) p];
            } else if (p >= tailStart) {
                out[n++] = ring[(int) (p % capacity)];
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /**
     * The bytes from {@code offset} whose text is at most {@code max} bytes as JSON escapes it
     * ({@link EscapedSize}), ending on a character boundary. An offset in the dropped middle moves
     * to the first kept byte after it and the page says how many bytes were skipped.
     */
    public synchronized OutputPage read(long offset, int max) {
        long from = Math.min(Math.max(offset, 0), total);
        long headEnd = Math.min(headBytes, total);
        long tailStart = tailStart();
        long start = from >= headEnd && from < tailStart ? tailStart : from;
        long end = Math.min(total, start + max);
        boolean beforeGap = start < headEnd && tailStart > headEnd && end >= headEnd;
        if (beforeGap) {
            end = headEnd; // a page never spans the gap
        }
        byte[] bytes = bytes(start, end);
        // Before the gap or at the end no byte follows: a character cut off there is shown as U+FFFD, not waited for.
        int usable = EscapedSize.fitDecoded(bytes, bytes.length, max, end == total || beforeGap);
        String text = new String(bytes, 0, usable, StandardCharsets.UTF_8);
        return new OutputPage(text, start, start + usable, total, start - from);
    }
}
