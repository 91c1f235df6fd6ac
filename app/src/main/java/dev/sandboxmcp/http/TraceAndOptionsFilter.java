package dev.sandboxmcp.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Refuses TRACE and OPTIONS on every path with 405, before anything else sees them: a servlet's
 * TRACE echoes the request, its Authorization header included, and its OPTIONS advertises TRACE.
 * Neither is needed: the server answers no CORS preflight (a page's Origin outside
 * MCP_ALLOWED_ORIGINS is refused anyway, and MCP clients are not browsers).
 */
final class TraceAndOptionsFilter extends HttpFilter {

    /** The methods the server answers, on the paths that answer anything. */
    static final String ALLOW = "GET, POST";

    static boolean refused(String method) {
        return method.equals("TRACE") || method.equals("OPTIONS");
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (refused(request.getMethod())) {
            response.setHeader("Allow", ALLOW);
            JsonRpcErrors.write(response, null, Problem.methodNotAnswered(request.getMethod()));
            return;
        }
        chain.doFilter(request, response);
    }
}
