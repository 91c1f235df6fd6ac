package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What commands take and how they end, and input to a running job, in the deployment: the runner
 * container's 1 GiB memory limit and its real cgroup, its init, python3 from its toolchains.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UsageAndInputTest {

    ComposeDeployment deployment;
    McpSyncClient client;

    @BeforeAll
    void start() throws Exception {
        deployment = ComposeDeployment.start("usage");
        client = deployment.streamableClient();
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (deployment != null) {
            deployment.close();
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> usage(Map<String, Object> result) {
        assertThat(result).containsKey("usage");
        return (Map<String, Object>) result.get("usage");
    }

    static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().getFirst()).text();
    }

    @Test
    void aCommandOverTheMemoryLimitIsNamedAsKilledByTheOutOfMemoryKiller() {
        McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest("run_command",
                Map.of("command", "python3 -c \"b = b'x' * (2 * 1024 ** 3)\"", "timeout_seconds", 60)));
        @SuppressWarnings("unchecked")
        Map<String, Object> structured = (Map<String, Object>) result.structuredContent();
        assertThat(structured).as(text(result)).containsEntry("exit_code", 137).containsEntry("oom_killed", true)
                .containsEntry("memory_limit_bytes", 1 << 30);
        assertThat(text(result)).startsWith("killed by the out-of-memory killer (the sandbox's memory limit is 1 GiB");
        assertThat(Mcp.stdout(client, "echo the runner lives")).isEqualTo("the runner lives\n");

        Map<String, Object> killedByUs = Mcp.run(client, "sleep 30", 1);
        assertThat(killedByUs).as("a kill at the deadline is not the OOM killer's").containsEntry("timed_out", true)
                .containsEntry("oom_killed", false);
    }

    @Test
    void aResultCarriesWhatTheCommandTookAndWhatItOrphanedIsCounted() throws Exception {
        Map<String, Object> big = Mcp.run(client, "python3 -c \"b = b'x' * (300 * 1024 * 1024)\"", 60);
        assertThat(((Number) usage(big).get("peak_rss_bytes")).longValue()).isGreaterThan(300L << 20);
        assertThat(usage(big)).containsEntry("peak_rss_is_upper_bound", false);

        // The subshell exits at once: python is an orphan, which the container's init would reap
        // but for the runner, the subreaper of its commands.
        Map<String, Object> orphaning = Mcp.run(client, "( python3 -c \"import time; sum(i * i for i in range(10_000_000)); "
                + "open('orphan.cpu', 'w').write(str(time.process_time()))\" & ); "
                + "while [ ! -s orphan.cpu ]; do sleep 0.1; done; sleep 0.5", 60);
        double orphanMillis = Double.parseDouble(Files.readString(deployment.workspace.resolve("orphan.cpu"))) * 1000;
        long counted = ((Number) usage(orphaning).get("cpu_user_ms")).longValue()
                + ((Number) usage(orphaning).get("cpu_system_ms")).longValue();
        assertThat(orphanMillis).isGreaterThan(200);
        assertThat((double) counted).as("the orphan's CPU is the command's").isGreaterThanOrEqualTo(orphanMillis * 0.9);
    }

    private String startWithStdin(String command) {
        Map<String, Object> job = Mcp.call(client, "start_job", Map.of("command", command, "stdin_open", true));
        return (String) job.get("id");
    }

    private String awaitOutput(String id, long offset, String expected) throws InterruptedException {
        String output = "";
        for (int i = 0; i < 300; i++) {
            output = (String) Mcp.call(client, "job_output", Map.of("id", id, "offset", offset)).get("output");
            if (output.contains(expected)) {
                return output;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(id + " never printed " + expected + "; its output from " + offset + ": " + output);
    }

    private long send(String id, String input) {
        Map<String, Object> written = Mcp.call(client, "job_input", Map.of("id", id, "input", input));
        assertThat(written).containsEntry("bytes_pending", 0);
        return ((Number) written.get("output_offset")).longValue();
    }

    @Test
    void aPythonReplAndAYesNoPromptAreDrivenThroughJobInput() throws Exception {
        String repl = startWithStdin("python3 -i -q");
        awaitOutput(repl, 0, ">>> ");
        send(repl, "import sys\n");
        long offset = send(repl, "print(sys.version_info.major * 10 + 2)\n");
        assertThat(awaitOutput(repl, offset, "32\n")).startsWith("32\n");
        Map<String, Object> closed = Mcp.call(client, "job_input", Map.of("id", repl, "close", true));
        assertThat(closed).containsEntry("stdin_open", false);

        String prompt = startWithStdin("printf 'Overwrite config? [y/N] '; read answer; "
                + "case \"$answer\" in y|Y) echo overwritten;; *) echo left alone;; esac");
        awaitOutput(prompt, 0, "[y/N] ");
        long after = send(prompt, "n\n");
        assertThat(awaitOutput(prompt, after, "left alone")).isEqualTo("left alone\n");

        for (int i = 0; i < 100; i++) {
            Map<String, Object> job = Mcp.call(client, "job_output", Map.of("id", repl));
            if (Boolean.FALSE.equals(job.get("running"))) {
                assertThat(job).as("end of file ends the REPL").containsEntry("exit_code", 0);
                assertThat(usage(job)).containsKey("cpu_user_ms");
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(repl + " still running after its stdin was closed");
    }
}
