package dev.sandboxmcp.audit;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** Writes one JSON object per line, one line per tool call. */
public final class AuditLog {

    private final PrintStream out;
    private final McpJsonMapper json = McpJsonDefaults.getMapper();

    public AuditLog(PrintStream out) {
        this.out = out;
    }

    public void record(AuditEvent event) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("time", event.time().toString());
        line.put("event", "tool_call");
        line.put("tool", event.tool());
        line.put("target", event.target());
        line.put("outcome", event.outcome().name().toLowerCase(Locale.ROOT));
        putIfPresent(line, "exit_code", event.exitCode());
        putIfPresent(line, "bytes", event.bytes());
        line.put("duration_ms", event.durationMillis());
        line.put("client", event.client());
        line.put("peer", event.peer());
        putIfPresent(line, "error", event.error());
        String text;
        try {
            text = json.writeValueAsString(line);
        } catch (IOException e) {
            text = "{\"event\":\"tool_call\",\"tool\":\"" + event.tool() + "\",\"audit_error\":\"unserializable\"}";
        }
        synchronized (out) {
            out.println(text);
            out.flush();
        }
    }

    private static void putIfPresent(Map<String, Object> line, String key, Object value) {
        if (value != null) {
            line.put(key, value);
        }
    }
}
