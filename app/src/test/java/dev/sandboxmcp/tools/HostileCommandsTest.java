package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Commands written to hurt the runner, through the real server: each returns within its
 * timeout plus a small grace, leaves nothing running, and the server stays healthy.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileCommandsTest {

    static final int TIMEOUT_SECONDS = 2;
    /** SIGTERM grace (2 s by default) plus reading and scheduling slack. */
    static final long ALLOWED_MILLIS = TIMEOUT_SECONDS * 1000L + 2_000 + 2_500;

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

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            output bomb on stdout        | yes
            output bomb on stderr        | yes >&2
            both streams at once         | yes out & yes err >&2; wait
            yes with no newline          | yes | tr -d '\\n'
            traps and ignores SIGTERM    | trap '' TERM; while :; do :; done
            double-forked daemon         | (setsid sh -c 'trap "" TERM HUP; exec sleep 300' &) ; sleep 300
            daemon that leaves at once   | (setsid sh -c 'trap "" TERM HUP; exec sleep 300' > /dev/null 2>&1 &) ; echo detached
            exec replaces the shell      | exec sleep 300
            closes its output early      | exec >&- 2>&-; sleep 300
            keeps the pipe in a daemon   | setsid sh -c 'sleep 300' & echo started
            reads stdin                  | read line; cat; echo "stdin gave: $line"
            """)
    void returnsInTimeAndLeavesNothingRunning(String name, String command) throws Exception {
        Set<Long> before = markedProcesses();
        long started = System.nanoTime();
        CallToolResult result = client.callTool(new CallToolRequest("run_command",
                Map.of("command", command, "timeout_seconds", TIMEOUT_SECONDS)));
        long millis = (System.nanoTime() - started) / 1_000_000;

        assertThat(result.isError()).as("%s: %s", name, result.content()).isFalse();
        assertThat(millis).as("%s took %d ms", name, millis).isLessThan(ALLOWED_MILLIS);
        @SuppressWarnings("unchecked")
        Map<String, Object> structured = (Map<String, Object>) result.structuredContent();
        assertThat(((String) structured.get("stdout")).length()).isLessThanOrEqualTo(256 * 1024);
        assertThat(((String) structured.get("stderr")).length()).isLessThanOrEqualTo(256 * 1024);

        // The runner sweeps again 0.1 s and 1 s after returning, for processes caught mid-fork.
        Set<Long> leftover = markedProcesses();
        for (int i = 0; i < 40 && !leftover.isEmpty(); i++) {
            Thread.sleep(50);
            leftover = markedProcesses();
            leftover.removeAll(before);
        }
        leftover.removeAll(before);
        assertThat(leftover).as("%s left processes running", name).isEmpty();
        assertThat(server.auditLog()).contains("\"tool\":\"run_command\"");
        var health = client.callTool(new CallToolRequest("run_command", Map.of("command", "echo healthy")));
        assertThat(health.isError()).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            background child                 | sleep 300 & echo started
            daemon that ignores SIGTERM      | (setsid sh -c 'trap "" TERM HUP; exec sleep 300' > /dev/null 2>&1 &) ; echo started
            an orphan's own child            | (sh -c 'sleep 300 & wait' > /dev/null 2>&1 &) ; echo started
            """)
    void whatAReturnedCommandLeftIsGoneWhenItsResultComesBack(String name, String command) throws Exception {
        Set<Long> before = markedProcesses();
        CallToolResult result = client.callTool(new CallToolRequest("run_command", Map.of("command", command)));
        // Looked at once, before the runner's first late sweep (0.1 s after it returns) would find them:
        // the runner looks for them among its orphans only, and must find every one.
        Set<Long> leftover = markedProcesses();
        leftover.removeAll(before);

        assertThat(result.isError()).as("%s: %s", name, result.content()).isFalse();
        assertThat(result.structuredContent().toString()).contains("exit_code=0");
        assertThat(leftover).as("%s: still running when its result came back", name).isEmpty();
    }

    /**
     * A daemon that exec's its program (setsid, then sh, then sleep) just as its command's shell
     * exits is caught in the middle of an exec by the kill at the command's end about one time in
     * ten; in that moment its environment reads empty (or, read a byte at a time, cut short). It is
     * still found, every time, before the result comes back (the code before looking again failed
     * this in nearly every run).
     */
    @Test
    void aDaemonCaughtInItsExecIsKilledBeforeTheResultEveryTime() throws Exception {
        int rounds = 60;
        int leftRunning = 0;
        for (int round = 0; round < rounds; round++) {
            Set<Long> before = markedProcesses();
            CallToolResult result = client.callTool(new CallToolRequest("run_command", Map.of("command",
                    "(setsid sh -c 'trap \"\" TERM HUP; exec sleep 300' > /dev/null 2>&1 &) ; echo detached")));
            Set<Long> leftover = markedProcesses();
            leftover.removeAll(before);
            assertThat(result.isError()).as("%s", result.content()).isFalse();
            if (!leftover.isEmpty()) {
                leftRunning++;
            }
        }
        assertThat(leftRunning).as("rounds of %d whose daemon still ran when the result came back", rounds).isZero();
    }

    /**
     * A leftover that no scan at the command's end could see (here: outside the session, its
     * marker taken off, put back by an exec 0.2 s later; in the wild, a daemon caught in the middle
     * of its exec) is found by a late sweep and, ignoring SIGTERM, killed a short grace after, not a
     * whole kill grace (2 s) later: a result is not followed by seconds of the command still running.
     */
    @Test
    void aLeftoverOnlyALateSweepFindsIsKilledAShortGraceAfter() throws Exception {
        Set<Long> before = markedProcesses();
        CallToolResult result = client.callTool(new CallToolRequest("run_command", Map.of("command", """
                m=$SANDBOX_MCP_RUN
                (M=$m setsid env -u SANDBOX_MCP_RUN sh -c \
                    'trap "" TERM HUP; sleep 0.2; exec env SANDBOX_MCP_RUN="$M" sleep 300' \
                    > /dev/null 2>&1 &)
                echo left""")));
        long returned = System.nanoTime();
        try {
            assertThat(result.isError()).as("%s", result.content()).isFalse();
            Set<Long> leftover = Set.of();
            boolean seen = false;
            while (System.nanoTime() - returned < 5_000_000_000L) {
                leftover = markedProcesses();
                leftover.removeAll(before);
                seen |= !leftover.isEmpty();
                if (seen && leftover.isEmpty()) {
                    break;
                }
                Thread.sleep(20);
            }
            long goneMillis = (System.nanoTime() - returned) / 1_000_000;
            assertThat(seen).as("the leftover took its marker back while the late sweeps looked").isTrue();
            assertThat(leftover).as("still running %d ms after the result", goneMillis).isEmpty();
            // The last late sweep is 1 s after the end, give or take a 50 ms tick; then 0.2 s of
            // grace. A whole kill grace (2 s) would make it 3 s.
            assertThat(goneMillis).as("gone %d ms after the result", goneMillis).isLessThan(2_500);
        } finally { // a failure here must not leave a TERM-ignoring sleep behind
            Set<Long> left = markedProcesses();
            left.removeAll(before);
            left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        }
    }

    /**
     * A process's environment in one read (as the runner reads it): read a byte first, as
     * {@code Files.readAllBytes} does, and a process in the middle of an exec can show one byte.
     */
    private static String environment(Path procEntry) throws IOException {
        try (FileInputStream in = new FileInputStream(procEntry.resolve("environ").toFile())) {
            byte[] block = new byte[64 * 1024]; // a command's is a few KiB
            return new String(block, 0, Math.max(0, in.read(block)), StandardCharsets.UTF_8);
        }
    }

    /** Live processes started by any command (they carry the runner's environment marker). */
    static Set<Long> markedProcesses() throws IOException {
        Set<Long> pids = new HashSet<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(Path.of("/proc"),
                p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path entry : entries) {
                try {
                    String stat = Files.readString(entry.resolve("stat"));
                    char state = stat.charAt(stat.lastIndexOf(')') + 2);
                    if (state != 'Z' && environment(entry).contains("SANDBOX_MCP_RUN=")) {
                        pids.add(Long.parseLong(entry.getFileName().toString()));
                    }
                } catch (IOException gone) {
                    // exited while we looked
                }
            }
        }
        return pids;
    }
}
