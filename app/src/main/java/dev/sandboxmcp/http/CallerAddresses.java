package dev.sandboxmcp.http;

import dev.sandboxmcp.tools.CallerAddress;
import dev.sandboxmcp.tools.ToolDispatcher;
import io.modelcontextprotocol.common.McpTransportContext;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;

/** Records who sent an MCP request, for the audit log. */
final class CallerAddresses {

    private CallerAddresses() {
    }

    static McpTransportContext extract(HttpServletRequest request) {
        return McpTransportContext.create(Map.of(ToolDispatcher.CALLER_KEY, of(request)));
    }

    static CallerAddress of(HttpServletRequest request) {
        String peer = request.getRemoteAddr();
        String forwarded = request.getHeader("X-Forwarded-For");
        if (forwarded == null || forwarded.isBlank()) {
            return new CallerAddress(peer, peer);
        }
        String first = forwarded.split(",", 2)[0].strip();
        // A header is caller-controlled text: keep it short and printable in the log.
        String client = first.length() > 64 || !first.matches("[0-9A-Za-z.:\\[\\]_-]+") ? "invalid" : first;
        return new CallerAddress(client, peer);
    }
}
