package dev.sandboxmcp.http;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import java.io.ByteArrayOutputStream;

/** A servlet stream into bytes held in memory (an error body held back): written blocking only. */
final class MemoryStreams {

    private MemoryStreams() {
    }

    /** A stream writing into {@code sink}. */
    static ServletOutputStream writingTo(ByteArrayOutputStream sink) {
        return new Writing(sink);
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
