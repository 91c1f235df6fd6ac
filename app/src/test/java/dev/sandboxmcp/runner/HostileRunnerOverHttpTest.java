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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stand-in for the runner's side that knows the secret answers every message kind with the
 * worst input, to a real server process at {@code -Xmx128m -XX:+ExitOnOutOfMemoryError}: every
 * call gets a clear error, /healthz answers after each, and the server never runs out of memory.
 */
class HostileRunnerOverHttpTest {

    static final String TOKEN = "hostile-runner-token-0123456789abcdefghijklmnop";
    /** What the server reads of one runner message with the default limits ({@code Main.maxReplyBytes}). */
    static final int LINE_BOUND = 2 * 6 * 1024 * 1024 + 64 * 1024;

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

    Path socket;
    Path log;
    int port;
    Process server;

    /** The server as deployed in its container (listening for a runner on {@code socket}), at {@code -Xmx128m}. */
    @BeforeEach
    void startServer() throws IOException {
        socket = dir.resolve("channel").resolve("runner.sock");
        log = dir.resolve("server.log");
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Files.createDirectories(socket.getParent());
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx128m", "-XX:+ExitOnOutOfMemoryError", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), "dev.sandboxmcp.Main");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(k -> k.startsWith("MCP_"));
        builder.environment().putAll(Map.of("MCP_AUTH_TOKEN", TOKEN, "MCP_ADDR", "127.0.0.1:" + port,
                "MCP_RUNNER_SOCKET", socket.toString(), "MCP_KILL_GRACE_MILLIS", "0"));
        server = builder.start();
    }

    @AfterEach
    void stopServer() throws InterruptedException {
        server.destroy();
        server.waitFor(10, TimeUnit.SECONDS);
        server.destroyForcibly();
    }

    @Test
    void everyWorstAnswerIsAClearErrorAndTheServerAnswersThroughout() throws Exception {
        List<String> tried = new ArrayList<>();
        try (HostileRunner hostile = new HostileRunner(socket, (kind, id, out) -> { })) {
            awaitHealthz(port, server, log);
            for (Shape shape : shapes()) {
                for (String kind : shape.slow() ? List.of("reply") : List.of("reply", "progress")) {
                    hostile.awaitConnected();
                    hostile.behave(answering(shape, kind));
                    long started = System.nanoTime();
                    String body = callTool(port, "run_command", "{\"command\":\"echo hi\",\"timeout_seconds\":1}");
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
        }
        assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError").contains("broke the channel's protocol");
    }

    /**
     * The server's report of the runner follows its connection: a runner that answered a ping a
     * moment ago and then went away is "failing" at the next /healthz, not after the report's reuse.
     */
    @Test
    void healthzSaysTheRunnerIsNotOkRightAfterItsConnectionEnds() throws Exception {
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
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp-sandbox/mcp"))
                .header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }
}
