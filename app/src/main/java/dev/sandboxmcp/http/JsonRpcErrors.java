package dev.sandboxmcp.http;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** Writes every refusal the HTTP side makes: a bare JSON-RPC 2.0 error response with the problem's status. */
final class JsonRpcErrors {

    static final int PARSE_ERROR = -32700;
    static final int INVALID_REQUEST = -32600;
    static final int INVALID_PARAMS = -32602;
    static final int INTERNAL_ERROR = -32603;

    static final String CONTENT_TYPE = "application/json;charset=utf-8";

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

    private JsonRpcErrors() {
    }

    /**
     * Writes {@code problem} as the response, answering the message {@code id} (null when not known).
     *
     * <p>No Content-Length is set: writing that many bytes would send the response at once, before
     * Jetty, at the request's end, finds a body the refusal left unread. It then can no longer say
     * {@code Connection: close} and closes the connection unannounced, and a proxy that pools its
     * connections to the server sends the next request on it and answers that client 502. Left
     * unsent until the end, the response gets its Content-Length from Jetty, and the close header
     * whenever the connection will close.
     */
    static void write(HttpServletResponse response, Object id, Problem problem) throws IOException {
        response.setStatus(problem.status());
        response.setContentType(CONTENT_TYPE);
        response.getOutputStream().write(bytes(id, problem));
    }

    /** The body of {@code problem}'s response, for a refusal written below the servlets. */
    static byte[] bytes(Object id, Problem problem) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", problem.code());
        error.put("message", problem.message());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("jsonrpc", "2.0");
        body.put("id", id);
        body.put("error", error);
        try {
            return JSON.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new UncheckedIOException("a map of strings and numbers always serializes", e);
        }
    }
}
