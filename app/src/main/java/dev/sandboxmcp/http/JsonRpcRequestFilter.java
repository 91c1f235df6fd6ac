package dev.sandboxmcp.http;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Checks the JSON-RPC envelope of every MCP message POST before the SDK sees it, and answers
 * what it cannot accept with a proper JSON-RPC error (HTTP 400, or 413 past the size limit).
 * The SDK answers some malformed messages (params that are not an object, batches) with a 500
 * whose body is a serialized Java exception; this filter makes sure they never get that far.
 */
final class JsonRpcRequestFilter implements Filter {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    /** Request attribute holding the message this filter parsed and passed (a {@code Map<String, Object>}). */
    static final String MESSAGE_ATTRIBUTE = "sandbox-mcp.jsonrpc-message";

    private final int maxBytes;
    private final RequestBodyBudget budget;

    JsonRpcRequestFilter(int maxBytes, RequestBodyBudget budget) {
        this.maxBytes = maxBytes;
        this.budget = budget;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        if (!"POST".equals(request.getMethod())) {
            chain.doFilter(req, res);
            return;
        }
        long declared = request.getContentLengthLong();
        if (declared > maxBytes) {
            tooLarge(response);
            return;
        }
        int reserved;
        try {
            reserved = budget.reserve(declared >= 0 ? declared : maxBytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reserved = -1;
        }
        if (reserved < 0) {
            // Read the body to its end (into nothing) first: a client still sending it would
            // otherwise see the connection reset instead of this answer.
            discard(request.getInputStream(), maxBytes + 1L);
            response.setHeader("Retry-After", "5");
            JsonRpcErrors.write(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, null, JsonRpcErrors.INTERNAL_ERROR,
                    "the server is busy with other large messages; retry in a few seconds");
            return;
        }
        try {
            filterWithin(request, response, chain);
        } finally {
            budget.release(reserved);
        }
    }

    private void filterWithin(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        byte[] body = readBounded(request.getInputStream());
        if (body == null) {
            tooLarge(response);
            return;
        }
        Map<String, Object> message;
        try {
            message = JSON.readValue(body, new TypeRef<Map<String, Object>>() {
            });
        } catch (IOException | RuntimeException e) {
            if (looksLikeJsonArray(body)) {
                JsonRpcErrors.write(response, 400, null, JsonRpcErrors.INVALID_REQUEST, "batches are not supported; send one message per request");
            } else {
                JsonRpcErrors.write(response, 400, null, JsonRpcErrors.PARSE_ERROR, "the body is not a JSON object");
            }
            return;
        }
        String problem = envelopeProblem(message);
        if (problem != null) {
            Object id = message.get("id") instanceof String || message.get("id") instanceof Number ? message.get("id") : null;
            int code = problem.startsWith("params") ? JsonRpcErrors.INVALID_PARAMS : JsonRpcErrors.INVALID_REQUEST;
            JsonRpcErrors.write(response, 400, id, code, problem);
            return;
        }
        request.setAttribute(MESSAGE_ATTRIBUTE, message);
        chain.doFilter(new CachedBodyRequest(request, body), response);
    }

    private static void discard(InputStream in, long limit) throws IOException {
        byte[] buffer = new byte[16384];
        long left = limit;
        int n;
        while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) >= 0) {
            left -= n;
        }
    }

    private void tooLarge(HttpServletResponse response) throws IOException {
        response.setStatus(HttpServletResponse.SC_REQUEST_ENTITY_TOO_LARGE);
        response.setContentType("text/plain;charset=utf-8");
        response.getWriter().write("request body larger than " + maxBytes + " bytes\n");
    }

    /** What is wrong with the envelope, or null when the SDK can take it. */
    static String envelopeProblem(Map<String, Object> message) {
        if (message == null) {
            return "the body is not a JSON object";
        }
        if (!"2.0".equals(message.get("jsonrpc"))) {
            return "\"jsonrpc\" must be \"2.0\"";
        }
        Object id = message.get("id");
        if (id != null && !(id instanceof String) && !(id instanceof Number)) {
            return "\"id\" must be a string or a number";
        }
        Object method = message.get("method");
        if (method == null) {
            boolean response = message.containsKey("result") || message.containsKey("error");
            return response && id != null ? null : "\"method\" is missing";
        }
        if (!(method instanceof String name) || name.isEmpty()) {
            return "\"method\" must be a non-empty string";
        }
        Object params = message.get("params");
        if (params != null && !(params instanceof Map)) {
            return "params must be an object";
        }
        if (name.equals("tools/call")) {
            if (!(params instanceof Map<?, ?> call) || !(call.get("name") instanceof String)) {
                return "params of tools/call must be an object with a string \"name\"";
            }
            Object arguments = call.get("arguments");
            if (arguments != null && !(arguments instanceof Map)) {
                return "params.arguments of tools/call must be an object";
            }
        }
        return null;
    }

    private byte[] readBounded(InputStream in) throws IOException {
        byte[] bytes = in.readNBytes(maxBytes + 1);
        return bytes.length > maxBytes ? null : bytes;
    }

    private static boolean looksLikeJsonArray(byte[] body) {
        for (byte b : body) {
            if (!Character.isWhitespace(b)) {
                return b == '[';
            }
        }
        return false;
    }

    /** Replays the body this filter already read. */
    private static final class CachedBodyRequest extends HttpServletRequestWrapper {
        private final byte[] body;

        CachedBodyRequest(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            ByteArrayInputStream in = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public boolean isFinished() {
                    return in.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("the body is already buffered");
                }

                @Override
                public int read() {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    return in.read(b, off, len);
                }
            };
        }

        @Override
        public BufferedReader getReader() {
            return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }
    }
}
