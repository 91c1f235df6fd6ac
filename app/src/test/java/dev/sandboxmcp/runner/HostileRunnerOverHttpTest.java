package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import dev.sandboxmcp.McpCalls;
import dev.sandboxmcp.ProcessLog;
import dev.sandboxmcp.ServerProcessTest;
import dev.sandboxmcp.audit.AuditLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stand-in for the runner's side that knows the secret answers every message kind with the
 * worst input, to a real server process at {@code -Xmx128m -XX:+ExitOnOutOfMemoryError}: every
 * call gets a clear error, /healthz answers after each, and the server never runs out of memory.
 */
class HostileRunnerOverHttpTest {

    static final String TOKEN = "hostile-runner-token-0123456789abcdefghijklmnop";
    /**
     * What the server reads of one runner message with the default limits ({@code Bounds.maxReplyBytes}):
     * a read_file page at the file limit as JSON escapes it, twice, and 64 KiB.
     */
    static final int LINE_BOUND = 2 * 1024 * 1024 + 64 * 1024;

    @TempDir
    Path dir;

    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** A JSON value for a field of a message, or a line of its own. */
    record Shape(String name, boolean slow, Writer writer) {
    }

    @FunctionalInterface
    interface Writer {
        void write(OutputStream out, String head, String tail) throws IOException, InterruptedException;
    }

