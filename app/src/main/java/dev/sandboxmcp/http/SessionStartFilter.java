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
 * On {@code <base>/message}, lets an HTTP+SSE session send only its handshake until it has sent
 * {@code notifications/initialized}: {@code initialize}, that notification, answers to the
 * server's requests and {@code notifications/cancelled} (answered before the SDK). Anything else
 * is refused (400): the SDK's session holds every other request, and every notification it has a
 * handler for ({@code notifications/roots/list_changed}), until then, with no deadline, and the
 * transport's POST waits on it, so such a message was never answered and held its connection,
 * its thread and its body's share of the heap budget for good.
 *
 * <p>A session counts as initialized once the SDK has taken its {@code notifications/initialized}
 * (a 2xx: an unknown session gets 404; the same method with an id is a request the SDK refuses,
 * and initializes nothing). At most {@code kept} such sessions are remembered, the least recently
 * used forgotten first; each live one holds its event stream's connection, so the connection cap
 * bounds them. One forgotten after so many newer handshakes (a token holder could make them) is
 * refused the same way, and its client starts a new session.
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
        if (session == null || !(request.getAttribute(JsonRpcEnvelopeFilter.MESSAGE_ATTRIBUTE) instanceof Map<?, ?> message)
                || wasInitialized(session)) {
            chain.doFilter(request, response);
            return;
        }
        Object method = message.get("method");
        boolean hasId = message.containsKey("id");
        if (INITIALIZED.equals(method) && !hasId) {
            chain.doFilter(request, response);
            if (response.getStatus() / 100 == 2) {
                remember(session);
            }
        } else if (method == null || "notifications/cancelled".equals(method) || "initialize".equals(method) && hasId) {
            chain.doFilter(request, response);
        } else {
            JsonRpcErrors.write(response, hasId ? message.get("id") : null, Problem.invalidRequest("this session has not "
                    + "been initialized: send initialize, then " + INITIALIZED + ", before any other message (or the "
                    + "session is unknown: open a new one at the SSE endpoint)"));
        }
    }

    private synchronized void remember(String session) {
        initialized.put(session, Boolean.TRUE);
    }

    private synchronized boolean wasInitialized(String session) {
        return initialized.get(session) != null;
    }
}
