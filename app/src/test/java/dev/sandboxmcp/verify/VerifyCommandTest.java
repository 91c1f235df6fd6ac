package dev.sandboxmcp.verify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class VerifyCommandTest {

    TestServer server;
    Path workspace;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        workspace = dir;
        server = TestServer.start(dir);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    record Outcome(int exitCode, String output) {
    }

    Outcome verify(String url, String token, String... flags) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<String> args = new java.util.ArrayList<>(List.of(flags));
        args.add(url);
        int code = VerifyCommand.run(args, token == null ? Map.of() : Map.of("MCP_AUTH_TOKEN", token),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(code, out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void passesEveryCheckAgainstAHealthyServerAndCleansUp() throws Exception {
        Outcome outcome = verify(server.url(TestServer.BASE), TestServer.TOKEN);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.output()).doesNotContain("FAIL").contains("all 28 checks passed")
                .contains("PASS  sse endpoint event keeps /mcp-sandbox")
                .contains("PASS  streamable run_command").contains("PASS  sse run_command");
        try (var files = java.nio.file.Files.list(workspace)) {
            assertThat(files).as("verify removes its probe files").isEmpty();
        }
    }

    @Test
    void egressCheckFailsWhereTheRunnerHasTheHostsNetwork() {
        // This server's runner is its child process on the host: no proxy variables, and the
        // host's interfaces. Reporting "off" there would hide that it can reach everything.
        Outcome outcome = verify(server.url(TestServer.BASE), TestServer.TOKEN, "--egress");
        assertThat(outcome.exitCode()).as(outcome.output()).isEqualTo(1);
        assertThat(outcome.output()).contains("FAIL  egress mode").contains("off, but the sandbox has network interfaces")
                .contains("1 of 29 checks FAILED");
    }

    @Test
    void failsWithAWrongToken() {
        Outcome outcome = verify(server.url(TestServer.BASE), "not-the-token-not-the-token-not-the-token");
        assertThat(outcome.exitCode()).isEqualTo(1);
        assertThat(outcome.output()).contains("PASS  mcp refuses a request without token")
                .contains("FAIL  streamable").contains("checks FAILED");
    }

    @Test
    void failsWhenTheUrlLosesThePrefix() {
        Outcome outcome = verify(server.url("/elsewhere"), TestServer.TOKEN);
        assertThat(outcome.exitCode()).isEqualTo(1);
        assertThat(outcome.output()).contains("FAIL  health /elsewhere/healthz");
    }

    @Test
    void refusesBadUsage() {
        assertThat(verify("not-a-url", TestServer.TOKEN).exitCode()).isEqualTo(2);
        assertThat(verify(server.url(TestServer.BASE), null).output()).contains("MCP_AUTH_TOKEN is not set");
    }
}
