package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.TypeRef;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a server process wrote to its standard output and error, as {@code docker logs} shows it:
 * audit lines and log lines, checked the way a reader of that log splits it.
 */
public final class ProcessLog {

    /** The fields every audit line of a call's end ({@code tool_call}) has. */
    static final List<String> AUDIT_FIELDS = List.of("time", "event", "run", "call", "tool", "target", "outcome", "duration_ms",
            "client", "peer");
    /** The fields every audit line of a call's start ({@code tool_call_started}) has. */
    static final List<String> START_FIELDS = List.of("time", "event", "run", "call", "tool", "target", "client", "peer");

    private ProcessLog() {
    }

    /**
     * Every line (split at any line break a reader might honour: {@code \n}, {@code \r}, NEL,
     * U+2028, U+2029) is either a whole audit line of a call's start or end, a JSON object with every
     * field of its kind, or a log line that is not JSON; every call that ended had started, on an
     * earlier line with the same run, number, tool and target. The lines of the calls' ends are returned.
     */
    public static List<Map<String, Object>> auditLines(String output) {
        return lines(output, "tool_call");
    }

    /** As {@link #auditLines}, the lines of the calls' starts. */
    public static List<Map<String, Object>> startLines(String output) {
        return lines(output, "tool_call_started");
    }

    private static List<Map<String, Object>> lines(String output, String event) {
        List<Map<String, Object>> chosen = new ArrayList<>();
        Map<List<Object>, Map<String, Object>> started = new HashMap<>();
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
            boolean start = "tool_call_started".equals(object.get("event"));
            assertThat(object).as("a JSON line that is not a whole audit line: " + line).containsKeys(
                    (start ? START_FIELDS : AUDIT_FIELDS).toArray(String[]::new));
            List<Object> call = List.of(object.get("run"), object.get("call"));
            if (start) {
                assertThat(started.put(call, object)).as("a call number started twice in one run: " + line).isNull();
            } else {
                assertThat(started.get(call)).as("the start of " + line).isNotNull()
                        .containsEntry("tool", object.get("tool")).containsEntry("target", object.get("target"));
            }
            if (event.equals(object.get("event"))) {
                chosen.add(object);
            }
        }
        return chosen;
    }

    /** A whole audit line naming {@code target}, as JSON text: what a forger would want a log line to be. */
    public static String forgedAuditLine(String target) {
        return "{\"time\":\"2026-01-01T00:00:00Z\",\"event\":\"tool_call\",\"run\":\"000000000000\",\"call\":1,"
                + "\"tool\":\"run_command\",\"target\":\""
                + target + "\",\"outcome\":\"ok\",\"duration_ms\":1,\"client\":\"127.0.0.1\",\"peer\":\"127.0.0.1\"}";
    }
}
