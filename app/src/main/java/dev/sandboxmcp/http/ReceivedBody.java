package dev.sandboxmcp.http;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A request whose body has arrived, held in the chunks it was read in (never one array sized
 * from what the client declared), with the {@link RequestBodyBudget.Charge} it holds. The filters
 * read it with {@link #open}; the transport reads it once through {@link #getInputStream}, which
 * lets go of each chunk as it is read, so the body is not held twice while the SDK copies it.
 */
final class ReceivedBody extends HttpServletRequestWrapper {

    private final List<byte[]> chunks;
    private final long length;
    private final RequestBodyBudget.Charge charge;
    private boolean handedOver;

    ReceivedBody(HttpServletRequest request, List<byte[]> chunks, RequestBodyBudget.Charge charge) {
        super(request);
        this.chunks = new ArrayList<>(chunks);
        this.length = chunks.stream().mapToLong(c -> c.length).sum();
        this.charge = charge;
    }

    /** The body of a request {@link BodySizeFilter} has read; it must have passed through that filter. */
    static ReceivedBody of(ServletRequest request) {
        if (request instanceof ReceivedBody body) {
            return body;
        }
        throw new IllegalStateException("the body was not read ahead: BodySizeFilter must come first");
    }

    long length() {
        return length;
    }

    RequestBodyBudget.Charge charge() {
        return charge;
    }

    /** A fresh reading of the body from its first byte, for a filter; not once the transport has it. */
    InputStream open() {
        if (handedOver) {
            throw new IllegalStateException("the body has been handed to the transport");
        }
        return new SequenceInputStream(Collections.enumeration(chunks.stream().map(ByteArrayInputStream::new).toList()));
    }

    @Override
    public ServletInputStream getInputStream() {
        handedOver = true;
        return new HandOver();
    }

    @Override
    public BufferedReader getReader() {
        return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
    }

    @Override
    public int getContentLength() {
        return (int) length;
    }

    @Override
    public long getContentLengthLong() {
        return length;
    }

    /** Reads the chunks in order, dropping each once read. Always ready: read blocking only. */
    private final class HandOver extends ServletInputStream {
        private int next;
        private int offset;

        @Override
        public boolean isFinished() {
            return next >= chunks.size();
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
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) {
                return 0;
            }
            while (next < chunks.size() && offset == chunks.get(next).length) {
                chunks.set(next++, null);
                offset = 0;
            }
            if (next >= chunks.size()) {
                return -1;
            }
            byte[] chunk = chunks.get(next);
            int n = Math.min(len, chunk.length - offset);
            System.arraycopy(chunk, offset, b, off, n);
            offset += n;
            return n;
        }
    }
}
