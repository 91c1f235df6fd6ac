package dev.sandboxmcp.runner;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/** Reads the channel's lines, holding at most {@code maxBytes} of one (its newline not counted). */
final class Lines {

    /** A line that broke the framing: too long, or cut by the end of the stream. */
    static final class FrameException extends IOException {
        FrameException(String message) {
            super(message);
        }
    }

    private final InputStream in;
    private volatile int maxBytes;
    private final byte[] buffer = new byte[65536];
    private int position;
    private int limit;
    private byte[] line = new byte[8192];
    private int length;

    Lines(InputStream in, int maxBytes) {
        this.in = in;
        this.maxBytes = maxBytes;
    }

    /** Holds at most {@code maxBytes} of a line from the next line on; bytes already read ahead are kept. */
    void limit(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** Reads the next line; false at the end of the stream before any byte of one. */
    boolean next() throws IOException {
        length = 0;
        if (line.length > 1 << 20) {
            line = new byte[8192]; // a big line's buffer is not kept for the small ones after it
        }
        while (true) {
            if (position == limit) {
                limit = in.read(buffer);
                position = 0;
                if (limit < 0) {
                    limit = 0;
                    if (length == 0) {
                        return false;
                    }
                    throw new FrameException("the line ended without a newline");
                }
            }
            int end = position;
            while (end < limit && buffer[end] != '\n') {
                end++;
            }
            int chunk = end - position;
            if (length + chunk > maxBytes) {
                throw new FrameException("a line longer than " + maxBytes + " bytes");
            }
            if (length + chunk > line.length) {
                line = Arrays.copyOf(line, (int) Math.min(maxBytes, Math.max(2L * line.length, length + chunk)));
            }
            System.arraycopy(buffer, position, line, length, chunk);
            length += chunk;
            boolean complete = end < limit;
            position = complete ? end + 1 : end;
            if (complete) {
                return true;
            }
        }
    }

    byte[] bytes() {
        return line;
    }

    int length() {
        return length;
    }
}
