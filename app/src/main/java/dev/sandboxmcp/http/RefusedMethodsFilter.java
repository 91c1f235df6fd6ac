package dev.sandboxmcp.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Refuses TRACE, OPTIONS and HEAD on every path with 405, before anything else sees them: a
 * servlet's TRACE echoes the request, its Authorization header included, and its OPTIONS
 * advertises TRACE; a HEAD of the SSE endpoint opened a session whose keep-alives went nowhere,
 * so that it never failed and never ended, holding its connection for good. None is needed: the
 * server answers no CORS preflight (a page's Origin outside MCP_ALLOWED_ORIGINS is refused anyway,
 * and MCP clients are not browsers), and MCP clients GET and POST (and DELETE a session).
 */
final class RefusedMethodsFilter extends HttpFilter {

    /** The methods the server answers, on the paths that answer anything. */
    static final String ALLOW = "GET, POST";

    static boolean refused(String method) {
        return method.equals("TRACE") || method.equals("OPTIONS") || method.equals("HEAD");
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
