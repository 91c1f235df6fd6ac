package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The HTTP boundary, probed with a plain HTTP client the way an attacker or a proxy would. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpBoundaryTest {

    static final String INITIALIZE = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",
            "capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}""";

    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace, Map.of("MCP_ALLOWED_ORIGINS", "https://allowed.example",
                "MCP_KEEPALIVE_SECONDS", "1"));
    }

    @AfterAll
    void stop() {
        server.close();
    }

    HttpResponse<String> send(String method, String path, String authorization, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url(path)))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "GET, /mcp-sandbox/sse",
        "POST, /mcp-sandbox/message?sessionId=x",
        "POST, /mcp-sandbox/mcp",
        "GET, /mcp-sandbox/mcp",
        "DELETE, /mcp-sandbox/mcp",
        "GET, /mcp-sandbox/anything-else",
        "GET, /",
    })
    void everyMcpPathRefusesMissingAndWrongTokens(String method, String path) throws Exception {
        for (String authorization : new String[] {null, "Bearer wrong-token-wrong-token-wrong-token-1234",
                "Bearer " + TestServer.TOKEN.substring(1), "Basic " + TestServer.TOKEN}) {
            HttpResponse<String> response = send(method, path, authorization, method.equals("POST") ? INITIALIZE : null);
            assertThat(response.statusCode()).as("%s %s with %s", method, path, authorization).isEqualTo(401);
            assertThat(response.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
            assertThat(response.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,")
                    .contains("unauthorized").contains("Authorization: Bearer <token>")
                    .doesNotContain(TestServer.TOKEN.substring(1)).doesNotContain("wrong-token");
        }
    }

    @Test
    void healthAnswersWithoutTokenAndRevealsNothing() throws Exception {
        for (String path : new String[] {"/healthz", "/mcp-sandbox/healthz"}) {
            HttpResponse<String> response = send("GET", path, null, null);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("{\"status\":\"ok\",\"runner\":\"ok\"}");
        }
    }

    @Test
    void streamableInitializeWorksWithTheToken() throws Exception {
        HttpResponse<String> response = send("POST", "/mcp-sandbox/mcp", "Bearer " + TestServer.TOKEN, INITIALIZE);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"serverInfo\"").contains("sandbox-mcp");
    }

    @Test
    void foreignOriginIsRefusedAllowedOriginPasses() throws Exception {
        HttpResponse<String> refused = initializeFrom("http://evil.example");
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(refused.body()).contains("\"jsonrpc\":\"2.0\"").contains("MCP_ALLOWED_ORIGINS")
                .doesNotContain("evil.example");
        assertThat(initializeFrom("https://allowed.example").statusCode()).isEqualTo(200);
    }

    /** Without the token, an Origin on the allow-list and one off it get the same 401: nothing tells which are on it. */
    @Test
    void withoutTheTokenNoOriginLearnsWhetherItIsAllowed() throws Exception {
        for (String origin : new String[] {"http://evil.example", "https://allowed.example"}) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(server.url("/mcp-sandbox/mcp")))
                    .timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("Origin", origin)
                    .POST(HttpRequest.BodyPublishers.ofString(INITIALIZE)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(origin).isEqualTo(401);
            assertThat(response.body()).as(origin).contains("unauthorized").doesNotContain("MCP_ALLOWED_ORIGINS");
        }
    }

    HttpResponse<String> initializeFrom(String origin) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.url("/mcp-sandbox/mcp")))
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Origin", origin)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(INITIALIZE)).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void sseEndpointEventKeepsThePrefixAndKeepAlivesFlow() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.url("/mcp-sandbox/sse")))
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Accept", "text/event-stream").GET().build();
        HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        List<String> lines = new ArrayList<>();
        CompletableFuture<Void> reading = CompletableFuture.runAsync(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    synchronized (lines) {
                        lines.add(line);
                    }
                }
            } catch (Exception ignored) {
                // the stream is cut when the test ends
            }
        });
        try {
            Thread.sleep(3_500);
        } finally {
            response.body().close();
            reading.cancel(true);
        }
        List<String> seen;
        synchronized (lines) {
            seen = List.copyOf(lines);
        }
        assertThat(seen.get(0)).isEqualTo("event: endpoint");
        assertThat(seen.get(1)).matches("data: /mcp-sandbox/message\\?sessionId=[0-9a-f-]+");
        long pings = seen.stream().filter(l -> l.startsWith("data: ") && l.contains("\"method\":\"ping\"")).count();
        assertThat(pings).as("keep-alive pings with a 1 s interval").isGreaterThanOrEqualTo(2);
    }

    @Test
    void streamableClientCarriesOnAcrossAServerRestart(@TempDir Path workspace) throws Exception {
        TestServer first = TestServer.start(workspace);
        int port = first.port();
        McpSyncClient client = first.streamableClient();
        try {
            client.initialize();
            assertThat(client.callTool(new CallToolRequest("run_command", Map.of("command", "echo before"))).isError())
                    .isFalse();
            first.close();
            TestServer second = TestServer.start(workspace, Map.of("MCP_ADDR", "127.0.0.1:" + port));
            try {
                // Same client object, no re-initialize: the stateless transport has no session to lose.
                var result = client.callTool(new CallToolRequest("run_command", Map.of("command", "echo after")));
                assertThat(result.isError()).isFalse();
                assertThat(McpTransportsTest.structured(result)).containsEntry("stdout", "after\n");
            } finally {
                second.close();
            }
        } finally {
            client.close();
        }
    }

    @Test
    void oversizedBodyIsRefusedWith413() throws Exception {
        String huge = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" + "x".repeat(9 * 1024 * 1024)
                + "\"}}";
        // Expect: 100-continue lets the server refuse before the client has pushed the whole body,
        // so the refusal is read instead of racing a broken pipe.
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.url("/mcp-sandbox/mcp")))
                .expectContinue(true)
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(huge)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(response.body()).startsWith("{\"jsonrpc\":\"2.0\"").contains("\"code\":-32600")
                .contains("larger than the limit of 8388608 bytes (MCP_MAX_REQUEST_BYTES)");
        assertThat(send("GET", "/healthz", null, null).statusCode()).isEqualTo(200);
    }
}
