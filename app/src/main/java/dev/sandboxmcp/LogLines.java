package dev.sandboxmcp;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The process's log stream (standard error, where slf4j-simple writes), which keeps one log
 * record on one line whatever a value in it holds: a request id, a cancel reason, a runner's
 * protocol error, an exception's message. Inside every piece of text printed, a line break,
 * any other control character, U+2028 and U+2029, and half of a surrogate pair are written as
 * escapes ({@code \n}, {@code \\u2028}), so no value a client or the runner sent can end a line
 * and start one of its own, such as a forged audit line in {@code docker logs}. Only the line
 * ends that {@code println} adds remain. Escaping here, at the one place every log line passes,
 * rather than at each logging call, covers the calls written tomorrow too; bytes written as bytes
 * are escaped as well ({@link #write(byte[], int, int)}), so no writer gets around it.
 *
 * <p>And no line is longer than {@link #MAX_LINE_BYTES}: past it, the rest of the line is dropped
 * and the line ends saying how many bytes were cut. A value a client sent (the method of a
 * notification the SDK has no handler for, which it logs whole) could otherwise make a line of
 * megabytes: Docker's json-file driver splits a line at 16 KiB, and a fragment of a client's
 * choosing, whitespace around a JSON object, read alone is a forged audit line; a few such lines
 * also rotate every earlier audit line out of the log. A line within the bound is never split.
 */
final class LogLines extends PrintStream {

    /**
     * The longest line, in bytes, its line end not counted: a few KiB, enough for any record the
     * server writes, and with the note of what was cut well within the 16 KiB at which Docker
     * splits a line.
     */
    static final int MAX_LINE_BYTES = 8192;

    /** Set while {@link #println()} writes its line end. Guarded by this. */
    private boolean lineEnd;
    /** Bytes written of the current line, and bytes of it dropped past {@link #MAX_LINE_BYTES}. Guarded by this. */
    private long lineBytes;
    private long cutBytes;

    LogLines(OutputStream out) {
        super(out, true, StandardCharsets.UTF_8);
    }

    /** Every print of text ends here, {@code println(String)} and {@code println(Object)} too. */
    @Override
    public void print(String text) {
        super.print(escaped(String.valueOf(text)));
    }

    @Override
    public void print(Object value) {
        print(String.valueOf(value));
    }

    @Override
    public void print(char[] text) {
        print(new String(text));
    }

    @Override
    public void print(char c) {
        print(String.valueOf(c));
    }

    /** Only {@code println} ends a line: each ends here, where the line end is let through. */
    @Override
    public void println() {
        synchronized (this) {
            lineEnd = true;
            try {
                super.println();
            } finally {
                lineEnd = false;
            }
        }
    }

    @Override
    public void println(String text) {
        synchronized (this) {
            print(text);
            println();
        }
    }

    @Override
    public void println(Object value) {
        println(String.valueOf(value));
    }

    @Override
    public void println(char[] text) {
        println(new String(text));
    }

    @Override
    public void println(char c) {
        println(String.valueOf(c));
    }

    @Override
    public void println(boolean b) {
        println(String.valueOf(b));
    }

    @Override
    public void println(int i) {
        println(String.valueOf(i));
    }

    @Override
    public void println(long l) {
        println(String.valueOf(l));
    }

    @Override
    public void println(float f) {
        println(String.valueOf(f));
    }

    @Override
    public void println(double d) {
        println(String.valueOf(d));
    }

    /**
     * Bytes written as bytes, by whatever holds this stream as an {@code OutputStream} (a
     * java.util.logging handler, say), and what the prints above come down to: every ASCII control
     * byte is escaped but a tab, the line end {@code println} adds, and a line feed that ends a
     * longer write (a handler's record; a lone one, a byte at a time, is escaped). Bytes of
     * multi-byte characters pass as they are.
     */
    @Override
    public synchronized void write(byte[] buffer, int offset, int length) {
        ByteArrayOutputStream out = null;
        int end = offset + length;
        for (int i = offset; i < end; i++) {
            int b = buffer[i] & 0xff;
            boolean endsLine = b == '\n' && i == end - 1 && (length > 1 || lineEnd);
            String escape = b >= 0x80 || endsLine ? null : escape((char) b);
            if (escape != null && out == null) {
                out = new ByteArrayOutputStream(length + 16);
                out.write(buffer, offset, i - offset);
            }
            if (out != null) {
                if (escape != null) {
                    out.writeBytes(escape.getBytes(StandardCharsets.US_ASCII));
                } else {
                    out.write(b);
                }
            }
        }
        if (out == null) {
            cutToTheLine(buffer, offset, length);
        } else {
            cutToTheLine(out.toByteArray(), 0, out.size());
        }
    }

    /**
     * Writes escaped bytes (where a line feed is a line end), dropping what a line holds past
     * {@link #MAX_LINE_BYTES}: a character begun within the bound is kept whole, and a line that
     * was cut ends with how many bytes were.
     */
    private void cutToTheLine(byte[] bytes, int offset, int length) {
        int end = offset + length;
        int kept = offset; // the bytes from here to i are written, unless the line is cut before
        for (int i = offset; i < end; i++) {
            byte b = bytes[i];
            if (b == '\n') {
                if (cutBytes > 0) {
                    byte[] note = (" [line cut: " + cutBytes + " more bytes]").getBytes(StandardCharsets.US_ASCII);
                    super.write(note, 0, note.length);
                }
                lineBytes = 0;
                cutBytes = 0;
            } else if (cutBytes == 0 && (lineBytes < MAX_LINE_BYTES
                    || (b & 0xC0) == 0x80 && lineBytes < MAX_LINE_BYTES + 3)) {
                lineBytes++;
            } else {
                if (cutBytes == 0) {
                    super.write(bytes, kept, i - kept);
                }
                cutBytes++;
                kept = i + 1;
            }
        }
        super.write(bytes, kept, end - kept);
    }

    @Override
    public void write(int b) {
        write(new byte[] {(byte) b}, 0, 1);
    }

    /** {@code text} with what could break or fake a line escaped; the same string when nothing needs it. */
    static String escaped(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1));
            if (paired) {
                if (out != null) {
                    out.append(c).append(text.charAt(i + 1));
                }
                i++;
                continue;
            }
            String escape = escape(c);
            if (escape != null && out == null) {
                out = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (out != null) {
                out.append(escape != null ? escape : String.valueOf(c));
            }
        }
        return out == null ? text : out.toString();
    }

    private static String escape(char c) {
        return switch (c) {
            case '\n' -> "\\n";
            case '\r' -> "\\r";
            case '\t' -> null;
            default -> c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029' || Character.isSurrogate(c)
                    ? "\\u%04x".formatted((int) c) : null;
        };
    }
}
