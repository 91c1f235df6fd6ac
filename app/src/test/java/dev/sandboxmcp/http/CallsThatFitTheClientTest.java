package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The call budget, the bounded output view and cancellation, through the real server and the Java
 * SDK client (or raw HTTP where a client must misbehave). The budget is 3 s here, so the cases
 * take seconds; the default budget against the real clients' 60 s is in the interop tests.
 */
class CallsThatFitTheClientTest {

    static final long GRACE_MILLIS = 1000;
    /** Calls in flight at once need threads of their own (the common pool may have one). */
    static final java.util.concurrent.ExecutorService CALLS = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

    @TempDir
    static Path workspace;
    static TestServer server;

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.start(workspace, Map.of("MCP_CALL_BUDGET_SECONDS", "3",
                "MCP_KILL_GRACE_MILLIS", Long.toString(GRACE_MILLIS)));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static Stream<Arguments> transports() {
        return Stream.of(
                Arguments.of("streamable", (Function<TestServer, McpSyncClient>) TestServer::streamableClient),
                Arguments.of("sse", (Function<TestServer, McpSyncClient>) TestServer::sseClient));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void commandPastTheBudgetReturnsAtTheBudgetAndFinishesAsAJob(String name, Function<TestServer, McpSyncClient> connect)
            throws Exception {
        try (McpSyncClient client = connect.apply(server)) {
            client.initialize();
            long started = System.nanoTime();
            CallToolResult result = client.callTool(new CallToolRequest("run_command",
                    Map.of("command", "echo before; sleep 6; echo done", "timeout_seconds", 60)));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            Map<String, Object> call = structured(result);
            assertThat(millis).as("answered at the budget").isBetween(2_900L, 5_000L);
            assertThat(call).containsEntry("still_running", true).containsEntry("exit_code", null)
                    .containsEntry("stdout", "before\n");
            String job = (String) call.get("job_id");
            assertThat(text(result)).startsWith("still running after 3 s").contains("job_output {\"id\": \"" + job + "\"}");
            assertThat(text(client.callTool(new CallToolRequest("list_jobs", Map.of())))).contains(job + " running");

            Map<String, Object> output = Map.of();
            for (int i = 0; i < 200 && !Boolean.FALSE.equals(output.get("running")); i++) {
                Thread.sleep(50);
                output = structured(client.callTool(new CallToolRequest("job_output", Map.of("id", job))));
            }
            assertThat(output).containsEntry("running", false).containsEntry("exit_code", 0)
                    .containsEntry("stream", "stdout").containsEntry("output", "before\ndone\n");
        }
    }

    @Test
    void hugeOutputGivesASmallResponseAndTheLeftOutMiddleStaysReadableByOffset() throws Exception {
        String command = "yes 'out line' | head -c 5000000; yes 'err line' | head -c 5000000 >&2";
        RawHttp.Response response = post(call(1, "run_command", Map.of("command", command)));
        assertThat(response.status()).isEqualTo(200);
        int bytes = response.body().getBytes(StandardCharsets.UTF_8).length;
        System.out.println("5 MB on stdout and on stderr: a JSON-RPC response of " + bytes + " bytes");
        assertThat(bytes).as("JSON-RPC response bytes").isLessThan(64 * 1024);
        Map<String, Object> result = result(response);
        assertThat(result).containsEntry("stdout_bytes", 5_000_000).containsEntry("stderr_bytes", 5_000_000)
                .containsEntry("stdout_truncated", true).containsEntry("still_running", false);
        String stdout = (String) result.get("stdout");
        assertThat(stdout).startsWith("out line\n").endsWith("\nout l").contains(" bytes (").contains(" lines) left out");
        assertThat(((String) result.get("stderr"))).startsWith("err line\n").contains("left out");
        String id = (String) result.get("output_id");
        long offset = Long.parseLong(stdout.replaceAll("(?s).*\"stream\": \"stdout\", \"offset\": (\\d+).*", "$1"));

        Map<String, Object> page = result(post(call(2, "job_output", Map.of("id", id, "stream", "stdout", "offset", offset))));
        assertThat(page).containsEntry("offset", (int) offset).containsEntry("has_more", true);
        assertThat((String) page.get("output")).startsWith("out line\n").doesNotContain("err");
        Map<String, Object> stderrPage = result(post(call(3, "job_output", Map.of("id", id, "stream", "stderr",
                "offset", 4_900_000))));
        assertThat((String) stderrPage.get("output")).contains("err line").doesNotContain("out");
        assertThat(stderrPage).containsEntry("dropped_bytes", 0);
    }

    @Test
    void notificationsCancelledKillsTheCommandTreeWithinTheGrace() throws Exception {
        Path pid = workspace.resolve("cancel.pid");
        String body = call(41, "run_command", Map.of("command", treeCommand(pid), "timeout_seconds", 60));
        CompletableFuture<RawHttp.Response> pending = CompletableFuture.supplyAsync(() -> postQuietly(body), CALLS);
        long child = awaitPid(pid);
        long cancelled = System.nanoTime();
        RawHttp.Response ack = post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                + "\"params\":{\"requestId\":41,\"reason\":\"the user changed their mind\"}}");
        assertThat(ack.status()).isBetween(200, 299);
        awaitGone(child, cancelled);
        assertThat(pending.get(10, TimeUnit.SECONDS).body()).contains("cancelled");
        assertThat(server.auditLog()).contains("\"outcome\":\"cancelled\"");
        assertHealthy();
    }

