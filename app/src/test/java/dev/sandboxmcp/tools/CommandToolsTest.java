package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.workspace.Workspace;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** run_command's input limits and start_job's job limit, called the way the dispatcher calls them. */
class CommandToolsTest {

    static final int MIB = 1024 * 1024;
    static final Map<String, String> ENVIRONMENT = Map.of("PATH", "/usr/bin:/bin");

    @TempDir
    Path root;
    Workspace workspace;
    CommandRunner runner;
    JobManager jobs;
    RunCommandTool run;

    @BeforeEach
    void setUp() throws Exception {
        workspace = Workspace.open(root);
        runner = new CommandRunner(ENVIRONMENT, MIB, Duration.ofSeconds(1), 2);
        jobs = new JobManager(ENVIRONMENT, 64 * 1024, Duration.ofSeconds(1), 1, 4);
        run = new RunCommandTool(runner, jobs, workspace, Limits.defaults());
    }

    @AfterEach
    void tearDown() throws Exception {
        jobs.close();
        runner.close();
        workspace.close();
    }

    static ToolResponse call(SandboxTool tool, Map<String, Object> arguments) {
        return ToolCalls.call(tool, arguments);
    }

    @Test
    void commandLengthLimitIsTheKernelsAndHoldsAtItsEdge() throws Exception {
        String longest = "echo ok #" + "x".repeat(Limits.COMMAND_BYTES - 1 - "echo ok #".length());
        ToolResponse exact = call(run, Map.of("command", longest));
        assertThat(exact.structured()).containsEntry("exit_code", 0).containsEntry("stdout", "ok\n");
        ToolResponse over = call(run, Map.of("command", longest + "x"));
        assertThat(over.error()).isTrue();
        assertThat(over.text()).contains("131072 bytes").contains("write_file");
    }

    @Test
    void stdinLimitHoldsAtItsEdge() throws Exception {
        ToolResponse exact = call(run, Map.of("command", "wc -c", "stdin", "s".repeat(MIB)));
        assertThat(exact.structured()).containsEntry("stdout", MIB + "\n");
        ToolResponse over = call(run, Map.of("command", "wc -c", "stdin", "s".repeat(MIB + 1)));
        assertThat(over.error()).isTrue();
        assertThat(over.text()).contains("over the limit");
    }

    @Test
    void startJobAtTheLimitSaysHowToFreeASlot() throws Exception {
        StartJobTool start = new StartJobTool(jobs, workspace, Limits.defaults());
        assertThat(call(start, Map.of("command", "sleep 300")).error()).isFalse();
        ToolResponse refused = call(start, Map.of("command", "true"));
        assertThat(refused.error()).isTrue();
        assertThat(refused.text()).contains("1 jobs are already running").contains("stop_job");
    }
}
