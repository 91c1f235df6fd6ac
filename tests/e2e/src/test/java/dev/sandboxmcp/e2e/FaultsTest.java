package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Faults from outside the server: restarts, a container killed mid-write, a full disk. */
@RequiresDocker
class FaultsTest {

    static final String ORIGIN_HOST = "http://127.0.0.1:";

    @Test
    void javaAndTypeScriptClientsCarryOnAcrossAContainerRestart() throws Exception {
        try (ComposeDeployment deployment = ComposeDeployment.start("restart")) {
            String origin = ORIGIN_HOST + deployment.port;
            Path interop = Repo.path("tests/interop");
            Process node = new ProcessBuilder("node", interop.resolve("interop.mjs").toString(),
                    interop.resolve("sdk-1.17.3").toString(), deployment.baseUrl(), deployment.token, "--across-restart")
                    .redirectErrorStream(true).start();
            try (McpSyncClient client = Mcp.streamable(origin, ComposeDeployment.BASE, deployment.token);
                    BufferedReader nodeOut = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
                    OutputStream nodeIn = node.getOutputStream()) {
                assertThat(Mcp.stdout(client, "echo before")).isEqualTo("before\n");
                assertThat(nodeOut.readLine()).isEqualTo("READY");

                Commands.Result restart = Commands.run(List.of("docker", "restart", "-t", "10", deployment.container), 120);
                assertThat(restart.exitCode()).as(restart.output()).isZero();
                deployment.awaitHealthy(java.time.Duration.ofSeconds(60));

                // The same client objects, no manual step.
                assertThat(Mcp.stdout(client, "echo after")).isEqualTo("after\n");
                nodeIn.write("go\n".getBytes(StandardCharsets.UTF_8));
                nodeIn.flush();
                assertThat(node.waitFor(60, TimeUnit.SECONDS)).isTrue();
                String rest = nodeOut.lines().reduce("", (a, b) -> a + b + "\n");
                assertThat(node.exitValue()).as(rest).isZero();
                assertThat(rest).contains("ok across-restart");
            } finally {
                node.destroyForcibly();
            }
        }
    }

    @Test
    void commandThatKillsEveryProcessOfItsUserDownsTheServerOnlyUntilDockerRestartsIt() throws Exception {
        // Commands run as the server's user, so `kill -9 -1` reaches the server too; the init
        // then exits and the compose restart policy brings the container back.
        try (ComposeDeployment deployment = ComposeDeployment.start("killall");
                McpSyncClient client = Mcp.streamable(ORIGIN_HOST + deployment.port, ComposeDeployment.BASE, deployment.token)) {
            assertThat(Mcp.stdout(client, "echo before")).isEqualTo("before\n");
            try {
                Mcp.run(client, "kill -9 -1", 10);
            } catch (RuntimeException expected) {
                // the call dies with the server
            }
            deployment.awaitHealthy(java.time.Duration.ofSeconds(60));
            assertThat(Mcp.stdout(client, "echo after")).isEqualTo("after\n");
            Commands.Result restarts = Commands.run(List.of("docker", "inspect", "-f", "{{.RestartCount}}", deployment.container), 30);
            assertThat(Integer.parseInt(restarts.output().strip())).isPositive();
        }
    }

