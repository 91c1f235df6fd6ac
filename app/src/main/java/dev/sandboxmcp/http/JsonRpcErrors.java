package dev.sandboxmcp.http;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** Writes a bare JSON-RPC 2.0 error response. */
final class JsonRpcErrors {

    static final int PARSE_ERROR = -32700;
    static final int INVALID_REQUEST = -32600;
    static final int INVALID_PARAMS = -32602;
    static final int INTERNAL_ERROR = -32603;

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

    private JsonRpcErrors() {
    }

    static void write(HttpServletResponse response, int status, Object id, Problem problem) throws IOException {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", problem.code());
        error.put("message", problem.message());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("jsonrpc", "2.0");
        body.put("id", id);
        body.put("error", error);
        byte[] bytes = JSON.writeValueAsBytes(body);
        response.setStatus(status);
        response.setContentType("application/json;charset=utf-8");
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }
}
