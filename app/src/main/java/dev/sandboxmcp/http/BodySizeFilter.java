package dev.sandboxmcp.http;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Caps a message POST's body at {@code maxBytes}: a larger one is answered 413, unread when its
 * declared length already says so. A body within the cap is read here (a chunked body's size is
 * known only once read) and handed on as a {@link BufferedBodyRequest}.
 */
final class BodySizeFilter implements Filter {

    private final int maxBytes;

    BodySizeFilter(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        if (!"POST".equals(request.getMethod())) {
            chain.doFilter(req, res);
            return;
        }
        if (request.getContentLengthLong() > maxBytes) {
            tooLarge((HttpServletResponse) res);
            return;
        }
        byte[] body = request.getInputStream().readNBytes(maxBytes + 1);
        if (body.length > maxBytes) {
            tooLarge((HttpServletResponse) res);
            return;
        }
        chain.doFilter(new BufferedBodyRequest(request, body), res);
    }

    private void tooLarge(HttpServletResponse response) throws IOException {
        response.setStatus(HttpServletResponse.SC_REQUEST_ENTITY_TOO_LARGE);
        response.setContentType("text/plain;charset=utf-8");
        response.getWriter().write("request body larger than " + maxBytes + " bytes\n");
    }
}
