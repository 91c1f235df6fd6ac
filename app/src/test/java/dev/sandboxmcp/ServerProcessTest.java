package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The server as its own process, configured only by the environment, as {@code java -jar} runs it. */
public class ServerProcessTest {

    static final String TOKEN = "process-token-" + "0123456789abcdefghijklmnopqrstuvwxyz";

    @TempDir
    Path temp;

    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of("no token", Map.of(), "MCP_AUTH_TOKEN"),
                Arguments.of("short token", Map.of("MCP_AUTH_TOKEN", "x".repeat(31)), "31 characters"),
                Arguments.of("token file missing", Map.of("MCP_AUTH_TOKEN_FILE", "/nonexistent/token"), "cannot be read"),
                Arguments.of("workspace missing", Map.of("MCP_AUTH_TOKEN", TOKEN, "MCP_WORKSPACE", "/nonexistent/ws"),
                        "does not exist"),
                Arguments.of("workspace is a file", Map.of("MCP_AUTH_TOKEN", TOKEN, "MCP_WORKSPACE", "/etc/hostname"),
                        "not a directory"),
                Arguments.of("bad address", Map.of("MCP_AUTH_TOKEN", TOKEN, "MCP_ADDR", "localhost"), "MCP_ADDR"),
                Arguments.of("bad timeout", Map.of("MCP_AUTH_TOKEN", TOKEN, "MCP_COMMAND_TIMEOUT_SECONDS", "soon"),
                        "MCP_COMMAND_TIMEOUT_SECONDS"),
                Arguments.of("bad base path", Map.of("MCP_AUTH_TOKEN", TOKEN, "MCP_BASE_PATH", "/a b"), "MCP_BASE_PATH"),
                Arguments.of("bad trusted proxy", Map.of("MCP_AUTH_TOKEN", TOKEN, "MCP_TRUSTED_PROXIES", "traefik"),
                        "MCP_TRUSTED_PROXIES"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void refusesToStartWithOneClearLine(String name, Map<String, String> env, String expected) throws Exception {
        Map<String, String> full = new HashMap<>(Map.of("MCP_WORKSPACE", temp.toString(), "MCP_ADDR", "127.0.0.1:0"));
        full.putAll(env);
        Process process = launch(full, List.of());
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.exitValue()).isEqualTo(2);
        assertThat(stderr.lines().filter(l -> !l.isBlank()).toList()).singleElement().asString()
                .startsWith("sandbox-mcp: ").contains(expected);
    }

