package dev.sandboxmcp.http;

import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * A request whose body has been read into memory: each reading of it, by a filter or by the
 * transport, starts again from the first byte.
 */
final class BufferedBodyRequest extends HttpServletRequestWrapper {

    private final byte[] body;

    BufferedBodyRequest(HttpServletRequest request, byte[] body) {
        super(request);
        this.body = body;
    }

    /** The body of a request {@link BodySizeFilter} has read; it must have passed through that filter. */
    static byte[] bodyOf(ServletRequest request) {
        if (request instanceof BufferedBodyRequest buffered) {
            return buffered.body;
        }
        throw new IllegalStateException("the body was not read ahead: BodySizeFilter must come first");
    }

    @Override
    public ServletInputStream getInputStream() {
        return MemoryStreams.reading(body);
    }

    @Override
    public BufferedReader getReader() {
        return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
    }

    @Override
    public int getContentLength() {
        return body.length;
    }

    @Override
    public long getContentLengthLong() {
        return body.length;
    }
}
