package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandboxmcp.TestServer;
import dev.sandboxmcp.tools.ToolCatalog;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The SDK's own Java client, over real HTTP on loopback, through the base path, on both transports. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class McpTransportsTest {

    Path workspace;
    TestServer server;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        workspace = dir;
        server = TestServer.start(workspace);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    Stream<Arguments> transports() {
        return Stream.of(
                Arguments.of("streamable", (Function<TestServer, McpSyncClient>) TestServer::streamableClient),
                Arguments.of("sse", (Function<TestServer, McpSyncClient>) TestServer::sseClient));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void listsEveryToolWithSchemasAndAnnotations(String name, Function<TestServer, McpSyncClient> connect) {
        try (McpSyncClient client = connect.apply(server)) {
            McpSchema.InitializeResult init = client.initialize();
            assertThat(init.serverInfo().name()).isEqualTo("sandbox-mcp");
            assertThat(init.instructions()).contains("workspace").contains("120 s").contains("within 50 s").contains("16 KiB")
                    .contains("configuration, hooks and .git/info are mounted").contains("ask them to make it");

            List<McpSchema.Tool> tools = client.listTools().tools();
            assertThat(tools).extracting(McpSchema.Tool::name)
                    .containsExactlyElementsOf(ToolCatalog.names());
            for (McpSchema.Tool tool : tools) {
                assertThat(tool.title()).isNotBlank();
                assertThat(tool.description()).isNotBlank();
                assertThat(tool.inputSchema()).containsEntry("type", "object").containsKey("properties");
                assertThat(tool.outputSchema()).containsKey("properties");
                assertThat(tool.annotations()).isNotNull();
            }
            McpSchema.Tool read = tools.stream().filter(t -> t.name().equals("read_file")).findFirst().orElseThrow();
            assertThat(read.annotations().readOnlyHint()).isTrue();
            McpSchema.Tool run = tools.stream().filter(t -> t.name().equals("run_command")).findFirst().orElseThrow();
            assertThat(run.annotations().destructiveHint()).isTrue();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void callsEachToolAndGetsStructuredResults(String name, Function<TestServer, McpSyncClient> connect) throws Exception {
        try (McpSyncClient client = connect.apply(server)) {
            client.initialize();
            String file = name + "/notes.txt";
            Files.createDirectories(workspace.resolve(name));

            CallToolResult write = client.callTool(new CallToolRequest("write_file",
                    Map.of("path", file, "content", "héllo from " + name + "\n")));
            assertThat(write.isError()).isFalse();
            assertThat(structured(write)).containsEntry("path", file).containsEntry("appended", false);
            assertThat(workspace.resolve(file)).hasContent("héllo from " + name);

            CallToolResult append = client.callTool(new CallToolRequest("write_file",
                    Map.of("path", file, "content", "more\n", "append", true)));
            assertThat(append.isError()).isFalse();

            CallToolResult read = client.callTool(new CallToolRequest("read_file", Map.of("path", file)));
            assertThat(read.isError()).isFalse();
            assertThat(structured(read)).containsEntry("content", "héllo from " + name + "\nmore\n");
            assertThat(text(read)).isEqualTo("héllo from " + name + "\nmore\n");

            CallToolResult run = client.callTool(new CallToolRequest("run_command",
                    Map.of("command", "wc -l < notes.txt; echo oops >&2; exit 3", "cwd", name)));
            assertThat(run.isError()).isFalse();
            Map<String, Object> result = structured(run);
            assertThat(result).containsEntry("exit_code", 3).containsEntry("stdout", "2\n")
                    .containsEntry("stderr", "oops\n").containsEntry("timed_out", false)
                    .containsEntry("stdout_truncated", false).containsKeys("duration_ms", "stdout_bytes", "stderr_bytes");
            assertThat(text(run)).contains("exit code 3").contains("oops");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void toolFailuresAreToolErrorsWithActionableMessages(String name, Function<TestServer, McpSyncClient> connect) {
        try (McpSyncClient client = connect.apply(server)) {
            client.initialize();
            CallToolResult missing = client.callTool(new CallToolRequest("read_file", Map.of("path", "nope.txt")));
            assertThat(missing.isError()).isTrue();
            assertThat(text(missing)).contains("no such file").contains("nope.txt");

            CallToolResult escape = client.callTool(new CallToolRequest("read_file", Map.of("path", "../../etc/passwd")));
            assertThat(escape.isError()).isTrue();
            assertThat(text(escape)).contains("outside the workspace");

            CallToolResult badTimeout = client.callTool(new CallToolRequest("run_command",
                    Map.of("command", "true", "timeout_seconds", 121)));
            assertThat(badTimeout.isError()).isTrue();
            assertThat(text(badTimeout)).contains("timeout_seconds").contains("120");

            CallToolResult zeroTimeout = client.callTool(new CallToolRequest("run_command",
                    Map.of("command", "true", "timeout_seconds", 0)));
            assertThat(zeroTimeout.isError()).isTrue();

            CallToolResult badCwd = client.callTool(new CallToolRequest("run_command",
                    Map.of("command", "pwd", "cwd", "../")));
            assertThat(badCwd.isError()).isTrue();
            assertThat(text(badCwd)).contains("cwd");

            CallToolResult tooBig = client.callTool(new CallToolRequest("write_file",
                    Map.of("path", "big.txt", "content", "x".repeat(1024 * 1024 + 1))));
            assertThat(tooBig.isError()).isTrue();
            assertThat(text(tooBig)).contains("limit");
            assertThat(workspace.resolve("big.txt")).doesNotExist();

            assertThatThrownBy(() -> client.callTool(new CallToolRequest("format_disk", Map.of())))
                    .isInstanceOf(McpError.class).hasMessageContaining("Unknown tool");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void writeLimitHoldsAtTheEdge(String name, Function<TestServer, McpSyncClient> connect) throws Exception {
        try (McpSyncClient client = connect.apply(server)) {
            client.initialize();
            String exact = "y".repeat(1024 * 1024);
            CallToolResult write = client.callTool(new CallToolRequest("write_file",
                    Map.of("path", name + "-exact.txt", "content", exact)));
            assertThat(write.isError()).isFalse();
            CallToolResult read = client.callTool(new CallToolRequest("read_file",
                    Map.of("path", name + "-exact.txt", "limit", 1)));
            assertThat(read.isError()).isFalse();
            assertThat(structured(read)).containsEntry("bytes", 1024 * 1024);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void everyCallLeavesAnAuditLineAsItStartsAndOneAsItEndsWithoutContents(String name,
            Function<TestServer, McpSyncClient> connect) {
        String marker = "audit-" + name + "-" + System.nanoTime();
        try (McpSyncClient client = connect.apply(server)) {
            client.initialize();
            client.callTool(new CallToolRequest("write_file",
                    Map.of("path", marker + ".txt", "content", "SECRET-CONTENT-" + name)));
            client.callTool(new CallToolRequest("run_command", Map.of("command", "echo " + marker)));
        }
        List<String> starts = server.auditLog().lines().filter(l -> l.contains(marker))
                .filter(l -> l.contains("\"event\":\"tool_call_started\"")).toList();
        assertThat(starts).hasSize(2);
        assertThat(starts.get(0)).contains("\"tool\":\"write_file\"").contains("\"client\":\"127.0.0.1\"")
                .doesNotContain("SECRET-CONTENT").doesNotContain("\"outcome\"");
        assertThat(dev.sandboxmcp.ProcessLog.auditLines(server.auditLog())).as("each end follows its start").isNotEmpty();
        List<String> lines = server.auditLog().lines().filter(l -> l.contains(marker))
                .filter(l -> l.contains("\"event\":\"tool_call\"")).toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("\"tool\":\"write_file\"").contains("\"outcome\":\"ok\"")
                .contains("\"client\":\"127.0.0.1\"").contains("\"bytes\":").doesNotContain("SECRET-CONTENT");
        assertThat(lines.get(1)).contains("\"tool\":\"run_command\"").contains("\"exit_code\":0")
                .contains("\"duration_ms\":");
        assertThat(server.auditLog()).doesNotContain(TestServer.TOKEN);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void runCommandFeedsStdinThenClosesIt(String name, Function<TestServer, McpSyncClient> connect) {
        try (McpSyncClient client = connect.apply(server)) {
            client.initialize();
            CallToolResult result = client.callTool(new CallToolRequest("run_command",
                    Map.of("command", "tr a-z A-Z; echo \"[eof]\"", "stdin", "hello\nworld\n")));
            assertThat(structured(result)).containsEntry("stdout", "HELLO\nWORLD\n[eof]\n").containsEntry("exit_code", 0);
        }
    }

    @org.junit.jupiter.api.Test
    void longCommandsSendProgressNotificationsOnSse() {
        List<McpSchema.ProgressNotification> received = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (McpSyncClient client = io.modelcontextprotocol.client.McpClient.sync(
                        dev.sandboxmcp.verify.BearerClients.sse(server.origin(), TestServer.BASE, TestServer.TOKEN))
                .progressConsumer(received::add)
                .requestTimeout(java.time.Duration.ofSeconds(60)).build()) {
            client.initialize();
            CallToolResult result = client.callTool(CallToolRequest.builder().name("run_command")
                    .arguments(Map.of("command", "sleep 6; echo done")).progressToken("tok-1").build());
            assertThat(structured(result)).containsEntry("stdout", "done\n");
        }
        assertThat(received).isNotEmpty().allSatisfy(n -> {
            assertThat(n.progressToken()).isEqualTo("tok-1");
            assertThat(n.message()).startsWith("running for ");
            assertThat(n.total()).isEqualTo(30.0);
        });
    }

    @org.junit.jupiter.api.Test
    void jobsBelongToTheServerAndOutliveTheClientThatStartedThem() throws Exception {
        String id;
        try (McpSyncClient starter = server.streamableClient()) {
            starter.initialize();
            CallToolResult started = starter.callTool(new CallToolRequest("start_job",
                    Map.of("command", "echo begin; sleep 1; echo end")));
            assertThat(started.isError()).isFalse();
            id = (String) structured(started).get("id");
            assertThat(structured(started)).containsEntry("running", true);
        }
        try (McpSyncClient other = server.sseClient()) {
            other.initialize();
            Map<String, Object> output = Map.of();
            for (int i = 0; i < 100; i++) {
                output = structured(other.callTool(new CallToolRequest("job_output", Map.of("id", id))));
                if (Boolean.FALSE.equals(output.get("running"))) {
                    break;
                }
                Thread.sleep(50);
            }
            assertThat(output).containsEntry("running", false).containsEntry("exit_code", 0)
                    .containsEntry("output", "begin\nend\n").containsEntry("has_more", false);
            assertThat(text(other.callTool(new CallToolRequest("list_jobs", Map.of())))).contains(id);

            CallToolResult sleeper = other.callTool(new CallToolRequest("start_job", Map.of("command", "sleep 300")));
            String sleeperId = (String) structured(sleeper).get("id");
            CallToolResult stopped = other.callTool(new CallToolRequest("stop_job", Map.of("id", sleeperId)));
            assertThat(structured(stopped)).containsEntry("running", false).containsEntry("stopped", true);
            CallToolResult escape = other.callTool(new CallToolRequest("start_job", Map.of("command", "pwd", "cwd", "../..")));
            assertThat(escape.isError()).isTrue();
            assertThat(text(escape)).contains("outside the workspace");
            CallToolResult unknown = other.callTool(new CallToolRequest("job_output", Map.of("id", "job-nope")));
            assertThat(unknown.isError()).isTrue();
            assertThat(text(unknown)).contains("list_jobs");
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> structured(CallToolResult result) {
        return (Map<String, Object>) result.structuredContent();
    }

    static String text(CallToolResult result) {
        return ((McpSchema.TextContent) result.content().getFirst()).text();
    }
}
