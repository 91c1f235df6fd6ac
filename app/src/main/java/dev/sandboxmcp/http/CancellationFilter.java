package dev.sandboxmcp.http;

import dev.sandboxmcp.tools.CallCancellation;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets a client cancel a tool call: each {@code tools/call} in progress is registered under its
 * JSON-RPC id within its scope (the SSE session; for stateless Streamable HTTP, the caller's
 * address), and {@code notifications/cancelled} naming that id in the same scope cancels it. A
 * client that drops the HTTP request carrying a {@code run_command} (the one call that lasts)
 * cancels it too. The SDK ignores both, so
 * this filter, which sees every message before the SDK, raises the call's
 * {@link CallCancellation}; the transport context hands it to the dispatcher.
 */
final class CancellationFilter implements Filter {

    /** Request attribute under which a call's {@link CallCancellation} travels to the context extractor. */
    static final String ATTRIBUTE = "sandbox-mcp.cancellation";

    private static final Logger LOG = LoggerFactory.getLogger(CancellationFilter.class);

    private final CallerAddresses callers;
    private final Map<String, CallCancellation> inProgress = new ConcurrentHashMap<>();

    CancellationFilter(CallerAddresses callers) {
        this.callers = callers;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        if (!(request.getAttribute(JsonRpcRequestFilter.MESSAGE_ATTRIBUTE) instanceof Map<?, ?> message)) {
            chain.doFilter(req, res);
            return;
        }
        Object method = message.get("method");
        if ("notifications/cancelled".equals(method)) {
            if (message.get("params") instanceof Map<?, ?> params && isId(params.get("requestId"))) {
                CallCancellation call = inProgress.get(key(request, params.get("requestId")));
                if (call != null) {
                    String reason = params.get("reason") instanceof String r ? r : "no reason given";
                    call.cancel("notifications/cancelled: " + reason.substring(0, Math.min(reason.length(), 200)));
                }
            }
            chain.doFilter(req, res);
            return;
        }
        if (!"tools/call".equals(method) || !isId(message.get("id"))) {
            chain.doFilter(req, res);
            return;
        }
        String key = key(request, message.get("id"));
        CallCancellation call = new CallCancellation();
        if (inProgress.putIfAbsent(key, call) != null) {
            call = new CallCancellation(); // the id is already in use in this scope: this call cannot be cancelled by id
            key = null;
        }
        request.setAttribute(ATTRIBUTE, call);
        CallCancellation dropped = call;
        boolean lasts = message.get("params") instanceof Map<?, ?> params && "run_command".equals(params.get("name"));
        try (ClientDisconnect watch = lasts ? ClientDisconnect.watch(request.getRemoteAddr(), request.getRemotePort(),
                request.getLocalPort(), () -> dropped.cancel("the client closed the request")) : null) {
            chain.doFilter(req, res);
        } finally {
            if (key != null) {
                inProgress.remove(key, call);
            }
            if (call.cancelled()) {
                LOG.info("tool call {} cancelled: {}", message.get("id"), call.reason());
            }
        }
    }

    private static boolean isId(Object id) {
        return id instanceof String || id instanceof Number;
    }

    /** The id within its scope: the SSE session, else who called (stateless calls carry no session). */
    private String key(HttpServletRequest request, Object id) {
        String session = request.getParameter("sessionId");
        String scope = session != null ? "session " + session : "caller " + callers.of(request).client();
        return scope + " id " + (id instanceof String ? "s:" + id : "n:" + id);
    }
}
