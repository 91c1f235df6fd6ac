package dev.sandboxmcp.http;

import dev.sandboxmcp.config.TokenDigest;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.List;

/**
 * Requires exactly one {@code Authorization: Bearer <token>} header on every request but the
 * health probes. The SHA-256 digests of the sent and expected tokens are compared in constant
 * time, so neither the comparison's duration nor an early exit tells a guesser how close it was.
 * A refusal is a 401 with {@code WWW-Authenticate: Bearer} and a JSON-RPC error that says what a
 * request must carry, never how close it came.
 */
final class BearerTokenFilter extends HttpFilter {

    private static final String PREFIX = "Bearer ";

    private final TokenDigest expected;
    private final ExemptPaths exempt;

    BearerTokenFilter(TokenDigest expected, ExemptPaths exempt) {
        this.expected = expected;
        this.exempt = exempt;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (exempt.contains(request) || authorized(request)) {
            chain.doFilter(request, response);
            return;
        }
        response.setHeader("WWW-Authenticate", "Bearer");
        JsonRpcErrors.write(response, null, Problem.unauthorized());
    }

    private boolean authorized(HttpServletRequest request) {
        List<String> headers = Collections.list(request.getHeaders("Authorization"));
        if (headers.size() != 1) {
            return false;
        }
        String header = headers.getFirst();
        boolean wellFormed = header.startsWith(PREFIX);
        // Always compare, so a malformed header takes as long as a wrong token.
        return expected.matches(wellFormed ? header.substring(PREFIX.length()) : "") & wellFormed;
    }
}