    @Test
    void tokenIsNeverVisibleToCommandsOrLogs() throws Exception {
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), List.of())) {
            String command = "env; echo; cat /proc/$PPID/environ; echo; cat /proc/$PPID/cmdline; "
                    + "for f in /proc/[0-9]*/environ; do cat \"$f\"; done 2>/dev/null | tr '\\0' '\\n'";
            String response = server.runCommand(command);
            assertThat(response).contains("\"exit_code\"").contains("PATH=");
            if (!response.contains(TOKEN)) {
                return;
            }
            throw new AssertionError("the token leaked to a command; context: "
                    + response.substring(Math.max(0, response.indexOf(TOKEN) - 300), response.indexOf(TOKEN)));
        }
    }

    @Test
    void tokenIsNeverLogged() throws Exception {
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), List.of())) {
            server.runCommand("echo hello");
            server.stop();
            assertThat(server.output()).contains("tool_call").doesNotContain(TOKEN);
        }
    }

    /** A call the server never finishes (killed meanwhile) is in the audit all the same: its start line was written first. */
    @Test
    void aCallIsAuditedAsItStartsNotOnlyWhenItEnds() throws Exception {
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), List.of())) {
            server.runCommand("echo first");
            String command = "echo started > started; sleep 30";
            CompletableFuture<HttpResponse<String>> call = http.sendAsync(McpCalls.post(server.port, TOKEN,
                    McpCalls.toolsCall("7", "run_command", "{\"command\":" + McpCalls.jsonString(command) + "}")),
                    HttpResponse.BodyHandlers.ofString());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(server.workspace.resolve("started")) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(server.workspace.resolve("started")).exists();
            server.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            assertThat(call).failsWithin(10, TimeUnit.SECONDS);
            String output = server.output();
            assertThat(ProcessLog.auditLines(output)).as(output).extracting(line -> line.get("target"))
                    .containsExactly("echo first");
            assertThat(ProcessLog.startLines(output)).as(output).extracting(line -> line.get("target"))
                    .containsExactly("echo first", command);
        }
    }

    /** The runner, the killed server's child, removes the socket and the private directory the server could not. */
    @Test
    void aServerKilledOutrightLeavesNoSocketDirectoryBehind() throws Exception {
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), List.of())) {
            ProcessHandle runner = server.process.toHandle().children().findFirst().orElseThrow();
            String environ = Files.readString(Path.of("/proc/" + runner.pid() + "/environ"));
            Path socket = Path.of(Stream.of(environ.split("\0")).filter(v -> v.startsWith("MCP_RUNNER_SOCKET="))
                    .findFirst().orElseThrow().substring("MCP_RUNNER_SOCKET=".length()));
            assertThat(socket).exists();
            server.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            assertThat(runner.onExit().get(30, TimeUnit.SECONDS).isAlive()).isFalse();
            assertThat(socket.getParent()).as("the killed server's socket directory").doesNotExist();
        }
    }

    @Test
    void valuesFromAClientCannotForgeALogOrAuditLine() throws Exception {
        // A request id and a cancel reason reach the log; each carries an audit line (the issue's, and a
        // whole one) between line breaks of every kind, and the reason half a surrogate pair too.
        String id = McpCalls.jsonString("id\n{\"event\":\"tool_call\",\"target\":\"FORGED-1\"}\r\n"); // the log shows 80 characters
        String reason = McpCalls.jsonString("why\n" + ProcessLog.forgedAuditLine("FORGED-2") + "\n").replace("why", "why\\u2028\\ud800");
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), List.of())) {
            CompletableFuture<HttpResponse<String>> call = http.sendAsync(McpCalls.post(server.port, TOKEN,
                    McpCalls.toolsCall(id, "run_command", "{\"command\":\"echo started > started; sleep 60\"}")),
                    HttpResponse.BodyHandlers.ofString());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(server.workspace.resolve("started")) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            http.send(McpCalls.post(server.port, TOKEN, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                    + "\"params\":{\"requestId\":" + id + ",\"reason\":" + reason + "}}"), HttpResponse.BodyHandlers.discarding());
            assertThat(call.get(60, TimeUnit.SECONDS).body()).contains("cancelled");
            server.stop();
            String output = server.output();
            assertThat(output).as("the values were logged").contains("FORGED-1").contains("FORGED-2");
            assertThat(ProcessLog.auditLines(output)).as(output).extracting(line -> line.get("target"))
                    .containsExactly("echo started > started; sleep 60");
        }
    }

    @Test
    void tokenFileWorksAndItsPathIsNotPassedOn() throws Exception {
        Path tokenFile = Files.writeString(temp.resolve("token"), TOKEN + "\n");
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN_FILE", tokenFile.toString()), List.of())) {
            String response = server.runCommand("env");
            assertThat(response).contains("\"exit_code\":0").doesNotContain("MCP_AUTH_TOKEN_FILE");
        }
    }

    @Test
    void sigtermKillsRunningCommandsAndExitsWithinSeconds() throws Exception {
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), List.of())) {
            Path pidFile = server.workspace.resolve("sleeper.pid");
            CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
                try {
                    return server.runCommand("echo $$ > sleeper.pid; sleep 300");
                } catch (Exception e) {
                    return e.toString();
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while ((!Files.exists(pidFile) || Files.readString(pidFile).isBlank()) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            long sleeper = Long.parseLong(Files.readString(pidFile).strip());
            long started = System.nanoTime();
            server.process.destroy(); // SIGTERM
            assertThat(server.process.waitFor(10, TimeUnit.SECONDS)).as("exits after SIGTERM").isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(6_000);
            assertThat(ProcessHandle.of(sleeper).map(ProcessHandle::isAlive).orElse(false)).isFalse();
            call.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void burstOfLargestMessagesIsAnsweredWithoutExhaustingTheHeap() throws Exception {
        // 40 messages just under the 8 MiB limit at once would need well over a GiB of heap
        // while parsed and validated; the body budget lets a few through at a time.
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), Server.SMALL_HEAP)) {
            int frame = McpCalls.toolsCall("1", "write_file", "{\"path\":\"big.txt\",\"content\":\"\"}").length();
            HttpRequest request = McpCalls.post(server.port, TOKEN, McpCalls.toolsCall("1", "write_file",
                    "{\"path\":\"big.txt\",\"content\":\"" + "x".repeat(8 * 1024 * 1024 - frame) + "\"}"));
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                calls.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
            }
            int refusedAsTooLargeContent = 0;
            int busy = 0;
            for (CompletableFuture<HttpResponse<String>> call : calls) {
                HttpResponse<String> response = call.get(120, TimeUnit.SECONDS);
                if (response.statusCode() == 503) {
                    assertThat(response.body()).contains("busy").contains("\"jsonrpc\":\"2.0\"");
                    busy++;
                } else {
                    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                    assertThat(response.body()).contains("\"isError\":true").contains("over the limit");
                    refusedAsTooLargeContent++;
                }
            }
            System.out.printf("40 messages of 8 MiB at once: %d answered by the tool, %d refused as busy%n",
                    refusedAsTooLargeContent, busy);
            assertThat(refusedAsTooLargeContent).isPositive();
            assertThat(server.process.isAlive()).as(server.output()).isTrue();
            assertThat(server.health()).isEqualTo(200);
            assertThat(server.output()).doesNotContain("OutOfMemoryError");
        }
    }

    @Test
    void hundredMegabytesOfOutputFitInASmallHeap() throws Exception {
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), List.of("-Xmx48m"))) {
            String response = server.runCommand("head -c 100000000 /dev/zero | tr '\\\\0' x; echo done >&2");
            assertThat(response).contains("\"stdout_bytes\":100000000").contains("\"stdout_truncated\":true")
                    .contains("\"stderr\":\"done\\n\"");
            assertThat(server.health()).isEqualTo(200);
        }
    }

    @Test
    void pageOfAThreeHundredMegabyteLineIsCutInASmallHeap() throws Exception {
        // The old pager held a line until its newline: this call ended in OutOfMemoryError.
        try (Server server = Server.start(this, Map.of("MCP_AUTH_TOKEN", TOKEN), Server.SMALL_HEAP)) {
            long size = 300L * 1024 * 1024;
            try (FileChannel file = FileChannel.open(server.workspace.resolve("one-line.txt"),
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer block = ByteBuffer.wrap("x".repeat(1024 * 1024).getBytes(StandardCharsets.US_ASCII));
                for (long written = 0; written < size; written += block.capacity()) {
                    file.write(block.clear());
                }
            }
            long started = System.nanoTime();
            String page = server.callTool("read_file", "{\"path\":\"one-line.txt\",\"offset\":1,\"limit\":1}");
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            System.out.printf("read_file page of a %d-byte line: %d ms, %d-byte response%n", size, millis, page.length());
            assertThat(page).doesNotContain("\"isError\":true").contains("\"line_truncated\":true")
                    .contains("\"line_bytes\":" + size).contains("\"rest_byte_offset\":1048576")
                    .contains("\"total_lines\":1").contains("longer than a page");
            assertThat(page.length()).isLessThan(3 * 1024 * 1024);
            assertThat(server.health()).isEqualTo(200);
            assertThat(server.callTool("read_file", "{\"path\":\"one-line.txt\",\"offset\":1,\"limit\":1}"))
                    .contains("\"line_truncated\":true");
            assertThat(server.process.isAlive()).isTrue();
            assertThat(server.output()).doesNotContain("OutOfMemoryError");
        }
    }

    Process launch(Map<String, String> env, List<String> jvmOptions) throws IOException {
        return serverProcess(env, jvmOptions).start();
    }

    /** {@code java ... dev.sandboxmcp.Main} on the test class path, with only {@code env} as MCP_ settings. */
    public static ProcessBuilder serverProcess(Map<String, String> env, List<String> jvmOptions) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().keySet().removeIf(k -> k.startsWith("MCP_"));
        builder.environment().putAll(env);
        return builder;
    }

    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** A server process on a free port, its output collected. */
    static final class Server implements AutoCloseable {
        /** A heap that a few of the largest messages at once would exhaust, and an exit (not a limp) if they do. */
        static final List<String> SMALL_HEAP = List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError");

        final Process process;
        final int port;
        final Path workspace;
        final Path log;
        final HttpClient http;

        private Server(Process process, int port, Path workspace, Path log, HttpClient http) {
            this.process = process;
            this.port = port;
            this.workspace = workspace;
            this.log = log;
            this.http = http;
        }

        /** A server with the test's token at {@link #SMALL_HEAP}, its workspace and log in {@code temp}. */
        static Server startSmallHeap(Path temp) throws Exception {
            ServerProcessTest host = new ServerProcessTest();
            host.temp = temp;
            return start(host, Map.of("MCP_AUTH_TOKEN", TOKEN), SMALL_HEAP);
        }

        static Server start(ServerProcessTest test, Map<String, String> env, List<String> jvmOptions) throws Exception {
            int port = freePort();
            Path workspace = Files.createDirectories(test.temp.resolve("ws-" + port));
            Path log = test.temp.resolve("server-" + port + ".log");
            Map<String, String> full = new HashMap<>(env);
            full.put("MCP_ADDR", "127.0.0.1:" + port);
            full.put("MCP_WORKSPACE", workspace.toString());
            Process process = test.launchTo(full, jvmOptions, log);
            Server server = new Server(process, port, workspace, log, test.http);
            // Generous: a JVM with a small heap starts slowly on a loaded 2-core machine; only its start waits here.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (System.nanoTime() < deadline) {
                if (!process.isAlive()) {
                    throw new AssertionError("server exited: " + server.output());
                }
                try {
                    if (server.health() == 200) {
                        return server;
                    }
                } catch (IOException notYet) {
                    Thread.sleep(50);
                }
            }
            process.destroyForcibly();
            throw new AssertionError("server did not become healthy: " + server.output());
        }

        int health() throws Exception {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        }

        String runCommand(String command) throws Exception {
            return callTool("run_command", "{\"command\":" + McpCalls.jsonString(command) + ",\"timeout_seconds\":60}");
        }

        /** A tools/call of {@code tool} with {@code arguments} (JSON text); the response body. */
        String callTool(String tool, String arguments) throws Exception {
            return McpCalls.callTool(http, port, TOKEN, tool, arguments);
        }

        void stop() throws InterruptedException {
            process.destroy();
            process.waitFor(10, TimeUnit.SECONDS);
        }

        String output() throws IOException {
            return Files.exists(log) ? Files.readString(log) : "";
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    Process launchTo(Map<String, String> env, List<String> jvmOptions, Path log) throws IOException {
        return serverProcess(env, jvmOptions).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }
}
