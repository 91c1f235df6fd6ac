package dev.sandboxmcp.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * On {@code <base>/message}, refuses (400) a request of an HTTP+SSE session that has not yet
 * sent {@code notifications/initialized}: the SDK's session holds every request but {@code
 * initialize} until then, with no deadline, and the transport's POST waits on it, so such a
 * request was never answered and held its connection, its thread and its body's share of the
 * heap budget for good. Notifications, answers and {@code initialize} pass.
 *
 * <p>The sessions that have sent it are kept, at most {@code kept} of them, the least recently
 * used forgotten first. Each live session holds its event stream's connection, so the connection
 * cap bounds them; one forgotten after so many others is refused the same way, and its client
 * starts a new session.
 */
final class SessionStartFilter extends HttpFilter {

    private static final String INITIALIZED = "notifications/initialized";

    private final Map<String, Boolean> initialized;

    /** {@code kept}: how many initialized sessions are remembered. */
    SessionStartFilter(int kept) {
        this.initialized = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                return size() > kept;
            }
        };
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String session = request.getParameter("sessionId");
        if (session == null || !(request.getAttribute(JsonRpcEnvelopeFilter.MESSAGE_ATTRIBUTE) instanceof Map<?, ?> message)) {
            chain.doFilter(request, response);
            return;
        }
        Object method = message.get("method");
        if (INITIALIZED.equals(method)) {
            // Before the SDK sees it: a request sent right after it must not be refused.
            remember(session);
        } else if (method != null && message.containsKey("id") && !"initialize".equals(method) && !wasInitialized(session)) {
            JsonRpcErrors.write(response, message.get("id"), Problem.invalidRequest("this session has not been initialized: "
                    + "send initialize, then " + INITIALIZED + ", before any other request (or the session is unknown: "
                    + "open a new one at the SSE endpoint)"));
            return;
        }
        chain.doFilter(request, response);
    }

    private synchronized void remember(String session) {
        initialized.put(session, Boolean.TRUE);
    }

    private synchronized boolean wasInitialized(String session) {
        return initialized.get(session) != null;
    }
}
