package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/** What a command took, as run_command and the job tools report it, through the real server and its runner. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EnabledIf(value = "timeIsInstalled", disabledReason = "needs /usr/bin/time (Debian's time package) and python3")
class CommandUsageTest {

    TestServer server;
    McpSyncClient client;
    Path workspace;

    static boolean timeIsInstalled() {
        return Files.isExecutable(Path.of("/usr/bin/time")) && Files.isExecutable(Path.of("/usr/bin/python3"));
    }

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        this.workspace = workspace;
        server = TestServer.start(workspace);
        client = server.streamableClient();
        client.initialize();
    }

    @AfterAll
    void stop() {
        client.close();
        server.close();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> structured(CallToolResult result) {
        assertThat(result.isError()).as("%s", result.content()).isFalse();
        return (Map<String, Object>) result.structuredContent();
    }

    /** job_output once the job has ended (or what it says after 20 s). */
    static Map<String, Object> awaitEnded(McpSyncClient client, String id) throws InterruptedException {
        Map<String, Object> job = Map.of();
        for (int i = 0; i < 400; i++) {
            job = structured(client.callTool(new CallToolRequest("job_output", Map.of("id", id))));
            if (!(Boolean) job.get("running")) {
                break;
            }
            Thread.sleep(50);
        }
        return job;
    }

    static String text(CallToolResult result) {
        return ((TextContent) result.content().getFirst()).text();
    }

    private CallToolResult call(String tool, Map<String, Object> arguments) {
        return client.callTool(new CallToolRequest(tool, arguments));
    }

    @Test
    void aResultSaysWhatTheCommandTookInFieldsAndInOneLine() {
        CallToolResult result = call("run_command", Map.of("command",
                "python3 -c \"b = b'x' * (300 * 1024 * 1024); sum(range(3_000_000))\"; "
                        + "head -c 1048576 /dev/zero > one.mib; sync"));
        @SuppressWarnings("unchecked")
        Map<String, Object> usage = (Map<String, Object>) structured(result).get("usage");
        assertThat(((Number) usage.get("cpu_user_ms")).longValue()).isPositive();
        assertThat(((Number) usage.get("cpu_system_ms")).longValue()).isNotNegative();
        assertThat(((Number) usage.get("peak_rss_bytes")).longValue()).isGreaterThan(300L << 20);
        assertThat(usage).containsEntry("peak_rss_is_upper_bound", false);
        assertThat(((Number) usage.get("written_bytes")).longValue()).isGreaterThanOrEqualTo(1L << 20);
        assertThat(structured(result)).containsEntry("oom_killed", false);
        assertThat(text(result)).containsPattern("took [0-9.]+ s of CPU \\([0-9.]+ s user, [0-9.]+ s system\\) in [0-9.]+ s; "
                + "peak memory [0-9.]+ MiB \\(the largest process\\); [0-9.]+ (MiB|KiB) written to storage");
    }

    @Test
    void aSmallPeakIsGivenAsABoundNotAsAFigure() {
        CallToolResult result = call("run_command", Map.of("command", "true"));
        @SuppressWarnings("unchecked")
        Map<String, Object> usage = (Map<String, Object>) structured(result).get("usage");
        assertThat(usage).containsEntry("peak_rss_is_upper_bound", true);
        assertThat(text(result)).contains("peak memory at most ");
    }

    @Test
    void whatACommandOrphansIsReapedByTheRunnerAndCounted() throws Exception {
        // The subshell exits at once: time and its python are orphans, re-parented away from the command's shell.
        CallToolResult result = call("run_command", Map.of("command",
                "( /usr/bin/time -v -o orphan.txt python3 -c 'sum(i * i for i in range(15_000_000))' & ); "
                        + "while [ ! -s orphan.txt ]; do sleep 0.1; done", "timeout_seconds", 60));
        @SuppressWarnings("unchecked")
        Map<String, Object> usage = (Map<String, Object>) structured(result).get("usage");
        Matcher user = Pattern.compile("User time \\(seconds\\): ([0-9.]+)")
                .matcher(Files.readString(workspace.resolve("orphan.txt")));
        assertThat(user.find()).isTrue();
        double orphanMillis = Double.parseDouble(user.group(1)) * 1000;
        assertThat(orphanMillis).as("the orphan's work is CPU-bound").isGreaterThan(300);
        assertThat(((Number) usage.get("cpu_user_ms")).doubleValue()).as("the orphan's CPU is the command's")
                .isGreaterThanOrEqualTo(orphanMillis * 0.9);
    }

    @Test
    void aJobsUsageIsReportedOnceItHasEnded() throws Exception {
        String id = (String) structured(call("start_job", Map.of("command", "python3 -c 'sum(range(3_000_000))'")))
                .get("id");
        Map<String, Object> job = awaitEnded(client, id);
        assertThat(job).containsEntry("running", false).containsEntry("exit_code", 0).containsEntry("oom_killed", false);
        assertThat(job.get("usage")).isInstanceOf(Map.class);
        assertThat(text(call("list_jobs", Map.of()))).contains(id).contains("of CPU");
    }
}
