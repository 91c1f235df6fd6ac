package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Programs that wait for input, driven as an assistant would: start_job with stdin_open, read the
 * prompt with job_output, answer with job_input, read what came back from output_offset.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JobInputTest {

    TestServer server;
    McpSyncClient client;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
        client = server.streamableClient();
        client.initialize();
    }

    @AfterAll
    void stop() {
        client.close();
        server.close();
    }

    private CallToolResult call(String tool, Map<String, Object> arguments) {
        return client.callTool(new CallToolRequest(tool, arguments));
    }

    private String startWithStdin(String command) {
        Map<String, Object> job = CommandUsageTest.structured(call("start_job", Map.of("command", command, "stdin_open", true)));
        assertThat(job).containsEntry("stdin_open", true);
        return (String) job.get("id");
    }

    /** Reads the job's output from {@code offset} until it holds {@code expected}; returns it. */
    private String awaitOutput(String id, long offset, String expected) throws InterruptedException {
        String output = "";
        for (int i = 0; i < 300; i++) {
            output = (String) CommandUsageTest.structured(call("job_output", Map.of("id", id, "offset", offset))).get("output");
            if (output.contains(expected)) {
                return output;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(id + " never printed " + expected + "; its output from " + offset + ": " + output);
    }

    /** Writes {@code input} and returns where the output stood then. */
    private long send(String id, String input) {
        Map<String, Object> written = CommandUsageTest.structured(call("job_input", Map.of("id", id, "input", input)));
        assertThat(written).containsEntry("bytes_written", input.getBytes().length).containsEntry("bytes_pending", 0);
        return ((Number) written.get("output_offset")).longValue();
    }

    @Test
    void aYesNoPromptIsAnswered() throws Exception {
        String id = startWithStdin("printf 'Drop the table? [y/N] '; read answer; "
                + "if [ \"$answer\" = y ]; then echo dropped; else echo kept; fi");
        awaitOutput(id, 0, "[y/N] ");
        long offset = send(id, "y\n");
        assertThat(awaitOutput(id, offset, "dropped")).isEqualTo("dropped\n");
    }

    @Test
    void aPythonReplIsDrivenLineByLineAndEndsAtEndOfFile() throws Exception {
        String id = startWithStdin("python3 -i -q");
        awaitOutput(id, 0, ">>> ");
        long offset = send(id, "x = 6 * 7\n");
        offset = send(id, "print(x)\n");
        assertThat(awaitOutput(id, offset, "42\n")).startsWith("42\n");
        offset = send(id, "def twice(n):\n    return 2 * n\n\n");
        offset = send(id, "twice(x)\n");
        assertThat(awaitOutput(id, offset, "84\n")).contains("84\n");

        Map<String, Object> closed = CommandUsageTest.structured(call("job_input", Map.of("id", id, "close", true)));
        assertThat(closed).containsEntry("stdin_open", false);
        Map<String, Object> job = CommandUsageTest.awaitEnded(client, id);
        assertThat(job).as("end of file ends the REPL").containsEntry("running", false).containsEntry("exit_code", 0);
        CallToolResult late = call("job_input", Map.of("id", id, "input", "1\n"));
        assertThat(late.isError()).isTrue();
        assertThat(CommandUsageTest.text(late)).contains(id + " has ended").contains("job_output");
    }

    @Test
    void aJobStartedWithoutStdinSaysHowToStartOne() {
        String id = (String) CommandUsageTest.structured(call("start_job", Map.of("command", "sleep 30"))).get("id");
        CallToolResult refused = call("job_input", Map.of("id", id, "input", "y\n"));
        assertThat(refused.isError()).isTrue();
        assertThat(CommandUsageTest.text(refused)).contains("without stdin_open").contains("stdin_open: true");
        call("stop_job", Map.of("id", id));
    }

    @Test
    void inputOverTheLimitIsRefusedWholeAndNothingIsWritten() throws Exception {
        String id = startWithStdin("wc -c");
        int limit = dev.sandboxmcp.config.Limits.defaults().jobInputBytes();
        CallToolResult over = call("job_input", Map.of("id", id, "input", "x".repeat(limit + 1)));
        assertThat(over.isError()).isTrue();
        assertThat(CommandUsageTest.text(over)).contains("over the limit of " + limit).contains("several calls");
        CallToolResult exact = call("job_input", Map.of("id", id, "input", "x".repeat(limit), "close", true));
        assertThat(CommandUsageTest.structured(exact)).containsEntry("bytes_written", limit);
        assertThat(awaitOutput(id, 0, "\n")).as("only the call within the limit reached it").isEqualTo(limit + "\n");
    }
}
