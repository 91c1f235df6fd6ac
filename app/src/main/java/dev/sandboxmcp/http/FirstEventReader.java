package dev.sandboxmcp.http;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.CharBuffer;
import java.util.function.Consumer;

/**
 * A response whose writer passes everything on and reads, in the first characters written, the
 * value that follows a marker: on an event stream, what its first event names (the SDK's endpoint
 * event holds the session's id, which the SDK makes and tells no one else).
 */
final class FirstEventReader extends HttpServletResponseWrapper {

    /** How much of the stream is looked at: the SDK's endpoint event is its first, about 100 characters. */
    private static final int LOOKED_AT = 4096;

    private final String marker;
    private final int length;
    private final Consumer<String> found;
    private StringBuilder seen = new StringBuilder();
    private PrintWriter writer;
    private String value;
    private volatile boolean looking = true;

    /**
     * {@code length}: how many characters after {@code marker} make the value; {@code found} is
     * given it as soon as it is whole, before those characters go on to the client.
     */
    FirstEventReader(HttpServletResponse response, String marker, int length, Consumer<String> found) {
        super(response);
        this.marker = marker;
        this.length = length;
        this.found = found;
    }

    /** The value, once written within the first characters; null before that, or if it never was. */
    synchronized String value() {
        return value;
    }

    @Override
    public synchronized PrintWriter getWriter() throws IOException {
        if (writer == null) {
            PrintWriter original = super.getWriter();
            writer = new PrintWriter(new Writer() {
                @Override
                public void write(char[] chars, int offset, int count) {
                    look(CharBuffer.wrap(chars), offset, count);
                    original.write(chars, offset, count);
                }

                @Override
                public void write(String text, int offset, int count) {
                    look(text, offset, count);
                    original.write(text, offset, count);
                }

                @Override
                public void flush() {
                    original.flush();
                }

                @Override
                public void close() {
                    original.close();
                }
            }) {
                // The container's writer keeps its own errors (a client gone): whoever asks this one is told.
                @Override
                public boolean checkError() {
                    return super.checkError() | original.checkError();
                }
            };
        }
        return writer;
    }

    private void look(CharSequence text, int offset, int count) {
        if (!looking) {
            return;
        }
        synchronized (this) {
            seen.append(text, offset, offset + Math.min(count, LOOKED_AT - seen.length()));
            int at = seen.indexOf(marker);
            if (at >= 0 && seen.length() >= at + marker.length() + length) {
                value = seen.substring(at + marker.length(), at + marker.length() + length);
                found.accept(value);
            }
            looking = value == null && seen.length() < LOOKED_AT;
            if (!looking) {
                seen = null; // kept for the stream's life otherwise
            }
        }
    }
}
