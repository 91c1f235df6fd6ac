package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.TypeRef;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a server process wrote to its standard output and error, as {@code docker logs} shows it:
 * audit lines and log lines, checked the way a reader of that log splits it.
 */
public final class ProcessLog {

    /** The fields every audit line has. */
    static final List<String> AUDIT_FIELDS = List.of("time", "event", "tool", "target", "outcome", "duration_ms", "client",
            "peer");

    private ProcessLog() {
    }

    /**
     * Every line (split at any line break a reader might honour: {@code \n}, {@code \r}, NEL,
     * U+2028, U+2029) is either a whole audit line, a JSON object with every audit field, or a log
     * line that is not JSON; the audit lines are returned.
     */
    public static List<Map<String, Object>> auditLines(String output) {
        List<Map<String, Object>> audit = new ArrayList<>();
        for (String line : output.split("\\R")) {
            if (!line.stripLeading().startsWith("{")) {
                continue;
            }
            Map<String, Object> object;
            try {
                object = McpJsonDefaults.getMapper().readValue(line, new TypeRef<Map<String, Object>>() { });
            } catch (IOException | RuntimeException e) {
                throw new AssertionError("a line that starts as JSON and is not a JSON object: " + line, e);
            }
            assertThat(object).as("a JSON line that is not a whole audit line: " + line).containsKeys(
                    AUDIT_FIELDS.toArray(String[]::new));
            audit.add(object);
        }
        return audit;
    }

    /** A whole audit line naming {@code target}, as JSON text: what a forger would want a log line to be. */
    public static String forgedAuditLine(String target) {
        return "{\"time\":\"2026-01-01T00:00:00Z\",\"event\":\"tool_call\",\"tool\":\"run_command\",\"target\":\""
                + target + "\",\"outcome\":\"ok\",\"duration_ms\":1,\"client\":\"127.0.0.1\",\"peer\":\"127.0.0.1\"}";
    }
}