    static List<Shape> shapes() {
        return List.of(
                new Shape("a line at the byte bound full of {}", false, (out, head, tail) -> {
                    int count = (LINE_BOUND - head.length() - tail.length() - 2) / 3;
                    out.write((head + "[" + "{},".repeat(count - 1) + "{}]" + tail + "\n").getBytes(StandardCharsets.UTF_8));
                }),
                new Shape("10,000-deep nesting", false, (out, head, tail) ->
                        out.write((head + "[".repeat(10_000) + "]".repeat(10_000) + tail + "\n").getBytes(StandardCharsets.UTF_8))),
                new Shape("a million keys", false, (out, head, tail) -> {
                    StringBuilder keys = new StringBuilder(head).append('{');
                    for (int i = 0; i < 1_000_000; i++) {
                        keys.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":0");
                    }
                    out.write(keys.append('}').append(tail).append('\n').toString().getBytes(StandardCharsets.UTF_8));
                }),
                new Shape("one huge string past the bound", false, (out, head, tail) ->
                        out.write((head + "\"" + "x".repeat(LINE_BOUND) + "\"" + tail + "\n").getBytes(StandardCharsets.UTF_8))),
                new Shape("garbage", false, (out, head, tail) ->
                        out.write("\u0000\u0001garbage{{{\n".getBytes(StandardCharsets.UTF_8))),
                new Shape("a trickle", true, (out, head, tail) -> {
                    for (byte b : (head + "{}" + tail + "\n").getBytes(StandardCharsets.UTF_8)) {
                        out.write(b);
                        out.flush();
                        Thread.sleep(200);
                    }
                }),
                new Shape("silence", true, (out, head, tail) -> Thread.sleep(Duration.ofMinutes(5))));
    }

    /** The head and tail around the shape for each kind the runner sends, answering {@code kind id} of the server. */
    static HostileRunner.Behaviour answering(Shape shape, String callKind) {
        return (kind, id, out) -> {
            String head;
            if (kind.equals("ping")) {
                head = "{\"kind\":\"pong\",\"id\":" + id + ",\"failed\":";
            } else if (callKind.equals("progress")) {
                head = "{\"kind\":\"progress\",\"id\":" + id + ",\"done\":1,\"message\":\"m\",\"total\":";
            } else {
                head = "{\"kind\":\"reply\",\"id\":" + id + ",\"error\":false,\"text\":\"forged\",\"structured\":{\"a\":";
            }
            String tail = kind.equals("ping") || callKind.equals("progress") ? "}" : "}}";
            synchronized (out) {
                shape.writer().write(out, head, tail);
                out.flush();
            }
        };
    }

    /** Sleeps, and says to go on. */
    private static boolean pause(long millis) throws InterruptedException {
        Thread.sleep(millis);
        return true;
    }

    /** Where the stand-in connects: the socket of a server process at {@code -Xmx128m}, on {@code port}, logging to {@code log}. */
    private Process startServer(Path socket, int port, Path log) throws IOException {
        Files.createDirectories(socket.getParent());
        return ServerProcessTest.serverProcess(Map.of("MCP_AUTH_TOKEN", TOKEN, "MCP_ADDR", "127.0.0.1:" + port,
                        "MCP_RUNNER_SOCKET", socket.toString(), "MCP_KILL_GRACE_MILLIS", "0"),
                        List.of("-Xmx128m", "-XX:+ExitOnOutOfMemoryError", "-XX:+UseSerialGC"))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    @Test
    void everyWorstAnswerIsAClearErrorAndTheServerAnswersThroughout() throws Exception {
        Path socket = dir.resolve("channel").resolve("runner.sock");
        Path log = dir.resolve("server.log");
        int port = ServerProcessTest.freePort();
        Process server = startServer(socket, port, log);
        List<String> tried = new ArrayList<>();
        try (HostileRunner hostile = new HostileRunner(socket, (kind, id, out) -> { })) {
            awaitHealthz(port, server, log);
            for (Shape shape : shapes()) {
                for (String kind : shape.slow() ? List.of("reply") : List.of("reply", "progress")) {
                    hostile.behave(answering(shape, kind));
                    String body;
                    long started;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    do {
                        // The stand-in may not yet have seen that the server dropped it after the last
                        // shape (its read still pending): then the server has no runner, says so and
                        // asks to try again shortly, as the stand-in connects again.
                        hostile.awaitConnected();
                        started = System.nanoTime();
                        body = callTool(port, "run_command", "{\"command\":\"echo hi\",\"timeout_seconds\":1}");
                    } while (body.contains("the runner is not connected") && System.nanoTime() < deadline
                            && pause(100));
                    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                    tried.add(shape.name() + " as " + kind + ": " + millis + " ms, " + errorText(body));
                    assertThat(body).as(shape.name() + " as " + kind).contains("\"isError\":true").doesNotContain("forged")
                            .containsAnyOf("runner's answer was unusable", "did not answer within", "malformed result");
                    assertThat(server.isAlive()).as("the server is alive after " + shape.name()).isTrue();
                    assertThat(healthz(port)).as("/healthz after " + shape.name()).isEqualTo(200);
                }
            }
            hostile.behave((kind, id, out) -> { });
        } finally {
            System.out.println("HostileRunnerOverHttpTest tried:\n  " + String.join("\n  ", tried));
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
            server.destroyForcibly();
        }
        assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError").contains("broke the channel's protocol");
    }

    @Test
    void aRunnerCannotForgeALogOrAuditLine() throws Exception {
        // What the runner sends reaches the log (a protocol violation quotes the kind it did not
        // know) and the audit (an error reply's text): each carries a whole audit line between line
        // breaks, with U+2028, half a surrogate pair, and in the audit more than a line may hold.
        String forgedKind = "x\n{\"event\":\"tool_call\",\"target\":\"FORGED-R1\"}\n"; // the log quotes 80 characters
        String forgedText = "y\u2028\ud800\r\n" + ProcessLog.forgedAuditLine("FORGED-R2") + "\n"
                + "z".repeat(AuditLog.VALUE_CHARS);
        Path socket = dir.resolve("channel").resolve("runner.sock");
        Path log = dir.resolve("server.log");
        int port = ServerProcessTest.freePort();
        Process server = startServer(socket, port, log);
        try (HostileRunner hostile = new HostileRunner(socket, (kind, id, out) -> { })) {
            awaitHealthz(port, server, log);
            hostile.awaitConnected();
            hostile.behave((kind, id, out) -> HostileRunner.writeLine(out, "{\"kind\":\"reply\",\"id\":" + id
                    + ",\"error\":true,\"text\":" + McpCalls.jsonString(forgedText) + "}"));
            assertThat(callTool(port, "run_command", "{\"command\":\"echo hi\"}")).contains("FORGED-R2");
            hostile.behave((kind, id, out) -> HostileRunner.writeLine(out, "{\"kind\":"
                    + McpCalls.jsonString(forgedKind) + ",\"id\":" + id + "}"));
            assertThat(callTool(port, "run_command", "{\"command\":\"echo hi\"}")).contains("\"isError\":true");
        } finally {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
            server.destroyForcibly();
        }
        String output = Files.readString(log);
        assertThat(output).as("the values were logged").contains("FORGED-R1").contains("FORGED-R2");
        List<Map<String, Object>> audit = ProcessLog.auditLines(output);
        assertThat(audit).as(output).extracting(line -> line.get("target")).containsOnly("echo hi");
        assertThat(audit.getFirst().get("error")).asString().startsWith("y\u2028\ud800\r\n{").hasSize(AuditLog.VALUE_CHARS);
        assertThat(audit.getFirst()).containsEntry("error_chars", forgedText.length());
    }

    /**
     * The server's report of the runner follows its connection: a runner that answered a ping a
     * moment ago and then went away is "failing" at the next /healthz, not after the report's reuse.
     */
    @Test
    void healthzSaysTheRunnerIsNotOkRightAfterItsConnectionEnds() throws Exception {
        Path socket = dir.resolve("channel").resolve("runner.sock");
        Path log = dir.resolve("server.log");
        int port = ServerProcessTest.freePort();
        Process server = startServer(socket, port, log);
        try {
            try (HostileRunner runner = new HostileRunner(socket, (kind, id, out) ->
                    HostileRunner.writeLine(out, "{\"kind\":\"pong\",\"id\":" + id + ",\"failed\":[]}"))) {
                awaitHealthz(port, server, log);
                runner.awaitConnected();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (!healthzBody(port).contains("\"runner\":\"ok\"") && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                assertThat(healthzBody(port)).contains("\"runner\":\"ok\"");
            } // the stand-in closes its connection and does not come back
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Files.readString(log).contains("the runner's connection ended") && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(Files.readString(log)).contains("the runner's connection ended");
            assertThat(healthzBody(port)).as("the first /healthz after the server saw the connection end")
                    .contains("\"runner\":\"failing\"");
        } finally {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
            server.destroyForcibly();
        }
    }

    private static String errorText(String body) {
        int at = body.indexOf("\"text\":\"");
        return at < 0 ? body.substring(0, Math.min(200, body.length()))
                : body.substring(at + 8, Math.min(body.length(), at + 8 + 120));
    }

    private void awaitHealthz(int port, Process server, Path log) throws Exception {
        for (int i = 0; i < 600; i++) {
            if (!server.isAlive()) {
                throw new AssertionError("the server exited: " + Files.readString(log));
            }
            try {
                if (healthz(port) == 200) {
                    return;
                }
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new AssertionError("no /healthz: " + Files.readString(log));
    }

    private int healthz(int port) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private String healthzBody(int port) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private String callTool(int port, String tool, String arguments) throws Exception {
        return McpCalls.callTool(http, port, TOKEN, tool, arguments);
    }
}
