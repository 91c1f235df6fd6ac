package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A runner taken over by a command, behind the real HTTP server: every call is a clear error, the server stays up. */
class HostileRunnerOverHttpTest {

    @TempDir
    Path dir;

    @Test
    void everyCallToAHostileRunnerIsAToolErrorAndTheServerStaysHealthy() throws Exception {
        Path socket = dir.resolve("runner.sock");
        int[] connection = {0};
        HostileRunner.Behaviour rotating = (in, out) -> {
            switch (connection[0]++ % 4) {
                case 0 -> {
                    byte[] junk = new byte[65536];
                    Arrays.fill(junk, (byte) '[');
                    for (int i = 0; i < 1000; i++) {
                        out.write(junk); // 64 MB of an unfinished line
                    }
                }
                case 1 -> HostileRunner.writeLine(out, "{\"v\":1,\"reply\":{\"error\":false,\"text\":\"forged\","
                        + "\"structured\":{\"exit_code\":\"zero\"}}}");
                case 2 -> HostileRunner.writeLine(out, "\u0000\u0001garbage");
                default -> { } // hang up
            }
        };
        try (HostileRunner hostile = new HostileRunner(socket, rotating);
                TestServer server = TestServer.start(dir, Map.of("MCP_RUNNER_SOCKET", socket.toString()));
                McpSyncClient client = server.streamableClient()) {
            client.initialize();
            for (int i = 0; i < 8; i++) {
                McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest("run_command",
                        Map.of("command", "echo hi", "timeout_seconds", 1)));
                assertThat(result.isError()).as(result.toString()).isTrue();
                assertThat(result.content().toString()).doesNotContain("forged").containsAnyOf("runner", "malformed");
                HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create(server.url("/healthz"))).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(health.statusCode()).isEqualTo(200);
                assertThat(health.body()).contains("\"runner\":\"failing\"");
            }
            assertThat(server.auditLog()).contains("\"outcome\":\"error\"").doesNotContain("forged");
        }
    }

    @Test
    void silentRunnerCostsACallItsDeadlineAndNoMore() throws Exception {
        Path socket = dir.resolve("runner.sock");
        try (HostileRunner hostile = new HostileRunner(socket, (in, out) -> Thread.sleep(Duration.ofMinutes(5)));
                TestServer server = TestServer.start(dir, Map.of("MCP_RUNNER_SOCKET", socket.toString(),
                        "MCP_KILL_GRACE_MILLIS", "0"));
                McpSyncClient client = server.streamableClient()) {
            client.initialize();
            long started = System.nanoTime();
            McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest("run_command",
                    Map.of("command", "echo hi", "timeout_seconds", 1)));
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            assertThat(result.isError()).isTrue();
            assertThat(result.content().toString()).contains("did not answer within 16 s");
            assertThat(took).isBetween(Duration.ofSeconds(15), Duration.ofSeconds(25));
        }
    }
}
