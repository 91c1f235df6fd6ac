package dev.sandboxmcp.tools;

import java.io.IOException;
import java.io.InputStream;

/**
 * Splits a byte stream into lines without holding one: it reads blocks of 64 KiB (a shorter
 * stream's length) and hands them out as runs, each a stretch of one line's bytes within the
 * current block (a line longer than a block comes as several runs). A caller keeps the runs it
 * wants and knows, for each, the line number and byte offsets, so memory stays bounded whatever
 * the line lengths.
 *
 * <p>A line ends after its {@code '\n'} (a {@code "\r\n"} ending stays in the bytes), or at the end
 * of the stream: a last line without a newline is ended by one extra, empty run.
 */
final class LineScanner {

    static final int BLOCK_BYTES = 64 * 1024;

    private final InputStream in;
    private final long streamEnd;
    private final byte[] block;
    private int filled;
    private long blockOffset;
    private int from;
    private int to;
    private long line;
    private long lineStart;
    private boolean endsLine;
    private boolean containsNul;
    private boolean ended;

    LineScanner(InputStream in) {
        this(in, LineIndex.Position.START, Long.MAX_VALUE);
    }

    /**
     * Scans a stream that begins at {@code start} (a line start) of a larger one, and ends at
     * {@code end} at the latest: offsets and line numbers are those of the larger stream.
     */
    LineScanner(InputStream in, LineIndex.Position start, long end) {
        this.in = in;
        this.streamEnd = end;
        this.line = start.line();
        this.lineStart = start.offset();
        this.blockOffset = start.offset();
        this.block = new byte[(int) Math.min(BLOCK_BYTES, Math.max(0, end - start.offset()))];
    }

    /** Moves to the next run; false at the end of the stream. */
    boolean next() throws IOException {
        if (endsLine) {
            line++;
            lineStart = end();
            endsLine = false;
        }
        if (to == filled) {
            if (ended) {
                return false;
            }
            blockOffset += filled;
            from = 0;
            to = 0;
            filled = in.readNBytes(block, 0, (int) Math.min(BLOCK_BYTES, streamEnd - blockOffset));
            if (filled == 0) {
                ended = true;
                containsNul = false;
                endsLine = blockOffset > lineStart;
                return endsLine;
            }
        }
        from = to;
        containsNul = false;
        int i = from;
        while (i < filled) {
            byte b = block[i++];
            if (b == '\n') {
                endsLine = true;
                break;
            }
            if (b == 0) {
                containsNul = true;
            }
        }
        to = i;
        return true;
    }

    /** The block that holds the current run, valid until the next call of {@link #next}. */
    byte[] block() {
        return block;
    }

    /** Where the current run starts in {@link #block}. */
    int from() {
        return from;
    }

    /** Where the current run ends (exclusive) in {@link #block}. */
    int to() {
        return to;
    }

    /** The 1-based number of the line the current run belongs to. */
    long line() {
        return line;
    }

    /** Byte offset in the stream where the current run's line starts. */
    long lineStart() {
        return lineStart;
    }

    /** Byte offset in the stream just past the current run. */
    long end() {
        return blockOffset + to;
    }

    boolean startsLine() {
        return blockOffset + from == lineStart;
    }

    /** Whether the run ends its line: it ends with '\n', or it is the empty run after an unterminated last line. */
    boolean endsLine() {
        return endsLine;
    }

    boolean containsNul() {
        return containsNul;
    }

    /** Lines in the stream; complete once {@link #next} has returned false. */
    long lines() {
        return endsLine ? line : line - 1;
    }
}
