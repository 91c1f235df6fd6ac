package dev.sandboxmcp.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import dev.sandboxmcp.tools.ToolCatalog;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The TypeScript SDK client, which Poke uses, against the real server: the pinned 1.17.3 and
 * the newest 1.x, each from its own committed lockfile ({@code make test} runs {@code npm ci}).
 */
class TypeScriptClientInteropTest {

    static final Path INTEROP = Path.of("..", "tests", "interop").toAbsolutePath().normalize();

    @TempDir
    Path workspace;

    @ParameterizedTest(name = "sdk {0}")
    @ValueSource(strings = {"sdk-1.17.3", "sdk-latest"})
    void listsAndCallsEveryToolOverBothTransports(String sdk) throws Exception {
        try (TestServer server = TestServer.start(workspace)) {
            Process node = node(sdk, server.url(TestServer.BASE), List.of());
            assertThat(node.waitFor(90, TimeUnit.SECONDS)).as("node finished").isTrue();
            String output = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(node.exitValue()).as(output).isZero();
            assertThat(output).contains("ok streamable").contains("ok sse");
        }
    }

    @ParameterizedTest(name = "sdk {0}")
    @ValueSource(strings = {"sdk-1.17.3", "sdk-latest"})
    void clientCarriesOnAcrossAServerRestart(String sdk) throws Exception {
        TestServer first = TestServer.start(workspace);
        int port = first.port();
        Process node = node(sdk, first.url(TestServer.BASE), List.of("--across-restart"));
        try (BufferedReader out = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).isEqualTo("READY");
            first.close();
            try (TestServer second = TestServer.start(workspace, Map.of("MCP_ADDR", "127.0.0.1:" + port));
                    OutputStream in = node.getOutputStream()) {
                in.write("go\n".getBytes(StandardCharsets.UTF_8));
                in.flush();
                assertThat(node.waitFor(60, TimeUnit.SECONDS)).isTrue();
                String rest = out.lines().reduce("", (a, b) -> a + b + "\n");
                assertThat(node.exitValue()).as(rest).isZero();
                assertThat(rest).contains("ok across-restart");
            }
        } finally {
            node.destroyForcibly();
        }
    }

    /**
     * Poke's case: the pinned client with its default 60 s request timeout, the server with its
     * default 50 s budget, a 70 s command over both transports at once; and a call cancelled
     * with an AbortSignal. The newest client runs the same with a 3 s budget and a 6 s command.
     */
    @ParameterizedTest(name = "sdk {0}, budget {1} s")
    @org.junit.jupiter.params.provider.CsvSource({"sdk-1.17.3, 50, 70", "sdk-latest, 3, 6"})
    void longCommandAnswersWithinTheClientsTimeoutAndCancelKillsItsTree(String sdk, int budget, int sleep)
            throws Exception {
        Map<String, String> env = budget == dev.sandboxmcp.config.Limits.defaults().callBudget().toSeconds()
                ? Map.of("MCP_KILL_GRACE_MILLIS", "1000")
                : Map.of("MCP_KILL_GRACE_MILLIS", "1000", "MCP_CALL_BUDGET_SECONDS", Integer.toString(budget));
        try (TestServer server = TestServer.start(workspace, env)) {
            Process node = node(sdk, "budget.mjs", server.url(TestServer.BASE),
                    List.of(workspace.toString(), Integer.toString(sleep), "1000"));
            boolean finished = node.waitFor(sleep + 60, TimeUnit.SECONDS);
            String output = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(finished).as("node finished: %s", output).isTrue();
            assertThat(node.exitValue()).as(output).isZero();
            assertThat(output).contains("ok budget streamable").contains("ok budget sse")
                    .contains("ok cancel streamable").contains("ok cancel sse");
            System.out.println(sdk + ": " + output.strip().replace('\n', ';'));
            assertThat(server.auditLog()).contains("\"outcome\":\"cancelled\"");
        }
    }

    private static Process node(String sdk, String baseUrl, List<String> extra) throws IOException {
        return node(sdk, "interop.mjs", baseUrl, extra);
    }

    private static Process node(String sdk, String script, String baseUrl, List<String> extra) throws IOException {
        Path dir = INTEROP.resolve(sdk);
        assertThat(dir.resolve("node_modules/@modelcontextprotocol/sdk/package.json"))
                .as("npm dependencies of %s are installed; run `make test`, which runs npm ci there", dir)
                .exists();
        List<String> command = new java.util.ArrayList<>(List.of("node", INTEROP.resolve(script).toString(),
                dir.toString(), baseUrl, TestServer.TOKEN));
        command.addAll(extra);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("SANDBOX_MCP_TOOLS", String.join(",", ToolCatalog.names()));
        return builder.start();
    }

}
