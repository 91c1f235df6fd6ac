package dev.sandboxmcp.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Set;

/**
 * DNS-rebinding defence: a request that carries an {@code Origin} header outside the allow-list
 * is refused with 403 (a JSON-RPC error naming the setting). Requests without {@code Origin} (every non-browser client) pass.
 */
final class OriginFilter extends HttpFilter {

    private final Set<String> allowedOrigins;
    private final ExemptPaths exempt;

    OriginFilter(Set<String> allowedOrigins, ExemptPaths exempt) {
        this.allowedOrigins = Set.copyOf(allowedOrigins);
        this.exempt = exempt;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String origin = request.getHeader("Origin");
        if (origin == null || exempt.contains(request) || allowedOrigins.contains(origin)) {
            chain.doFilter(request, response);
            return;
        }
        JsonRpcErrors.write(response, null, Problem.forbiddenOrigin());
    }
}
