package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * The split deployment from the attacker's side: a prompt-injected assistant with the token runs
 * commands in the runner and tries to reach the server, its secret, the host and the network.
 * Each test gets a fresh pair, since several of them take the runner down on purpose.
 */
@RequiresDocker
class PrivilegeSeparationTest {

    ComposeDeployment deployment;
    McpSyncClient client;

    @BeforeEach
    void start() throws Exception {
        deployment = ComposeDeployment.start("privsep");
        client = deployment.streamableClient();
    }

    @AfterEach
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

    /** A shell expression that makes {@code secret} at run time from two halves, so the command line never holds it. */
    static String split(String secret) {
        int half = secret.length() / 2;
        return "\"" + secret.substring(0, half) + "\"\"" + secret.substring(half) + "\"";
    }

    @Test
    void attachSignalsAndASearchOfEverythingReadableFindNeitherTheTokenNorItsDigest() throws Exception {
        String digest = ComposeDeployment.sha256Hex(deployment.token);
        // The attach handshake against every JVM a command can see (only the runner's), then a
        // search of every readable file and process environment for the secret and its digest.
        String report = sh("for p in $(pgrep -x java); do touch /proc/$p/cwd/.attach_pid$p /tmp/.attach_pid$p 2>/dev/null; "
                + "kill -QUIT $p; done; sleep 2; ls /tmp/.java_pid* 2>/dev/null | sed 's/^/attach-socket: /'; "
                + "t=" + split(deployment.token) + "; d=" + split(digest) + "; "
                // Patterns on standard input (printf is a builtin), so no process's arguments hold them.
                + "printf '%s\\n%s\\n' \"$t\" \"$d\" | grep -rlsF -f - / --exclude-dir=proc --exclude-dir=sys "
                + "--exclude-dir=dev 2>/dev/null | sed 's/^/file: /'; "
                + "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f 2>/dev/null; done > /tmp/procs; "
                + "printf '%s\\n%s\\n' \"$t\" \"$d\" | grep -F -f - /tmp/procs | sed 's/^/process: /'; rm -f /tmp/procs; "
                + "echo searched");
        assertThat(report).isEqualTo("searched\n");
        assertThat(deployment.pairHealthy()).isTrue();
    }

    @Test
    void stoppingEveryProcessACommandCanSeeLeavesTheServerAnsweringAndTheRunnerComesBack() throws Exception {
        AtomicInteger serverAnswers = new AtomicInteger();
        AtomicInteger serverFailures = new AtomicInteger();
        CompletableFuture<Void> watch = watchServer(Duration.ofSeconds(25), serverAnswers, serverFailures);
        // Whatever the runner makes of it (the kernel resumes a stopped orphaned process group
        // when the command exits), the server is out of reach and the runner recovers.
        client.callTool(new McpSchema.CallToolRequest("run_command", Map.of(
                "command", "for p in $(ls /proc | grep -E '^[0-9]+$'); do [ $p != $$ ] && kill -STOP $p 2>/dev/null; done; "
                        + "echo stopped", "timeout_seconds", 5)));
        watch.join();
        assertThat(serverFailures).as("the server answered /healthz throughout").hasValue(0);
        assertThat(serverAnswers.get()).isPositive();
        awaitCommands(Duration.ofSeconds(75));
        assertThat(ComposeDeployment.restarts(deployment.container)).isZero();
    }

    @Test
    void frozenRunnerGivesCallsAClearErrorAndItsInitRestartsIt() throws Exception {
        String init = Commands.run(List.of("docker", "inspect", "-f", "{{.State.Pid}}", deployment.runner), 30).output().strip();
        String jvm = Commands.run(List.of("pgrep", "-P", init, "-x", "java"), 30).output().strip();
        assertThat(jvm).matches("[0-9]+");
        assertThat(Commands.run(List.of("kill", "-STOP", jvm), 30).exitCode()).isZero();
        McpSchema.CallToolResult frozen = client.callTool(new McpSchema.CallToolRequest("run_command",
                Map.of("command", "echo hi", "timeout_seconds", 1)));
        assertThat(frozen.isError()).isTrue();
        assertThat(frozen.content().toString()).contains("did not answer within");
        assertThat(deployment.health()).isEqualTo(200);
        awaitCommands(Duration.ofSeconds(75));
        assertThat(ComposeDeployment.restarts(deployment.runner)).isPositive();
        assertThat(ComposeDeployment.restarts(deployment.container)).isZero();
        assertThat(ComposeDeployment.logs(deployment.runner)).contains("the server has not heard the runner healthy for");
    }

