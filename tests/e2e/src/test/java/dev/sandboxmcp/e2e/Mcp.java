package dev.sandboxmcp.e2e;

import dev.sandboxmcp.verify.BearerClients;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** SDK clients for a deployment, and a shorthand for run_command. */
final class Mcp {

    private Mcp() {
    }

    static McpSyncClient streamable(String origin, String basePath, String token) {
        return initialized(BearerClients.streamable(origin, basePath, token));
    }

    static McpSyncClient sse(String origin, String basePath, String token) {
        return initialized(BearerClients.sse(origin, basePath, token));
    }

    private static McpSyncClient initialized(McpClientTransport transport) {
        McpSyncClient client = BearerClients.sync(transport, Duration.ofSeconds(150), Duration.ofSeconds(30));
        client.initialize();
        return client;
    }

    /** Runs a command and returns run_command's structured result. */
    static Map<String, Object> run(McpSyncClient client, String command, int timeoutSeconds) {
        return call(client, "run_command", Map.of("command", command, "timeout_seconds", timeoutSeconds));
    }

    /** Calls a tool and returns its structured result; a tool error fails. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> call(McpSyncClient client, String tool, Map<String, Object> arguments) {
        McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, arguments));
        if (Boolean.TRUE.equals(result.isError())) {
            throw new AssertionError(tool + " failed: " + result.content());
        }
        return new HashMap<>((Map<String, Object>) result.structuredContent());
    }

    /**
     * Runs a command to its end, following it when the call budget hands it over to a job, and
     * returns its exit code (null when it has none).
     */
    static Integer exitCode(McpSyncClient client, String command, int timeoutSeconds) throws InterruptedException {
        Map<String, Object> call = run(client, command, timeoutSeconds);
        if (!Boolean.TRUE.equals(call.get("still_running"))) {
            return (Integer) call.get("exit_code");
        }
        return (Integer) ended(client, command, call.get("job_id"), timeoutSeconds).get("exit_code");
    }

    /** job_output of the job {@code job} that {@code command} went on as, once it has ended (within its timeout and 30 s). */
    private static Map<String, Object> ended(McpSyncClient client, String command, Object job, int timeoutSeconds)
            throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(timeoutSeconds + 30L);
        while (true) {
            Map<String, Object> output = call(client, "job_output", Map.of("id", job));
            if (Boolean.FALSE.equals(output.get("running"))) {
                return output;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the job of '" + command + "' is still running: " + output);
            }
            Thread.sleep(200);
        }
    }

    static String stdout(McpSyncClient client, String command) {
        return stdout(client, command, 60);
    }

    /**
     * A command's whole standard output: when a loaded machine makes it outlast the call budget and
     * it goes on as a job, the output is followed to the command's end and read from the start.
     */
    static String stdout(McpSyncClient client, String command, int timeoutSeconds) {
        Map<String, Object> call = run(client, command, timeoutSeconds);
        if (!Boolean.TRUE.equals(call.get("still_running"))) {
            return (String) call.get("stdout");
        }
        Object job = call.get("job_id");
        Map<String, Object> state;
        try {
            state = ended(client, command, job, timeoutSeconds);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while following '" + command + "'", e);
        }
        if (Boolean.TRUE.equals(state.get("timed_out"))) {
            throw new AssertionError("'" + command + "' was killed at its " + timeoutSeconds + " s timeout: " + state);
        }
        StringBuilder whole = new StringBuilder();
        Map<String, Object> page;
        long offset = 0;
        do {
            page = call(client, "job_output", Map.of("id", job, "stream", "stdout", "offset", offset));
            if (page.get("dropped_bytes") instanceof Number dropped && dropped.longValue() > 0) {
                throw new AssertionError("the output of '" + command + "' was too long to be kept whole: " + dropped
                        + " bytes dropped");
            }
            whole.append((String) page.get("output"));
            offset = ((Number) page.get("next_offset")).longValue();
        } while (Boolean.TRUE.equals(page.get("has_more")));
        return whole.toString();
    }
}
