package dev.sandboxmcp.http;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;

/**
 * Servlet streams over bytes a filter holds in memory (a body read ahead, an error body held
 * back): always ready, so they are read and written blocking only; asking for a listener fails.
 */
final class MemoryStreams {

    private MemoryStreams() {
    }

    /** A stream reading {@code bytes} from their start. */
    static ServletInputStream reading(byte[] bytes) {
        return new Reading(new ByteArrayInputStream(bytes));
    }

    /** A stream writing into {@code sink}. */
    static ServletOutputStream writingTo(ByteArrayOutputStream sink) {
        return new Writing(sink);
    }

    private static final class Reading extends ServletInputStream {
        private final ByteArrayInputStream in;

        Reading(ByteArrayInputStream in) {
            this.in = in;
        }

        @Override
        public boolean isFinished() {
            return in.available() == 0;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setReadListener(ReadListener listener) {
            throw new UnsupportedOperationException("the body is already buffered");
        }

        @Override
        public int read() {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return in.read(b, off, len);
        }
    }

    private static final class Writing extends ServletOutputStream {
        private final ByteArrayOutputStream sink;

        Writing(ByteArrayOutputStream sink) {
            this.sink = sink;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {
            throw new UnsupportedOperationException("error bodies are written at once");
        }

        @Override
        public void write(int b) {
            sink.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            sink.write(b, off, len);
        }
    }
}
