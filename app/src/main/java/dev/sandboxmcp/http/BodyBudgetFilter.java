package dev.sandboxmcp.http;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;

/**
 * Admits a message POST only when its body fits in the {@link RequestBodyBudget}, and holds its
 * share until the message is answered. A message that finds no room in time is answered 503
 * with {@code Retry-After}. A body declared larger than the size cap reserves nothing: the
 * {@link BodySizeFilter} after this one refuses it without reading it.
 */
final class BodyBudgetFilter implements Filter {

    private final int maxBytes;
    private final RequestBodyBudget budget;

    BodyBudgetFilter(int maxBytes, RequestBodyBudget budget) {
        this.maxBytes = maxBytes;
        this.budget = budget;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        long declared = request.getContentLengthLong();
        if (!"POST".equals(request.getMethod()) || declared > maxBytes) {
            chain.doFilter(req, res);
            return;
        }
        int reserved;
        try {
            reserved = budget.reserve(declared >= 0 ? declared : maxBytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reserved = -1;
        }
        if (reserved < 0) {
            // Read the body to its end (into nothing) first: a client still sending it would
            // otherwise see the connection reset instead of this answer.
            discard(request.getInputStream(), maxBytes + 1L);
            HttpServletResponse response = (HttpServletResponse) res;
            response.setHeader("Retry-After", "5");
            JsonRpcErrors.write(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, null,
                    Problem.internalError("the server is busy with other large messages; retry in a few seconds"));
            return;
        }
        try {
            chain.doFilter(req, res);
        } finally {
            budget.release(reserved);
        }
    }

    private static void discard(InputStream in, long limit) throws IOException {
        byte[] buffer = new byte[16384];
        long left = limit;
        int n;
        while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) >= 0) {
            left -= n;
        }
    }
}
