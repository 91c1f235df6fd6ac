package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The real image, started from the compose file with all its flags, probed from outside (HTTP,
 * the host's view of files and processes) and from inside (commands run through the tools).
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ContainerBoundaryTest {

    static final int BUDGET = 4;

    ComposeDeployment deployment;
    McpSyncClient client;

    @BeforeAll
    void start() throws Exception {
        // A short call budget, so that the handover to a job is seen in seconds (no other case here lasts that long).
        deployment = ComposeDeployment.start("boundary", Map.of("MCP_CALL_BUDGET_SECONDS", Integer.toString(BUDGET)));
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

    String sh(String command) {
        return Mcp.stdout(client, command);
    }

    @Test
    void verifyChecklistPassesOnBothTransports() throws Exception {
        Commands.Result verify = deployment.verify("--egress");
        assertThat(verify.exitCode()).as(verify.output()).isZero();
        assertThat(verify.output()).contains("all 29 checks passed").doesNotContain("FAIL")
                .contains("PASS  egress mode").contains("off: the sandbox has no network");
    }

    @Test
    void serverAndRunnerStartCleanlyFromTheirImagesAotCaches() throws Exception {
        assertThat(sh("ls /app/aot")).contains("app.aot");
        // A missing, stale or rejected cache is reported on stderr as [error][aot] or
        // [warning][aot] lines, and the JVM then starts without it (three times slower).
        // No warning either: a deployment that warns on every start teaches people to ignore it.
        assertThat(deployment.logs()).contains("Javalin started").doesNotContain("[aot]").doesNotContain(" WARN ");
        assertThat(ComposeDeployment.logs(deployment.runner)).contains("connected to the server")
                .doesNotContain("[aot]").doesNotContain(" WARN ");
    }

    @Test
    void commandPastTheCallBudgetGoesOnAsAJobThatTheIdleSweepSpares() throws Exception {
        long started = System.nanoTime();
        Map<String, Object> call = Mcp.run(client, "echo before; sleep " + (BUDGET + 4) + "; echo done", 60);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(BUDGET + 3));
        assertThat(call).containsEntry("still_running", true).containsEntry("stdout", "before\n");
        String job = (String) call.get("job_id");
        // This command ends while no other command runs: the runner's sweep must count the job as running.
        assertThat(sh("echo between")).isEqualTo("between\n");
        Map<String, Object> output = Map.of();
        for (int i = 0; i < 300 && !Boolean.FALSE.equals(output.get("running")); i++) {
            Thread.sleep(100);
            output = Mcp.call(client, "job_output", Map.of("id", job));
        }
        assertThat(output).containsEntry("running", false).containsEntry("exit_code", 0)
                .containsEntry("output", "before\ndone\n");
    }

    @Test
    void aClientDroppingARunningCallKillsItsTreeThroughDockersPortProxy() throws Exception {
        Path pidFile = deployment.workspace.resolve("dropped.pid");
        String body = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                + "\"arguments\":{\"command\":\"(trap '' TERM; sleep 300) & echo $! > dropped.pid; sleep 300\","
                + "\"timeout_seconds\":60}}}";
        long pid;
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", deployment.port)) {
            socket.getOutputStream().write(("POST " + ComposeDeployment.BASE + "/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Bearer " + deployment.token + "\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
            socket.getOutputStream().flush();
            for (int i = 0; i < 200 && (!Files.exists(pidFile) || Files.readString(pidFile).isBlank()); i++) {
                Thread.sleep(25);
            }
            pid = Long.parseLong(Files.readString(pidFile).strip());
        }
        // While the dropped call still ran, the runner's idle sweep could not have killed its tree either.
        long dropped = System.nanoTime();
        String state = "";
        while (System.nanoTime() - dropped < Duration.ofSeconds(8).toNanos()) {
            state = sh("cat /proc/" + pid + "/stat 2>/dev/null | cut -d' ' -f3; true").strip();
            if (state.isEmpty() || state.equals("Z")) {
                break;
            }
            Thread.sleep(200);
        }
        assertThat(state).as("state of the dropped call's background child").isIn("", "Z");
        assertThat(Duration.ofNanos(System.nanoTime() - dropped)).isLessThan(Duration.ofSeconds(6));
        assertThat(deployment.logs()).contains("\"outcome\":\"cancelled\"").contains("the client closed the request");
    }

    @Test
    void portIsPublishedOnHostLoopbackOnly() throws Exception {
        Commands.Result ports = Commands.run(List.of("docker", "port", deployment.container, "8000/tcp"), 30);
        assertThat(ports.output().strip().lines().toList()).containsExactly("127.0.0.1:" + deployment.port);
    }

    @Test
    void commandsRunAsTheHostUserAndTheServerAsAUserOfItsOwnNeverRoot() throws Exception {
        assertThat(sh("id -u; id -g").lines().toList())
                .containsExactly(Integer.toString(deployment.uid), Integer.toString(deployment.gid));
        assertThat(deployment.uid).isNotZero().isNotEqualTo(ComposeDeployment.SERVER_UID);
        // Every process in the runner's container, the runner and the init included.
        assertThat(sh("ps -eo uid= | sort -u").strip()).isEqualTo(Integer.toString(deployment.uid));
        String serverUser = Commands.run(List.of("docker", "inspect", "-f", "{{.Config.User}}", deployment.container), 30)
                .output().strip();
        assertThat(serverUser).isEqualTo(ComposeDeployment.SERVER_UID + ":" + ComposeDeployment.SERVER_UID);
    }

    @Test
    void commandsHaveNoCapabilities() {
        String caps = sh("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; grep -E '^Cap(Prm|Eff|Bnd)' /proc/1/status");
        assertThat(caps.lines().toList()).hasSize(8).allMatch(l -> l.endsWith("0000000000000000"));
        assertThat(sh("grep NoNewPrivs /proc/self/status")).contains("1");
    }

    @Test
    void rootFilesystemIsReadOnlyAndTmpIsNotExecutable() {
        Map<String, Object> writes = Mcp.run(client, "touch /usr/local/bin/x; touch /etc/x; touch /x", 30);
        assertThat((String) writes.get("stderr")).contains("Read-only file system");
        assertThat(((String) writes.get("stderr")).lines().count()).isEqualTo(3);

        Map<String, Object> exec = Mcp.run(client, "cp /bin/true /tmp/true && chmod +x /tmp/true && /tmp/true", 30);
        assertThat(exec.get("exit_code")).isEqualTo(126);
        assertThat((String) exec.get("stderr")).contains("Permission denied");
        assertThat(sh("grep ' /tmp ' /proc/self/mounts")).contains("noexec").contains("nosuid").contains("nodev");
    }

    @Test
    void nothingButTheWorkspaceAndTheHomeAreWritableAndPersistent() {
        String writable = sh("for d in $(awk '{print $5}' /proc/self/mountinfo | sort -u); do "
                + "[ -d \"$d\" ] && touch \"$d/.probe-$$\" 2>/dev/null && rm -f \"$d/.probe-$$\" && echo \"$d\"; done");
        Set<String> dirs = writable.lines().collect(Collectors.toSet());
        // Only the workspace and the home volume are host directories; the rest are memory-backed
        // file systems (tmpfs /tmp, /dev and its shm and mqueue, the socket volume shared with the
        // server), gone when the deployment stops.
        assertThat(dirs).contains("/workspace", "/tmp", "/home/sandbox")
                .isSubsetOf("/workspace", "/home/sandbox", "/tmp", "/dev", "/dev/shm", "/dev/mqueue", "/run/sandbox-mcp");
        // mountinfo: mount point is field 5, options field 6, the file system type follows " - ".
        String mounts = sh("awk '{for (i = 7; i <= NF; i++) if ($i == \"-\") {print $5, $6, $(i + 1); break}}' "
                + "/proc/self/mountinfo");
        Set<String> memoryBacked = Set.of("proc", "sysfs", "tmpfs", "devpts", "mqueue", "cgroup", "cgroup2", "overlay");
        // Everything writable that is not memory-backed comes from the host: only the workspace and the home may be.
        List<String> writableHostMounts = mounts.lines().map(l -> l.split(" "))
                .filter(f -> f[1].startsWith("rw") && !memoryBacked.contains(f[2]))
                .map(f -> f[0]).toList();
        assertThat(writableHostMounts).containsExactlyInAnyOrder("/workspace", "/home/sandbox");
    }

    @Test
    void fileWrittenThroughTheToolsAppearsOnTheHostOwnedByTheHostUser() throws Exception {
        McpSchema.CallToolResult write = client.callTool(new McpSchema.CallToolRequest("write_file",
                Map.of("path", "from-sandbox.txt", "content", "written in the sandbox\n")));
        assertThat(write.isError()).isFalse();
        Path onHost = deployment.workspace.resolve("from-sandbox.txt");
        assertThat(onHost).hasContent("written in the sandbox");
        assertThat(Files.getAttribute(onHost, "unix:uid")).isEqualTo(deployment.uid);
        assertThat(Files.getAttribute(onHost, "unix:gid")).isEqualTo(deployment.gid);
    }

    @Test
    void noDockerSocketAndNoTokenAnywhereInside() {
        String sockets = sh("ls -la /var/run/docker.sock /run/docker.sock 2>&1; find / -xdev -name '*.sock' 2>/dev/null");
        assertThat(sockets).doesNotContain("srw").contains("No such file");
        String everything = sh("env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; "
                + "do tr '\\0' '\\n' < \"$f\"; done 2>/dev/null");
        assertThat(everything).contains("PATH=").doesNotContain(deployment.token);
        assertThat(sh("env")).doesNotContain("MCP_AUTH_TOKEN");
    }

    @Test
    void noProcessOfTheServerIsVisibleToCommands() {
        // The server lives in another container: another PID namespace, another user.
        String processes = sh("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done");
        assertThat(processes).contains("dev.sandboxmcp.Main runner").doesNotContain("Main serve")
                .doesNotContain("Javalin");
        assertThat(sh("pgrep -c -x java").strip()).isEqualTo("1");
    }

    @Test
    void imageHoldsNoSecretsOrBuildContext() {
        String found = sh("ls -a /app /app/* 2>/dev/null | grep -E '(^|/)\\.env|\\.git$|Makefile|pom.xml' || true; "
                + "find / -xdev \\( -name .env -o -name '.env.*' \\) 2>/dev/null | grep -v '^/workspace' || true");
        assertThat(found.strip()).isEmpty();
    }

    @Test
    void forkBurstHitsThePidsLimitAndTheServerKeepsAnswering() throws Exception {
        // What other tests of this class left running is swept when their commands end; on a
        // loaded machine that may still be under way, and the burst would find no room to start.
        int tasks = runnerTasks();
        for (long deadline = System.nanoTime() + 30_000_000_000L; tasks >= 64 && System.nanoTime() < deadline; ) {
            Thread.sleep(200);
            tasks = runnerTasks();
        }
        System.out.println("fork burst: the runner's container held " + tasks + " processes and threads before it");
        Map<String, Object> burst = Mcp.run(client,
                "i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i+1)); done; echo spawned", 30);
        assertThat((String) burst.get("stderr")).containsAnyOf("Resource temporarily unavailable", "Cannot fork",
                "retry");
        assertThat(deployment.health()).isEqualTo(200);
        assertThat(sh("echo alive")).isEqualTo("alive\n");
        assertThat(sh("ps -e --no-headers | wc -l").strip()).satisfies(n -> assertThat(Integer.parseInt(n)).isLessThan(20));
    }

    /** The tasks (processes and threads) in the runner's container, as its pids cgroup counts them, read from outside. */
    int runnerTasks() throws Exception {
        Commands.Result stats = Commands.run(List.of("docker", "stats", "--no-stream", "--format", "{{.PIDs}}",
                deployment.runner), 30);
        return Integer.parseInt(stats.output().strip());
    }

    @Test
    void commandThatAllocatesTwoGigabytesDiesAndTheServerLives() throws InterruptedException {
        // Past the short call budget of this class on a loaded machine: followed as a job to its end.
        Integer exit = Mcp.exitCode(client,
                "head -c 2147483648 /dev/zero | awk 'BEGIN{RS=\"\\x01\"} {s=$0} END{print length(s)}'", 120);
        assertThat(exit).as("killed by the OOM killer").isNotNull().isNotZero();
        assertThat(deployment.health()).isEqualTo(200);
        assertThat(sh("echo alive")).isEqualTo("alive\n");
    }

    @Test
    void noZombiesPileUpAfterCommandsThatOrphanChildren() throws Exception {
        for (int i = 0; i < 50; i++) {
            Mcp.run(client, "(sleep 5 &) ; sh -c 'sleep 5 &' ; setsid sleep 5 & echo $i", 10);
        }
        Thread.sleep(1_000);
        String states = sh("ps -eo stat=,comm=");
        assertThat(states.lines().filter(l -> l.startsWith("Z")).toList()).isEmpty();
        assertThat(states.lines().filter(l -> l.contains("sleep")).toList()).as("orphans were killed").isEmpty();
    }

    /** How docker inspect shows a container's log rotation: driver, max-size, max-file. */
    static final String LOG_ROTATION = "{{.HostConfig.LogConfig.Type}} {{index .HostConfig.LogConfig.Config \"max-size\"}} "
            + "{{index .HostConfig.LogConfig.Config \"max-file\"}}";

    @Test
    void resourceLimitsMatchTheComposeFile() throws Exception {
        String format = "{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.PidsLimit}} {{.HostConfig.Memory}} "
                + "{{.HostConfig.NanoCpus}} "
                + "{{.HostConfig.Init}} {{.HostConfig.CapDrop}} {{.HostConfig.SecurityOpt}} {{.HostConfig.RestartPolicy.Name}} "
                + "{{.HostConfig.NetworkMode}} " + LOG_ROTATION;
        String runner = Commands.run(List.of("docker", "inspect", "-f", format, deployment.runner), 30).output().strip();
        // No Docker init in the runner: its image's entrypoint is its own (PID 1, infra/image/runner-init).
        assertThat(Arrays.asList(runner.split(" "))).containsExactly("true", "128", "1073741824", "2000000000", "false",
                "[ALL]", "[no-new-privileges:true]", "unless-stopped", "none", "json-file", "10m", "3");
        assertThat(Commands.run(List.of("docker", "exec", deployment.runner, "cat", "/proc/1/comm"), 30).output())
                .isEqualTo("runner-init\n");
        String server = Commands.run(List.of("docker", "inspect", "-f", format, deployment.container), 30).output().strip();
        assertThat(Arrays.asList(server.split(" "))).containsExactly("true", "64", "536870912", "1000000000", "true",
                "[ALL]", "[no-new-privileges:true]", "unless-stopped", deployment.network, "json-file", "10m", "3");
    }
}
