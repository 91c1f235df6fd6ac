package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import dev.sandboxmcp.config.Limits;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A connection with nothing in progress is closed after the idle timeout, and a request's head
 * and body must arrive within their deadlines however they trickle; a request being handled is
 * never cut: a command that runs silently for longer than the idle timeout, an event stream whose
 * pings are further apart than it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConnectionTimeoutsTest {

    static final long IDLE_SECONDS = 2;
    static final long HEAD_MILLIS = Limits.defaults().requestHeadTimeout().toMillis();
    static final String AUTH = "Authorization: Bearer " + TestServer.TOKEN + "\r\n";
    static final String JSON = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace, Map.of("MCP_IDLE_TIMEOUT_SECONDS", String.valueOf(IDLE_SECONDS),
                "MCP_KEEPALIVE_SECONDS", "3"));
    }

    @AfterAll
    void stop() {
        server.close();
    }

    static String post(String body) {
        return "POST " + TestServer.BASE + "/mcp HTTP/1.1\r\nHost: localhost\r\n" + AUTH + JSON
                + "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }

    static String runCommand(String command) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                + "\"arguments\":{\"command\":\"" + command + "\"}}}";
    }

    @Test
    void idleKeepAliveConnectionIsClosedAfterTheIdleTimeoutAndNotBefore() throws Exception {
        try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
            assertThat(connection.exchange("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", null).status()).isEqualTo(200);
            assertThat(connection.closedWithin(IDLE_SECONDS * 1000 - 500)).as("closed before the idle timeout").isFalse();
            assertThat(connection.closedWithin(3_000)).as("closed after the idle timeout").isTrue();
        }
        try (RawHttp.Connection silent = RawHttp.Connection.open(server.port())) {
            assertThat(silent.closedWithin(IDLE_SECONDS * 1000 + 3_000)).as("a connection that never sends is closed").isTrue();
        }
    }

    @Test
    void commandSilentForLongerThanTheIdleTimeoutIsNotCut() throws Exception {
        try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
            long started = System.nanoTime();
            RawHttp.Response response = connection.exchange(post(runCommand("sleep " + (IDLE_SECONDS * 2 + 1) + "; echo done")),
                    null);
            assertThat(response).as("the connection was cut while the command ran").isNotNull();
            assertThat(response.status()).isEqualTo(200);
            assertThat(response.body()).contains("done\\n").contains("\"exit_code\":0");
            assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)).isGreaterThanOrEqualTo(IDLE_SECONDS * 2 + 1);
            // and the connection serves the next request
            assertThat(connection.exchange(post(runCommand("echo again")), null).body()).contains("again");
        }
    }

    @Test
    void eventStreamWithPingsFurtherApartThanTheIdleTimeoutStaysOpen() throws Exception {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + TestServer.BASE + "/sse HTTP/1.1\r\nHost: localhost\r\n" + AUTH
                    + "Accept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            List<String> lines = new ArrayList<>();
            CompletableFuture<Void> ended = CompletableFuture.runAsync(() -> {
                try (BufferedReader reader = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = reader.readLine()) != null; ) {
                        synchronized (lines) {
                            lines.add(line);
                        }
                    }
                } catch (Exception closedByTheTest) {
                    // the socket is closed when the test ends
                }
            });
            Thread.sleep(7_500);
            assertThat(ended).as("the server ended the event stream").isNotDone();
            synchronized (lines) {
                assertThat(lines).contains("event: endpoint");
                assertThat(lines.stream().filter(l -> l.contains("\"method\":\"ping\""))).as("pings every 3 s")
                        .hasSizeGreaterThanOrEqualTo(2);
            }
        }
    }

    @Test
    void toolCallOnTheEventStreamOutlastsTheIdleTimeout() {
        try (McpSyncClient client = server.sseClient()) {
            client.initialize();
            CallToolResult result = client.callTool(new CallToolRequest("run_command",
                    Map.of("command", "sleep " + (IDLE_SECONDS * 2 + 1) + "; echo done")));
            assertThat(result.isError()).isFalse();
            assertThat(McpTransportsTest.structured(result)).containsEntry("stdout", "done\n");
        }
    }

    /**
     * Sends {@code first}, then {@code line(i)} once a second for i below {@code times}, then
     * {@code last}; returns the milliseconds until the server closed the connection, or -1 when
     * it answered.
     */
    long millisUntilClosedWhileTrickling(String first, IntFunction<String> line, int times, String last) throws Exception {
        try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
            long started = System.nanoTime();
            boolean open = connection.write(first);
            for (int i = 0; open && i < times; i++) {
                open = !connection.closedWithin(1_000) && connection.write(line.apply(i));
            }
            if (open && connection.write(last) && connection.readResponse() != null) {
                return -1;
            }
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        }
    }

    CompletableFuture<Long> trickle(String first, IntFunction<String> line, int times, String last) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return millisUntilClosedWhileTrickling(first, line, times, last);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, Thread::startVirtualThread);
    }

    @Test
    void requestHeadAndBodyMustArriveWithinTheirDeadlines() throws Exception {
        int seconds = (int) (HEAD_MILLIS / 1000);
        // A line a second: well inside the idle timeout, so only the deadlines can end these.
        String request = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
        CompletableFuture<Long> headerLines = trickle(request, i -> "X-Slow-" + i + ": x\r\n", seconds + 5, "\r\n");
        CompletableFuture<Long> blankLines = trickle("\r\n", i -> "\r\n", seconds + 5, request + "\r\n");
        CompletableFuture<Long> requestLine = trickle("GET /heal", i -> "t", seconds + 5, "hz HTTP/1.1\r\nHost: x\r\n\r\n");
        CompletableFuture<Long> justInTime = trickle(request, i -> "X-Slow-" + i + ": x\r\n", seconds - 3, "\r\n");

        String body = runCommand("touch trickled");
        long bodyMillis = Limits.defaults().requestBodyTimeout(body.length()).toMillis();
        String head = "POST " + TestServer.BASE + "/mcp HTTP/1.1\r\nHost: localhost\r\n" + AUTH + JSON
                + "Content-Length: " + body.length() + "\r\n\r\n";
        CompletableFuture<Long> slowBody = trickle(head, i -> body.substring(i, i + 1), body.length() - 1,
                body.substring(body.length() - 1));

        for (var slow : List.of(headerLines, blankLines, requestLine)) {
            assertThat(slow.get(60, TimeUnit.SECONDS)).as("head closed at (ms)")
                    .isBetween(HEAD_MILLIS - 500, HEAD_MILLIS + 4_000);
        }
        assertThat(justInTime.get(60, TimeUnit.SECONDS)).as("a head that took %d s is answered", seconds - 3).isEqualTo(-1);
        assertThat(slowBody.get(120, TimeUnit.SECONDS)).as("body closed at (ms)").isBetween(bodyMillis - 500, bodyMillis + 4_000);
        assertThat(server.workspace.resolve("trickled")).doesNotExist();
        RawHttp.Response after = RawHttp.post(server.port(), TestServer.BASE + "/mcp", AUTH + JSON, runCommand("echo fine"));
        assertThat(after.body()).contains("fine");
    }
}
