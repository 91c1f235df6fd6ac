package dev.sandboxmcp.http;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The SDK's HTTP transports answer some failures with a serialized Java exception: class names,
 * stack frames, library versions. This filter holds back any error body (status 400 and up) the
 * transport writes and sends a bare JSON-RPC error with the same status and code instead.
 */
final class ErrorBodyFilter extends HttpFilter {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HeldErrorResponse held = new HeldErrorResponse(response);
        chain.doFilter(request, held);
        held.finish();
    }

    private static final class HeldErrorResponse extends HttpServletResponseWrapper {
        private int status = 200;
        private ByteArrayOutputStream held;
        private PrintWriter heldWriter;

        HeldErrorResponse(HttpServletResponse response) {
            super(response);
        }

        @Override
        public void setStatus(int sc) {
            status = sc;
            super.setStatus(sc);
        }

        /** The transport's bare refusals (404, 405, 503 while shutting down) in the same shape as every other. */
        @Override
        public void sendError(int sc, String reason) throws IOException {
            setStatus(sc);
            String text = reason == null || reason.contains("Exception") ? HttpStatus.getMessage(sc) : reason;
            int code = sc >= 500 ? JsonRpcErrors.INTERNAL_ERROR : JsonRpcErrors.INVALID_REQUEST;
            held = null;
            heldWriter = null;
            JsonRpcErrors.write((HttpServletResponse) getResponse(), null, new Problem(sc, code, text.lines().findFirst()
                    .orElse(HttpStatus.getMessage(sc))));
        }

        @Override
        public void sendError(int sc) throws IOException {
            sendError(sc, null);
        }

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
            if (status < 400) {
                return super.getOutputStream();
            }
            held = held == null ? new ByteArrayOutputStream() : held;
            return MemoryStreams.writingTo(held);
        }

        @Override
        public PrintWriter getWriter() throws IOException {
            if (status < 400) {
                return super.getWriter();
            }
            if (heldWriter == null) {
                held = held == null ? new ByteArrayOutputStream() : held;
                heldWriter = new PrintWriter(new OutputStreamWriter(held, StandardCharsets.UTF_8));
            }
            return heldWriter;
        }

        void finish() throws IOException {
            if (held == null) {
                return;
            }
            if (heldWriter != null) {
                heldWriter.flush();
            }
            int code = status >= 500 ? JsonRpcErrors.INTERNAL_ERROR : JsonRpcErrors.INVALID_REQUEST;
            String message = status >= 500 ? "internal error" : "invalid request";
            try {
                Map<String, Object> body = JSON.readValue(held.toByteArray(), new TypeRef<Map<String, Object>>() {
                });
                if (body.get("jsonRpcError") instanceof Map<?, ?> error && error.get("code") instanceof Number number) {
                    code = number.intValue();
                    if (status < 500 && error.get("message") instanceof String text && !text.contains("Exception")) {
                        message = text.lines().findFirst().orElse(message);
                    }
                } else if (body.containsKey("jsonrpc") && body.containsKey("error")) {
                    HttpServletResponse original = (HttpServletResponse) getResponse();
                    original.getOutputStream().write(held.toByteArray());
                    return;
                }
            } catch (IOException | RuntimeException notJson) {
                // keep the generic message
            }
            JsonRpcErrors.write((HttpServletResponse) getResponse(), null, new Problem(status, code, message));
        }
    }
}
