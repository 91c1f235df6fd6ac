package dev.sandboxmcp.tools;

import dev.sandboxmcp.tools.LineIndex.Position;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;

/**
 * Finds where a line starts by counting newline bytes, eight at a time, without decoding what it
 * skips; it also spots NUL bytes (binary files) on the way, and teaches a {@link LineIndex} the
 * checkpoints it passes. Reads stop at {@code size}, the size the file had when opened.
 */
final class LineSeeker {

    static final int BUFFER_BYTES = 256 * 1024;

    private static final long LOWS = 0x7F7F7F7F7F7F7F7FL;
    private static final long NEWLINES = 0x0A0A0A0A0A0A0A0AL;

    private LineSeeker() {
    }

    sealed interface Outcome permits Found, End, Binary {
    }

    /** The line starts at this position. */
    record Found(Position start) implements Outcome {
    }

    /** The file ends before the line: it has {@code lines} lines. */
    record End(long lines) implements Outcome {
    }

    /** A NUL byte was met. */
    record Binary() implements Outcome {
    }

    /**
     * Scans from {@code from} (a line start) for the start of line {@code target}; with
     * {@code target = Long.MAX_VALUE} it counts the file's lines. What it learns goes to {@code index}.
     */
    static Outcome seek(FileChannel file, long size, Position from, long target, LineIndex index) throws IOException {
        if (from.line() >= target) {
            return from.offset() < size ? new Found(from) : end(index, from.line() - 1);
        }
        ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        Cursor cursor = new Cursor(index, target, size, from.line());
        boolean endedByNewline = true; // a line start is preceded by a newline, or is the file's start
        long position = from.offset();
        while (position < size) {
            buffer.clear().limit((int) Math.min(BUFFER_BYTES, size - position));
            int read = readFully(file, buffer, position);
            if (read == 0) {
                // the file shrank: it ends here, for this call
                return new End(endedByNewline ? cursor.line - 1 : cursor.line);
            }
            int i = 0;
            for (; i + Long.BYTES <= read; i += Long.BYTES) {
                long word = buffer.getLong(i);
                if (bytesEqualToZero(word) != 0) {
                    return new Binary();
                }
                long newlines = bytesEqualToZero(word ^ NEWLINES);
                if (newlines == 0) {
                    continue;
                }
                if (cursor.line + Long.bitCount(newlines) < cursor.stop) {
                    cursor.line += Long.bitCount(newlines);
                    continue;
                }
                for (; newlines != 0; newlines &= newlines - 1) {
                    Outcome done = cursor.lineStartsAt(position + i + Long.numberOfTrailingZeros(newlines) / 8 + 1);
                    if (done != null) {
                        return done;
                    }
                }
            }
            for (; i < read; i++) {
                byte b = buffer.get(i);
                if (b == 0) {
                    return new Binary();
                }
                if (b == '\n') {
                    Outcome done = cursor.lineStartsAt(position + i + 1);
                    if (done != null) {
                        return done;
                    }
                }
            }
            endedByNewline = buffer.get(read - 1) == '\n';
            position += read;
        }
        return end(index, endedByNewline ? cursor.line - 1 : cursor.line);
    }

    /**
     * Where a scan is: the line it is in, and the next line it must stop at, whichever comes
     * first of the target and the index's next checkpoint (which it learns on the way).
     */
    private static final class Cursor {
        private final LineIndex index;
        private final long target;
        private final long size;
        long line;
        private long checkpoint;
        long stop;

        Cursor(LineIndex index, long target, long size, long line) {
            this.index = index;
            this.target = target;
            this.size = size;
            this.line = line;
            long next = index.nextCheckpoint();
            // A scan that starts past what the index knows has nothing to teach it.
            this.checkpoint = next < line ? Long.MAX_VALUE : next;
            this.stop = Math.min(target, checkpoint);
        }

        /** A newline was met and the next line starts at {@code start}: the outcome once the target is reached, else null. */
        Outcome lineStartsAt(long start) {
            line++;
            if (line == checkpoint) {
                index.learn(line, start);
                checkpoint = Math.max(index.nextCheckpoint(), line + 1);
                stop = Math.min(target, checkpoint);
            }
            if (line != target) {
                return null;
            }
            return start < size ? new Found(new Position(line, start)) : end(index, line - 1);
        }
    }

    private static End end(LineIndex index, long lines) {
        index.learnTotal(lines);
        return new End(lines);
    }

    /** A mask with the high bit set in each byte of {@code word} that is zero, and no other bit (exact, no carries). */
    private static long bytesEqualToZero(long word) {
        return ~(((word & LOWS) + LOWS) | word | LOWS);
    }

    /** Reads into the buffer's remaining space from {@code position}; fewer bytes only at the end of the file. */
    private static int readFully(FileChannel file, ByteBuffer buffer, long position) throws IOException {
        int total = 0;
        while (buffer.hasRemaining()) {
            int n = file.read(buffer, position + total);
            if (n < 0) {
                break;
            }
            total += n;
        }
        return total;
    }
}
