package dev.sandboxmcp.http;

import dev.sandboxmcp.tools.CallCancellation;
import dev.sandboxmcp.tools.ToolDefinitions;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets a client cancel a tool call: each {@code tools/call} in progress is registered under its
 * JSON-RPC id within its scope, and {@code notifications/cancelled} naming that id in the same
 * scope cancels it. The scope is the SSE session; on the stateless Streamable HTTP transport, a
 * random {@code Mcp-Session-Id} given with the answer to {@code initialize} (clients send it back
 * with every message; it holds no state and is never checked), else the caller's address. A
 * client that drops the HTTP request carrying a call that may last ({@link ToolDefinitions#watchesTheClient})
 * cancels it too. The SDK ignores both, so this filter, which sees every message before the SDK, raises the call's
 * {@link CallCancellation}; the transport context hands it to the dispatcher. Clients without the
 * header behind one proxy share an address and may reuse ids: an id that names more than one call
 * in progress cancels none.
 */
final class CancellationFilter extends HttpFilter {

    /** Request attribute under which a call's {@link CallCancellation} travels to the context extractor. */
    static final String ATTRIBUTE = "sandbox-mcp.cancellation";

    /** The Streamable HTTP session header, used here only as a client's correlation id. */
    static final String SESSION_HEADER = "Mcp-Session-Id";

    private static final Logger LOG = LoggerFactory.getLogger(CancellationFilter.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final CallerAddresses callers;
    private final ToolDefinitions tools;
    /** Calls in progress by scoped id; a cancel acts only on an id that names one call. */
    private final Map<String, List<CallCancellation>> inProgress = new ConcurrentHashMap<>();

    CancellationFilter(CallerAddresses callers, ToolDefinitions tools) {
        this.callers = callers;
        this.tools = tools;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!(request.getAttribute(JsonRpcEnvelopeFilter.MESSAGE_ATTRIBUTE) instanceof Map<?, ?> message)) {
            chain.doFilter(request, response);
            return;
        }
        Object method = message.get("method");
        if ("initialize".equals(method) && request.getParameter("sessionId") == null) {
            // Stateless Streamable HTTP keeps no session; this id only tells one client's calls
            // from another's (clients send it back with every message), nothing is kept for it.
            response.setHeader(SESSION_HEADER, HexFormat.of().formatHex(randomBytes()));
        }
        if ("notifications/cancelled".equals(method)) {
            if (message.get("params") instanceof Map<?, ?> params && isId(params.get("requestId"))) {
                cancel(request, params);
            }
            // Answered here: the SDK has no handler for it and would only log a warning.
            response.setStatus(HttpServletResponse.SC_ACCEPTED);
            return;
        }
        if (!"tools/call".equals(method) || !isId(message.get("id"))) {
            chain.doFilter(request, response);
            return;
        }
        String key = key(request, message.get("id"));
        CallCancellation call = new CallCancellation();
        inProgress.compute(key, (k, calls) -> {
            List<CallCancellation> more = calls == null ? new ArrayList<>() : new ArrayList<>(calls);
            more.add(call);
            return List.copyOf(more);
        });
        request.setAttribute(ATTRIBUTE, call);
        boolean lasts = message.get("params") instanceof Map<?, ?> params && params.get("name") instanceof String tool
                && tools.watchesTheClient(tool);
        try (ClientDisconnect watch = lasts ? ClientDisconnect.watch(request.getRemoteAddr(), request.getRemotePort(),
                request.getLocalPort(), () -> call.cancel("the client closed the request")) : null) {
            chain.doFilter(request, response);
        } finally {
            inProgress.computeIfPresent(key, (k, calls) -> {
                List<CallCancellation> rest = calls.stream().filter(c -> c != call).toList();
                return rest.isEmpty() ? null : rest;
            });
            if (call.cancelled()) {
                LOG.info("tool call {} cancelled: {}", shown(message.get("id")), call.reason());
            }
        }
    }

    private void cancel(HttpServletRequest request, Map<?, ?> params) {
        List<CallCancellation> calls = inProgress.getOrDefault(key(request, params.get("requestId")), List.of());
        String reason = params.get("reason") instanceof String r ? r : "no reason given";
        if (calls.size() == 1) {
            calls.getFirst().cancel("notifications/cancelled: " + reason.substring(0, Math.min(reason.length(), 200)));
        } else if (calls.size() > 1) {
            LOG.warn("notifications/cancelled for id {} ignored: {} calls in progress share that id",
                    shown(params.get("requestId")), calls.size());
        }
    }

    /** A client's id for the log: its first 80 characters, and how many there were when more. */
    private static String shown(Object id) {
        String text = String.valueOf(id);
        return text.length() <= 80 ? text : text.substring(0, 80) + "... (" + text.length() + " characters)";
    }

    private static boolean isId(Object id) {
        return id instanceof String || id instanceof Number;
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    /**
     * The id within its scope: the SSE session, else the client's correlation id, else who called
     * (a Streamable HTTP client that ignores the id).
     */
    private String key(HttpServletRequest request, Object id) {
        String session = request.getParameter("sessionId");
        String client = request.getHeader(SESSION_HEADER);
        String scope = session != null ? "session " + session
                : client != null ? "client " + client : "caller " + callers.of(request).client();
        return scope + " id " + (id instanceof String ? "s:" + id : "n:" + id);
    }
}