    @Test
    void frozenServerIsRestartedByItsHealthCheckWithinAMinute() throws Exception {
        // Docker's restart policy ignores "unhealthy"; the image's health check must do it.
        try (ComposeDeployment deployment = ComposeDeployment.start("frozen");
                McpSyncClient client = Mcp.streamable(ORIGIN_HOST + deployment.port, ComposeDeployment.BASE, deployment.token)) {
            assertThat(Mcp.stdout(client, "echo before")).isEqualTo("before\n");
            Commands.Result stop = Commands.run(List.of("docker", "exec", deployment.container,
                    "pkill", "-STOP", "-f", "dev.sandboxmcp.Main"), 30);
            assertThat(stop.exitCode()).as(stop.output()).isZero();
            long frozen = System.nanoTime();
            assertThat(deployment.health()).as("a stopped server does not answer").isNotEqualTo(200);

            deployment.awaitHealthy(java.time.Duration.ofSeconds(60));
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - frozen);
            System.out.println("frozen server answering again after " + seconds + " s");
            assertThat(Mcp.stdout(client, "echo after")).isEqualTo("after\n");
            Commands.Result restarts = Commands.run(List.of("docker", "inspect", "-f", "{{.RestartCount}}", deployment.container), 30);
            assertThat(Integer.parseInt(restarts.output().strip())).isPositive();
            assertThat(deployment.logs()).contains("failed probes in a row");
        }
    }

    @Test
    void containerKilledDuringWritesLeavesOneWholeVersion() throws Exception {
        try (ComposeDeployment deployment = ComposeDeployment.start("kill")) {
            String origin = ORIGIN_HOST + deployment.port;
            AtomicBoolean stop = new AtomicBoolean();
            Set<String> versions = java.util.concurrent.ConcurrentHashMap.newKeySet();
            versions.add("v-initial\n".repeat(50_000));
            Files.writeString(deployment.workspace.resolve("doc.txt"), "v-initial\n".repeat(50_000));
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try (McpSyncClient client = Mcp.streamable(origin, ComposeDeployment.BASE, deployment.token)) {
                    for (int i = 0; !stop.get(); i++) {
                        String content = ("v-" + i + "\n").repeat(50_000);
                        versions.add(content);
                        client.callTool(new CallToolRequest("write_file", Map.of("path", "doc.txt", "content", content)));
                    }
                } catch (RuntimeException expected) {
                    // the container died under the client
                }
            });
            Thread.sleep(1_500);
            Commands.Result kill = Commands.run(List.of("docker", "kill", "-s", "KILL", deployment.container), 60);
            stop.set(true);
            assertThat(kill.exitCode()).as(kill.output()).isZero();
            writer.get(60, TimeUnit.SECONDS);

            String onDisk = Files.readString(deployment.workspace.resolve("doc.txt"));
            assertThat(versions).as("the file is one whole version").contains(onDisk);

            Commands.Result start = Commands.run(List.of("docker", "start", deployment.container), 60);
            assertThat(start.exitCode()).as(start.output()).isZero();
            deployment.awaitHealthy(java.time.Duration.ofSeconds(60));
            try (McpSyncClient client = Mcp.streamable(origin, ComposeDeployment.BASE, deployment.token)) {
                CallToolResult read = client.callTool(new CallToolRequest("read_file", Map.of("path", "doc.txt")));
                assertThat(read.isError()).isFalse();
            }
        }
    }

    @Test
    void fullDiskGivesAClearErrorAndNoPartialFile() throws Exception {
        ComposeDeployment.requireImage();
        String name = "sandbox-mcp-e2e-fulldisk-" + ProcessHandle.current().pid();
        String token = "full-disk-token-" + "0123456789abcdefghijklmnopqrstuvwxyz";
        int uid = Repo.sandboxUid();
        int gid = Repo.sandboxGid();
        Commands.run(List.of("docker", "rm", "-f", name), 60);
        Commands.Result run = Commands.run(List.of("docker", "run", "-d", "--name", name, "--init", "--read-only",
                "--cap-drop", "ALL", "--security-opt", "no-new-privileges:true", "--user", uid + ":" + gid,
                "--tmpfs", "/tmp:rw,noexec,nosuid,nodev,size=64m,uid=" + uid + ",gid=" + gid,
                "--tmpfs", "/workspace:rw,nosuid,nodev,size=1m,uid=" + uid + ",gid=" + gid,
                "-e", "MCP_AUTH_TOKEN_SHA256=" + ComposeDeployment.sha256Hex(token),
                "-p", "127.0.0.1::8000", ComposeDeployment.IMAGE), 120);
        assertThat(run.exitCode()).as(run.output()).isZero();
        try {
            String port = Commands.run(List.of("docker", "port", name, "8000/tcp"), 30).output().strip().replaceAll(".*:", "");
            String origin = ORIGIN_HOST + port;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            McpSyncClient client = null;
            while (client == null) {
                try {
                    client = Mcp.streamable(origin, ComposeDeployment.BASE, token);
                } catch (RuntimeException notYet) {
                    if (System.nanoTime() > deadline) {
                        throw notYet;
                    }
                    Thread.sleep(250);
                }
            }
            try (McpSyncClient c = client) {
                String small = "keep me\n".repeat(40_000); // 320 KB
                assertThat(c.callTool(new CallToolRequest("write_file", Map.of("path", "a.txt", "content", small))).isError())
                        .isFalse();
                String big = "z".repeat(900 * 1024);
                CallToolResult full = c.callTool(new CallToolRequest("write_file", Map.of("path", "a.txt", "content", big)));
                assertThat(full.isError()).isTrue();
                assertThat(full.content().toString()).contains("No space left on device").contains("left unchanged");
                assertThat(Mcp.stdout(c, "ls -A; wc -c < a.txt")).isEqualTo("a.txt\n" + small.length() + "\n");
                CallToolResult read = c.callTool(new CallToolRequest("read_file", Map.of("path", "a.txt")));
                @SuppressWarnings("unchecked")
                Map<String, Object> structured = (Map<String, Object>) read.structuredContent();
                assertThat(structured.get("content")).isEqualTo(small);
            }
        } finally {
            Commands.run(List.of("docker", "rm", "-f", name), 60);
        }
    }
}