    @Test
    void aClientDroppingTheRequestKillsTheCommandTreeWithinTheGrace() throws Exception {
        Path pid = workspace.resolve("drop.pid");
        byte[] body = call(42, "run_command", Map.of("command", treeCommand(pid), "timeout_seconds", 60))
                .getBytes(StandardCharsets.UTF_8);
        long child;
        long dropped;
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + TestServer.BASE + "/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + HEADERS + "Content-Length: "
                    + body.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            child = awaitPid(pid);
            dropped = System.nanoTime();
        }
        awaitGone(child, dropped);
        assertThat(server.auditLog()).contains("the client closed the request");
        assertHealthy();
    }

    @Test
    void anIdThatTwoCallsInProgressShareCancelsNeither() throws Exception {
        Path marker = workspace.resolve("shared.pid");
        Map<String, Object> command = Map.of("command", "echo $$ >> shared.pid; sleep 2; echo finished", "timeout_seconds", 30);
        String body = call(50, "run_command", command);
        CompletableFuture<RawHttp.Response> first = CompletableFuture.supplyAsync(() -> postQuietly(body), CALLS);
        CompletableFuture<RawHttp.Response> second = CompletableFuture.supplyAsync(() -> postQuietly(body), CALLS);
        for (int i = 0; i < 200 && (!Files.exists(marker) || Files.readAllLines(marker).size() < 2); i++) {
            Thread.sleep(25);
        }
        post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":50}}");
        assertThat(result(first.get(10, TimeUnit.SECONDS))).containsEntry("stdout", "finished\n");
        assertThat(result(second.get(10, TimeUnit.SECONDS))).containsEntry("stdout", "finished\n");
    }

    @Test
    void theSessionIdGivenAtInitializeTellsTwoClientsThatReuseAnIdApart() throws Exception {
        String a = sessionIdFromInitialize();
        String b = sessionIdFromInitialize();
        assertThat(a).matches("[0-9a-f]{32}").isNotEqualTo(b);
        Path pidA = workspace.resolve("client-a.pid");
        Path pidB = workspace.resolve("client-b.pid");
        CompletableFuture<RawHttp.Response> callA = CompletableFuture.supplyAsync(() -> postQuietly(
                "Mcp-Session-Id: " + a + "\r\n",
                call(70, "run_command", Map.of("command", treeCommand(pidA), "timeout_seconds", 30))));
        CompletableFuture<RawHttp.Response> callB = CompletableFuture.supplyAsync(() -> postQuietly(
                "Mcp-Session-Id: " + b + "\r\n",
                call(70, "run_command", Map.of("command", "echo $$ > client-b.pid; sleep 1; echo b",
                        "timeout_seconds", 30))), CALLS);
        long childA = awaitPid(pidA);
        awaitPid(pidB);
        long cancelled = System.nanoTime();
        post("Mcp-Session-Id: " + a + "\r\n",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":70}}");
        awaitGone(childA, cancelled);
        assertThat(callA.get(10, TimeUnit.SECONDS).body()).contains("cancelled");
        assertThat(result(callB.get(10, TimeUnit.SECONDS))).containsEntry("stdout", "b\n");
    }

    private static String sessionIdFromInitialize() throws IOException {
        RawHttp.Response init = post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
        assertThat(init.status()).isEqualTo(200);
        return init.head().lines().filter(l -> l.toLowerCase(java.util.Locale.ROOT).startsWith("mcp-session-id:"))
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElseThrow();
    }

    private static RawHttp.Response postQuietly(String headers, String body) {
        try {
            return post(headers, body);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    private static RawHttp.Response postQuietly(String body) {
        try {
            return post(body);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    @Test
    void cancellingAfterTheHandoverLeavesTheJobRunning() throws Exception {
        Map<String, Object> result = result(post(call(43, "run_command", Map.of("command", "sleep 8", "timeout_seconds", 60))));
        assertThat(result).containsEntry("still_running", true);
        post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":43}}");
        Thread.sleep(GRACE_MILLIS + 500);
        Map<String, Object> job = result(post(call(44, "job_output", Map.of("id", result.get("job_id")))));
        assertThat(job).containsEntry("running", true);
        post(call(45, "stop_job", Map.of("id", result.get("job_id"))));
    }

    /** A shell whose background child ignores SIGTERM: only the kill after the grace ends it. */
    private static String treeCommand(Path pid) {
        return "(trap '' TERM; sleep 300) & echo $! > " + pid.getFileName() + "; sleep 300";
    }

    private static long awaitPid(Path file) throws Exception {
        for (int i = 0; i < 200; i++) {
            if (Files.exists(file) && !Files.readString(file).isBlank()) {
                return Long.parseLong(Files.readString(file).strip());
            }
            Thread.sleep(25);
        }
        throw new AssertionError("the command did not start");
    }

    private static void awaitGone(long pid, long sinceNanos) throws InterruptedException {
        while (running(pid) && System.nanoTime() - sinceNanos < TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS + 3_000)) {
            Thread.sleep(20);
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNanos);
        assertThat(running(pid)).as("process %d after %d ms", pid, millis).isFalse();
        assertThat(millis).as("gone within the grace, plus scheduling").isLessThan(GRACE_MILLIS + 2_000);
    }

    static boolean running(long pid) {
        return dev.sandboxmcp.ProcStat.running(pid);
    }

    private static void assertHealthy() throws Exception {
        assertThat(RawHttp.send(server.port(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                null).body()).contains("\"runner\":\"ok\"");
        Map<String, Object> echo = result(post(call(99, "run_command", Map.of("command", "echo alive"))));
        assertThat(echo).containsEntry("stdout", "alive\n");
    }

    static final String HEADERS = "Authorization: Bearer " + TestServer.TOKEN + "\r\nContent-Type: application/json\r\n"
            + "Accept: application/json, text/event-stream\r\n";

    static String call(int id, String tool, Map<String, Object> arguments) {
        try {
            return McpJsonDefaults.getMapper().writeValueAsString(Map.of("jsonrpc", "2.0", "id", id, "method", "tools/call",
                    "params", Map.of("name", tool, "arguments", arguments)));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A POST on a connection of its own that stays open until the answer is in (no half-close: that cancels). */
    static RawHttp.Response post(String body) throws IOException {
        return post("", body);
    }

    static RawHttp.Response post(String extraHeaders, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
            return connection.exchange("POST " + TestServer.BASE + "/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + HEADERS
                    + extraHeaders + "Content-Length: " + bytes.length + "\r\n\r\n", bytes);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> result(RawHttp.Response response) throws IOException {
        Map<String, Object> message = McpJsonDefaults.getMapper().readValue(response.body(), new TypeRef<Map<String, Object>>() {
        });
        Map<String, Object> result = (Map<String, Object>) message.get("result");
        assertThat(result).as(response.body()).isNotNull().containsEntry("isError", false);
        return (Map<String, Object>) result.get("structuredContent");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> structured(CallToolResult result) {
        assertThat(result.isError()).as(String.valueOf(result.content())).isFalse();
        return (Map<String, Object>) result.structuredContent();
    }

    static String text(CallToolResult result) {
        return ((io.modelcontextprotocol.spec.McpSchema.TextContent) result.content().getFirst()).text();
    }
}
