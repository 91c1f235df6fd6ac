package dev.sandboxmcp.http;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;

/**
 * Checks the JSON-RPC envelope of every MCP message POST before the SDK sees it, and answers
 * what it cannot accept with a proper JSON-RPC error (HTTP 400). The SDK answers some malformed
 * messages (params that are not an object, batches) with a 500 whose body is a serialized Java
 * exception; this filter makes sure they never get that far. A message that passes is left on
 * the request for the filters after this one ({@link #MESSAGE_ATTRIBUTE}).
 */
final class JsonRpcEnvelopeFilter implements Filter {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    /** Request attribute holding the message this filter parsed and passed (a {@code Map<String, Object>}). */
    static final String MESSAGE_ATTRIBUTE = "sandbox-mcp.jsonrpc-message";

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        if (!"POST".equals(request.getMethod())) {
            chain.doFilter(req, res);
            return;
        }
        byte[] body = BufferedBodyRequest.bodyOf(request);
        Map<String, Object> message;
        try {
            message = JSON.readValue(body, new TypeRef<Map<String, Object>>() {
            });
        } catch (IOException | RuntimeException e) {
            JsonRpcErrors.write(response, 400, null, looksLikeJsonArray(body)
                    ? Problem.invalidRequest("batches are not supported; send one message per request")
                    : Problem.parseError("the body is not a JSON object"));
            return;
        }
        Problem problem = problemWith(message);
        if (problem != null) {
            Object id = message == null ? null : message.get("id");
            JsonRpcErrors.write(response, 400, id instanceof String || id instanceof Number ? id : null, problem);
            return;
        }
        request.setAttribute(MESSAGE_ATTRIBUTE, message);
        chain.doFilter(req, res);
    }

    /** What is wrong with the envelope, or null when the SDK can take it. */
    static Problem problemWith(Map<String, Object> message) {
        if (message == null) {
            return Problem.invalidRequest("the body is not a JSON object");
        }
        if (!"2.0".equals(message.get("jsonrpc"))) {
            return Problem.invalidRequest("\"jsonrpc\" must be \"2.0\"");
        }
        Object id = message.get("id");
        if (id != null && !(id instanceof String) && !(id instanceof Number)) {
            return Problem.invalidRequest("\"id\" must be a string or a number");
        }
        Object method = message.get("method");
        if (method == null) {
            boolean response = message.containsKey("result") || message.containsKey("error");
            return response && id != null ? null : Problem.invalidRequest("\"method\" is missing");
        }
        if (!(method instanceof String name) || name.isEmpty()) {
            return Problem.invalidRequest("\"method\" must be a non-empty string");
        }
        Object params = message.get("params");
        if (params != null && !(params instanceof Map)) {
            return Problem.invalidParams("params must be an object");
        }
        if (name.equals("tools/call")) {
            if (!(params instanceof Map<?, ?> call) || !(call.get("name") instanceof String)) {
                return Problem.invalidParams("params of tools/call must be an object with a string \"name\"");
            }
            Object arguments = call.get("arguments");
            if (arguments != null && !(arguments instanceof Map)) {
                return Problem.invalidParams("params.arguments of tools/call must be an object");
            }
        }
        return null;
    }

    private static boolean looksLikeJsonArray(byte[] body) {
        for (byte b : body) {
            if (!Character.isWhitespace(b)) {
                return b == '[';
            }
        }
        return false;
    }
}
