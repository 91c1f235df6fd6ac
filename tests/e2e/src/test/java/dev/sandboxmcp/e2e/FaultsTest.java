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

/** Faults from outside: restarts, a frozen server, a runner killed mid-write, a full disk. */
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
                    BufferedReader nodeOut = new BufferedReader(new InputStreamReader(node.getInputStream(),
                            StandardCharsets.UTF_8));
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
    void frozenServerIsRestartedByItsHealthCheckWithinAMinute() throws Exception {
        // Docker's restart policy ignores "unhealthy"; the image's health check must do it.
        try (ComposeDeployment deployment = ComposeDeployment.start("frozen");
                McpSyncClient client = Mcp.streamable(ORIGIN_HOST + deployment.port, ComposeDeployment.BASE, deployment.token)) {
            assertThat(Mcp.stdout(client, "echo before")).isEqualTo("before\n");
            // The server's JVM is the only child of its container's init; the host sees both.
            String init = Commands.run(List.of("docker", "inspect", "-f", "{{.State.Pid}}", deployment.container), 30)
                    .output().strip();
            String jvm = Commands.run(List.of("pgrep", "-P", init), 30).output().strip();
            assertThat(jvm).matches("[0-9]+");
            Commands.Result stop = Commands.run(List.of("kill", "-STOP", jvm), 30);
            assertThat(stop.exitCode()).as(stop.output()).isZero();
            long frozen = System.nanoTime();
            assertThat(deployment.health()).as("a stopped server does not answer").isNotEqualTo(200);

            assertRestarted(deployment, client, deployment.container, 0, frozen, 60, "failed probes in a row");
        }
    }

    /** A command's lines that SIGSTOP the runner's JVM (the init's child). */
    private static final String FREEZE_THE_JVM = String.join("\n",
            "for p in $(cat /proc/1/task/1/children); do",
            "  [[ $(cat /proc/$p/comm) == java ]] && kill -STOP $p",
            "done");

    /**
     * A command (a job, which outlives its call and which a frozen runner never sweeps) freezes
     * the runner's JVM and then does what it can against what should restart it: first it keeps
     * writing what a health check might count its failures in (the runner's /tmp is its commands'
     * too) and holds every pid the container may have, so that no {@code docker exec} (Docker's
     * health check, an operator) can start anything; then, after the restart, it lowers the
     * init's limit of open files so that it cannot read the server's state. Before both, it tries
     * to read the init's environment and to end it with the signals bash handles. The runner's
     * init (PID 1) restarts the container each time, and calls work again.
     */
    @Test
    void runnerFrozenByACommandIsRestartedByItsInitWhateverTheCommandDoesToIt() throws Exception {
        String holdEveryPid = String.join("\n", "sleep 1", FREEZE_THE_JVM,
                "exec {tick}<> <(:)",
                "(while :; do echo -1000000 >/tmp/.sandbox-mcp-health-failures; read -t 0.2 -u $tick; done) &",
                "while :; do sleep 600 & done");
        String blindTheInit = String.join("\n", "sleep 1", "prlimit --pid 1 --nofile=3:3", FREEZE_THE_JVM);
        try (ComposeDeployment deployment = ComposeDeployment.start("frozen-runner");
                McpSyncClient client = deployment.streamableClient()) {
            RunnerHealthTest.awaitHealthy(deployment.runner, java.time.Duration.ofSeconds(90));
            String reach = Mcp.stdout(client, "cat /proc/1/environ >/dev/null 2>&1 && echo readable || echo denied; "
                    + "for s in HUP USR1 USR2 PIPE ALRM XCPU XFSZ VTALRM; do kill -$s 1; done; sleep 1; echo alive");
            assertThat(reach).as("the init is not dumpable, and outlives those signals").isEqualTo("denied\nalive\n");
            assertThat(ComposeDeployment.restarts(deployment.runner)).isZero();

            long frozen = freezeFromAJob(deployment, client, holdEveryPid);
            // A process docker exec starts joins the container (the pids limit stops forks, not
            // joins), but it can start nothing: Docker's health check needs forks.
            Commands.Result exec = Commands.run(List.of("docker", "exec", deployment.runner, "sh", "-c", "/bin/true && echo forked"),
                    30);
            System.out.println("docker exec in the frozen runner, its pids held: exit " + exec.exitCode() + ", "
                    + exec.output().strip());
            assertThat(exec.output()).as("every pid is held").doesNotContain("forked");
            assertRestarted(deployment, client, deployment.runner, 0, frozen, 150,
                    "the server has not heard the runner healthy for");

            int restarts = ComposeDeployment.restarts(deployment.runner);
            frozen = freezeFromAJob(deployment, client, blindTheInit);
            assertRestarted(deployment, client, deployment.runner, restarts, frozen, 150, "runner.state cannot be read");
        }
    }

    /** Starts {@code script} as a job under bash and waits until the server has heard the runner fail; returns when. */
    private static long freezeFromAJob(ComposeDeployment deployment, McpSyncClient client, String script) throws Exception {
        String job = "exec bash -c '" + script + "' >/dev/null 2>&1"; // commands run under sh
        assertThat((String) Mcp.call(client, "start_job", Map.of("command", job)).get("id")).isNotBlank();
        long frozen = System.nanoTime();
        boolean sawFailing = false;
        while (!sawFailing && System.nanoTime() - frozen < TimeUnit.SECONDS.toNanos(30)) {
            sawFailing = !deployment.pairHealthy();
            TimeUnit.MILLISECONDS.sleep(500);
        }
        assertThat(sawFailing).as("the runner's JVM was frozen:\n" + deployment.logs()).isTrue();
        return frozen;
    }

    /**
     * The pair answers again within {@code seconds} of {@code frozen}, after a restart of
     * {@code container} (restarted {@code before} times until then) that its log explains.
     */
    private static void assertRestarted(ComposeDeployment deployment, McpSyncClient client, String container, int before,
            long frozen, int seconds, String logSays) throws Exception {
        deployment.awaitHealthy(java.time.Duration.ofSeconds(seconds));
        System.out.println(container + " frozen, answering again after "
                + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - frozen) + " s");
        assertThat(Mcp.stdout(client, "echo after")).isEqualTo("after\n");
        assertThat(ComposeDeployment.restarts(container)).as(container + " restarted").isGreaterThan(before);
        assertThat(ComposeDeployment.logs(container)).contains(logSays);
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
            // The runner writes the files.
            Commands.Result kill = Commands.run(List.of("docker", "kill", "-s", "KILL", deployment.runner), 60);
            stop.set(true);
            assertThat(kill.exitCode()).as(kill.output()).isZero();
            writer.get(60, TimeUnit.SECONDS);

            String onDisk = Files.readString(deployment.workspace.resolve("doc.txt"));
            assertThat(versions).as("the file is one whole version").contains(onDisk);

            Commands.Result start = Commands.run(List.of("docker", "start", deployment.runner), 60);
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
        List<String> removeAll = List.of("docker", "rm", "-f", name, name + "-runner");
        Commands.run(removeAll, 60);
        Commands.run(List.of("docker", "volume", "rm", "-f", name), 60);
        Commands.Result volume = Commands.run(List.of("docker", "volume", "create", "--driver", "local", "--opt", "type=tmpfs",
                "--opt", "device=tmpfs", "--opt", "o=mode=1777,size=1m", name), 60);
        assertThat(volume.exitCode()).as(volume.output()).isZero();
        // The runner's image brings its own init (PID 1); the server's is Docker's, as in compose.
        List<String> locked = List.of("--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges:true",
                "-v", name + ":/run/sandbox-mcp");
        List<String> runner = new java.util.ArrayList<>(List.of("docker", "run", "-d", "--name", name + "-runner",
                "--network", "none", "--user", uid + ":" + gid,
                "--tmpfs", "/tmp:rw,noexec,nosuid,nodev,size=64m,uid=" + uid + ",gid=" + gid,
                "--tmpfs", "/workspace:rw,nosuid,nodev,size=1m,uid=" + uid + ",gid=" + gid));
        runner.addAll(locked);
        runner.add(ComposeDeployment.RUNNER_IMAGE);
        Commands.Result runRunner = Commands.run(runner, 120);
        assertThat(runRunner.exitCode()).as(runRunner.output()).isZero();
        // No disk floor (a 1 MiB workspace is below any): what a full disk does without one. The
        // server states it to the runner.
        List<String> server = new java.util.ArrayList<>(List.of("docker", "run", "-d", "--name", name, "--init",
                "-e", "MCP_AUTH_TOKEN_SHA256=" + ComposeDeployment.sha256Hex(token), "-e", "MCP_DISK_FLOOR_MIB=0",
                "-e", "MCP_DISK_FLOOR_PERCENT=0", "-p", "127.0.0.1::8000"));
        server.addAll(locked);
        server.add(ComposeDeployment.SERVER_IMAGE);
        Commands.Result run = Commands.run(server, 120);
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
            awaitRunner(origin + ComposeDeployment.BASE + "/healthz");
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
                // The old file, whole: its first page is whole "keep me" lines, and it still has all 40,000.
                int lines = ((Number) structured.get("lines")).intValue();
                assertThat(structured.get("content")).isEqualTo("keep me\n".repeat(lines));
                assertThat(((Number) structured.get("total_lines")).intValue()).isEqualTo(40_000);
            }
        } finally {
            Commands.run(removeAll, 60);
            Commands.run(List.of("docker", "volume", "rm", "-f", name), 60);
        }
    }

    /** Waits until the server says its runner answers. */
    static void awaitRunner(String healthUrl) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                String body = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create(healthUrl)).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
                if (body.contains("\"runner\":\"ok\"")) {
                    return;
                }
            } catch (java.io.IOException notYet) {
                // starting
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the runner did not come up in 60 s");
            }
            Thread.sleep(250);
        }
    }
}
