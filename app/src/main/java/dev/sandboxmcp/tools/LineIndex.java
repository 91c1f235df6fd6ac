package dev.sandboxmcp.tools;

import java.util.Arrays;
import java.util.OptionalLong;

/**
 * Where some lines of one version of a file start: a checkpoint every {@code stride} lines
 * (lines 1, 1 + stride, 1 + 2 stride, ...), learnt by the scans that page through it, and its
 * line count once a scan has reached its end. Memory is bounded: when the checkpoints fill their
 * table, every other one is dropped and the stride doubles. Safe for concurrent pages.
 */
final class LineIndex {

    static final long FIRST_STRIDE = 1024;
    static final int MAX_CHECKPOINTS = 1 << 16;

    /** Line {@code line} starts {@code offset} bytes into the file. */
    record Position(long line, long offset) {
        static final Position START = new Position(1, 0);
    }

    private long stride;
    private final int maxCheckpoints;
    private long[] offsets = new long[64];
    private int count = 1; // offsets[0] = 0: line 1 starts the file
    private long totalLines = -1;

    LineIndex() {
        this(FIRST_STRIDE, MAX_CHECKPOINTS);
    }

    LineIndex(long stride, int maxCheckpoints) {
        this.stride = stride;
        this.maxCheckpoints = maxCheckpoints;
    }

    /** The last known line start at or before {@code line}. */
    synchronized Position floor(long line) {
        int k = (int) Math.min((Math.max(line, 1) - 1) / stride, count - 1);
        return new Position(k * stride + 1, offsets[k]);
    }

    /** The line whose start the index would learn next; a scan that passes it reports it with {@link #learn}. */
    synchronized long nextCheckpoint() {
        return count * stride + 1;
    }

    /** Records where {@code line} starts, if it is the next checkpoint; any other line is ignored. */
    synchronized void learn(long line, long offset) {
        if (line != count * stride + 1) {
            return;
        }
        if (count == maxCheckpoints) {
            for (int k = 0; k < count / 2; k++) {
                offsets[k] = offsets[2 * k];
            }
            count /= 2;
            stride *= 2;
            if (line != count * stride + 1) {
                return;
            }
        }
        if (count == offsets.length) {
            offsets = Arrays.copyOf(offsets, Math.min(maxCheckpoints, 2 * count));
        }
        offsets[count++] = offset;
    }

    synchronized void learnTotal(long lines) {
        totalLines = lines;
    }

    /** The file's line count, once a scan has reached its end. */
    synchronized OptionalLong totalLines() {
        return totalLines < 0 ? OptionalLong.empty() : OptionalLong.of(totalLines);
    }

    synchronized long stride() {
        return stride;
    }
}