    /** Waits until a command runs again (the runner restarted, or was never down). */
    void awaitCommands(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest("run_command",
                    Map.of("command", "echo after", "timeout_seconds", 5)));
            if (!Boolean.TRUE.equals(result.isError())) {
                assertThat(result.content().toString()).contains("after");
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no command ran within " + timeout + ": " + result.content());
            }
            Thread.sleep(1_000);
        }
    }

    @Test
    void killingEveryProcessOfItsUserTakesOnlyTheRunnerDown() throws Exception {
        McpSchema.CallToolResult killed = client.callTool(new McpSchema.CallToolRequest("run_command",
                Map.of("command", "kill -9 -1", "timeout_seconds", 10)));
        assertThat(killed.isError()).isTrue();
        assertThat(killed.content().toString()).contains("runner");
        // Meanwhile the server answers, with a clear error for calls and its own health.
        assertThat(deployment.health()).isEqualTo(200);
        awaitCommands(Duration.ofSeconds(60));
        assertThat(ComposeDeployment.restarts(deployment.runner)).isPositive();
        assertThat(ComposeDeployment.restarts(deployment.container)).isZero();
    }

    @Test
    void escapedDaemonsAndAProcessHoldingEveryPidAreSweptAfterTheCommand() throws Exception {
        Map<String, Object> escape = Mcp.run(client, "setsid env -i /bin/sh -c 'sleep 1000' </dev/null >/dev/null 2>&1 & "
                + "setsid env -i /bin/sh -c 'while :; do sleep 1000 & done' </dev/null >/dev/null 2>&1 & "
                + "sleep 2; echo planted", 20);
        assertThat((String) escape.get("stdout")).contains("planted");
        Thread.sleep(500);
        assertThat(sh("echo next")).isEqualTo("next\n");
        assertThat(sh("ps -e --no-headers | wc -l").strip())
                .satisfies(n -> assertThat(Integer.parseInt(n)).as("processes left").isLessThan(10));
        assertThat(sh("pgrep -c sleep || true").strip()).isEqualTo("0");
    }

    /**
     * Fork chains (each generation forks the next and exits at once) that escaped the command,
     * three kinds: generations that do nothing else, that start a thread first (the last id
     * handed out is then a thread's), that fork a child that exits at once (a dead child's). When
     * a fork fails (the pids limit) a generation waits a millisecond and tries again rather than
     * die. The sweeps after the planting command, and after each later call, must end them.
     * {@code pgrep} may miss a chain (a generation dies between the listing and its reading), and
     * the last pid handed out wraps around many times a second, so each generation adds one to a
     * counter in a shared file mapping: the count grows by thousands a second while a chain lives.
     * The chains can hold every pid (zombies not yet reaped count), so the planting command forks
     * nothing once they run: it becomes {@code sleep} by {@code exec}, and the test reads the
     * counter from the host's side of the workspace meanwhile.
     */
    @Test
    void forkChainsOfEveryKindAreSweptAfterTheCommand() throws Exception {
        String source = """
                #include <fcntl.h>
                #include <pthread.h>
                #include <stdlib.h>
                #include <sys/mman.h>
                #include <unistd.h>
                static void *idle(void *unused) { for (;;) pause(); return unused; }
                int main(int argc, char **argv) {
                    int kind = atoi(argv[1]);
                    int fd = open("chain.count", O_RDWR | O_CREAT, 0600);
                    if (fd < 0 || ftruncate(fd, 8) != 0) return 1;
                    unsigned long *generations = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                    if (generations == MAP_FAILED) return 1;
                    for (;;) {
                        __atomic_fetch_add(generations, 1, __ATOMIC_RELAXED);
                        pthread_t thread;
                        if (kind == 1) pthread_create(&thread, NULL, idle, NULL);
                        if (kind == 2 && fork() == 0) _exit(0);
                        pid_t next = fork();
                        if (next > 0) _exit(0);
                        if (next < 0) usleep(1000);
                    }
                }
                """;
        String generationsInHalfASecond = "a=$(od -An -tu8 -N8 chain.count); sleep 0.5; b=$(od -An -tu8 -N8 chain.count); "
                + "echo $((b - a))";
        Path counter = deployment.workspace.resolve("chain.count");
        Files.deleteIfExists(counter);
        // On a thread of its own, not the common pool: the client's transport uses that.
        CompletableFuture<Map<String, Object>> planting = CompletableFuture.supplyAsync(() -> Mcp.run(client,
                "cat > chain.c <<'EOF'\n" + source + "EOF\n"
                + "cc -O2 -pthread -o chain chain.c || exit 1\n" // in the workspace: the runner's /tmp is noexec
                + "for kind in 0 1 2; do setsid env -i ./chain $kind </dev/null >/dev/null 2>&1 & done\n"
                + "exec sleep 5", 60), task -> Thread.ofVirtual().start(task));
        long whileRunning = generationsSeenFromTheHost(counter, planting);
        Map<String, Object> plant = planting.get(90, TimeUnit.SECONDS);
        System.out.println("planting fork chains: " + plant + "; generations in 0.5 s while the chains ran: " + whileRunning);
        assertThat(whileRunning).as("generations in 0.5 s while the chains ran").isGreaterThan(200);

        long planted = System.nanoTime();
        int calls = 0;
        String generations = "";
        while (System.nanoTime() - planted < Duration.ofSeconds(30).toNanos()) {
            calls++;
            // A call may fail while a chain holds every pid; its end sweeps again.
            McpSchema.CallToolResult look = client.callTool(new McpSchema.CallToolRequest("run_command",
                    Map.of("command", generationsInHalfASecond, "timeout_seconds", 10)));
            generations = Boolean.TRUE.equals(look.isError()) ? look.content().toString()
                    : String.valueOf(((Map<?, ?>) look.structuredContent()).get("stdout")).strip();
            if (generations.equals("0")) {
                break;
            }
            Thread.sleep(500);
        }
        System.out.printf("fork chains gone after %d call(s), %d ms after the planting command ended: %s generations in 0.5 s%n",
                calls, Duration.ofNanos(System.nanoTime() - planted).toMillis(), generations);
        assertThat(generations).as("generations in 0.5 s, 30 s after the chains were planted").isEqualTo("0");
        assertThat(sh("pgrep -c -x chain || true")).isEqualTo("0\n");
        assertThat(ComposeDeployment.restarts(deployment.runner)).isZero();
    }

    /** How far the chains' counter moves in 0.5 s, read from the host once it exists (while {@code planting} runs). */
    static long generationsSeenFromTheHost(Path counter, CompletableFuture<?> planting) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!(Files.exists(counter) && Files.size(counter) == 8) && System.nanoTime() < deadline) {
            if (planting.isDone()) {
                throw new AssertionError("the planting command ended before the chains counted: " + planting.get());
            }
            Thread.sleep(20);
        }
        if (!(Files.exists(counter) && Files.size(counter) == 8)) {
            throw new AssertionError("the chains had not made their counter after 60 s");
        }
        long before = count(counter);
        Thread.sleep(500);
        return count(counter) - before;
    }

    static long count(Path counter) throws IOException {
        return ByteBuffer.wrap(Files.readAllBytes(counter)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    @Test
    void memoryPressureInTheRunnerNeverKillsTheServer() throws Exception {
        Map<String, Object> hog = Mcp.run(client, "head -c 200m /dev/zero > /tmp/fill; head -c 15m /dev/zero > /dev/shm/fill; "
                + "cat /proc/self/oom_score_adj; "
                + "head -c 2147483648 /dev/zero | awk 'BEGIN{RS=\"\\x01\"} {s=$0} END{print length(s)}'", 120);
        assertThat((String) hog.get("stdout")).startsWith("1000\n");
        assertThat((Integer) hog.get("exit_code")).as("the command was killed, not the runner").isNotZero();
        assertThat(deployment.health()).isEqualTo(200);
        assertThat(sh("echo alive")).isEqualTo("alive\n");
        assertThat(ComposeDeployment.restarts(deployment.container)).isZero();
        assertThat(ComposeDeployment.restarts(deployment.runner)).isZero();
    }

    @Test
    void runnerReachesNothingNotTheGatewayNorTheHostNorTheServerNorANeighbour() throws Exception {
        assertThat(sh("tail -n +2 /proc/net/route | wc -l").strip()).as("no routes").isEqualTo("0");
        assertThat(sh("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")).isEqualTo("lo\n");
        String gateway = Commands.run(List.of("docker", "network", "inspect", "-f",
                "{{range .IPAM.Config}}{{.Gateway}}{{end}}", deployment.network), 30).output().strip();
        assertThat(gateway).matches("[0-9.]+");
        // A listener of the host's on every interface, as the homelab's Traefik would be.
        try (ServerSocket host = new ServerSocket(0, 50, InetAddress.getByName("0.0.0.0"));
                GenericContainer<?> canary = new GenericContainer<>(ComposeDeployment.SERVER_IMAGE)
                        .withImagePullPolicy(name -> false)
                        .withNetworkMode(deployment.network)
                        .withEnv("MCP_AUTH_TOKEN_SHA256", ComposeDeployment.sha256Hex(deployment.token))
                        // Where it listens for a runner (none comes): the server's own directory.
                        .withTmpFs(Map.of("/run/sandbox-mcp", "rw,size=1m,uid=" + ComposeDeployment.SERVER_UID + ",gid="
                                + ComposeDeployment.SERVER_UID))
                        .withCreateContainerCmdModifier(cmd -> cmd.withName(deployment.project + "-canary"))
                        .waitingFor(Wait.forLogMessage(".*listening on.*\\n", 1).withStartupTimeout(Duration.ofSeconds(60)))) {
            canary.start();
            String canaryIp = canary.getContainerInfo().getNetworkSettings().getNetworks().get(deployment.network).getIpAddress();
            HttpResponse<String> fromHost = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://" + canaryIp + ":8000/healthz")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(fromHost.statusCode()).as("the canary answers the host").isEqualTo(200);
            String serverIp = deployment.ipAddress();
            for (String target : List.of(gateway + ":" + host.getLocalPort(), serverIp + ":8000", canaryIp + ":8000",
                    "127.0.0.1:" + deployment.port)) {
                Map<String, Object> probe = Mcp.run(client, "curl -sS -m 5 -o /dev/null -w '%{http_code}' http://" + target + "/",
                        30);
                // 7: no connection at all. The host's listener never answers, so a connection that
                // succeeded there would end in a timeout (28), not in success.
                assertThat(probe.get("exit_code")).as("curl to %s from the runner must not connect: %s", target, probe)
                        .isEqualTo(7);
                assertThat((String) probe.get("stdout")).doesNotContain("200");
            }
        }
    }

    /** Polls the server's /healthz every 200 ms for {@code duration}, counting answers and failures. */
    CompletableFuture<Void> watchServer(Duration duration, AtomicInteger answers, AtomicInteger failures) {
        return CompletableFuture.runAsync(() -> {
            long end = System.nanoTime() + duration.toNanos();
            while (System.nanoTime() < end) {
                if (deployment.health() == 200) {
                    answers.incrementAndGet();
                } else {
                    failures.incrementAndGet();
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }
}
