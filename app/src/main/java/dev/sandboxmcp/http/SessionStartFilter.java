package dev.sandboxmcp.http;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.HashMap;
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
 * <p>A session is known from its event stream's start ({@link #streams()}, on {@code <base>/sse},
 * which reads its id from the stream's first event) to the stream's end; so only live sessions
 * are remembered, each holding its stream's connection, which the connection cap bounds. It
 * counts as initialized once the SDK has taken its {@code notifications/initialized} (a 2xx; the
 * same method with an id is a request the SDK refuses, and initializes nothing). A session not
 * known (never opened, or its stream ended) is refused the same way.
 */
final class SessionStartFilter extends HttpFilter {

    private static final String INITIALIZED = "notifications/initialized";
    /** What the SDK's first event on a stream holds before the session's id (a UUID), in its endpoint's URL. */
    private static final String SESSION_PARAMETER = "sessionId=";
    private static final int SESSION_ID_LENGTH = 36;

    /** Each live stream's session, and whether it has been initialized. */
    private final Map<String, Boolean> live = new HashMap<>();

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String session = request.getParameter("sessionId");
        if (session == null || !(request.getAttribute(JsonRpcEnvelopeFilter.MESSAGE_ATTRIBUTE) instanceof Map<?, ?> message)
                || initialized(session)) {
            chain.doFilter(request, response);
            return;
        }
        Object method = message.get("method");
        boolean hasId = message.containsKey("id");
        if (INITIALIZED.equals(method) && !hasId) {
            chain.doFilter(request, response);
            if (response.getStatus() / 100 == 2) {
                markInitialized(session);
            }
        } else if (method == null || "notifications/cancelled".equals(method) || "initialize".equals(method) && hasId) {
            chain.doFilter(request, response);
        } else {
            JsonRpcErrors.write(response, hasId ? message.get("id") : null, Problem.invalidRequest("this session has not "
                    + "been initialized: send initialize, then " + INITIALIZED + ", before any other message (or the "
                    + "session is unknown or its event stream has ended: open a new one at the SSE endpoint)"));
        }
    }

    /** The filter for {@code <base>/sse}: each stream the SDK opens there is a live session until it ends. */
    HttpFilter streams() {
        return new HttpFilter() {
            @Override
            protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                    throws IOException, ServletException {
                if (!"GET".equals(request.getMethod())) {
                    chain.doFilter(request, response);
                    return;
                }
                // Known before the client can read its id: its handshake may come at once.
                FirstEventReader first = new FirstEventReader(response, SESSION_PARAMETER, SESSION_ID_LENGTH,
                        SessionStartFilter.this::opened);
                chain.doFilter(request, first);
                String session = first.value();
                if (session == null) {
                    return;
                }
                try {
                    if (request.isAsyncStarted()) {
                        request.getAsyncContext().addListener(new StreamEnd(session));
                        return;
                    }
                } catch (IllegalStateException completedMeanwhile) {
                    // the stream ended as the listener was added
                }
                ended(session);
            }
        };
    }

    private synchronized void opened(String session) {
        live.put(session, Boolean.FALSE);
    }

    private synchronized void ended(String session) {
        live.remove(session);
    }

    /** Only a session whose stream is still open: one that ended as its handshake was taken stays forgotten. */
    private synchronized void markInitialized(String session) {
        live.replace(session, Boolean.TRUE);
    }

    private synchronized boolean initialized(String session) {
        return live.getOrDefault(session, Boolean.FALSE);
    }

    private final class StreamEnd implements AsyncListener {

        private final String session;

        StreamEnd(String session) {
            this.session = session;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            ended(session);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            ended(session);
        }

        @Override
        public void onError(AsyncEvent event) {
            ended(session);
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // a stream is started once
        }
    }
}
