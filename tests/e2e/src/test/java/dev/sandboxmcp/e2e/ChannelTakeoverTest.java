package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The channel from a command's side, in the deployment as composed: the server's socket lies in a
 * volume the runner mounts read-only, and a runner proves itself with a per-start secret. A
 * command renames, deletes, replaces and floods the socket, speaks to it, and searches every
 * readable file and process for the secret; later calls still reach the real runner and are
 * audited, and the server answers throughout. The test prints what it tried.
 */
@RequiresDocker
class ChannelTakeoverTest {

    static final String SOCKET = "/run/sandbox-mcp/runner.sock";

    @Test
    void aCommandCannotTakeTheChannelOverNorFindTheSecret() throws Exception {
        try (ComposeDeployment deployment = ComposeDeployment.start("takeover");
                McpSyncClient client = deployment.streamableClient()) {
            String secret = catchTicket(deployment);
            AtomicInteger answers = new AtomicInteger();
            AtomicInteger failures = new AtomicInteger();
            CompletableFuture<Void> watch = CompletableFuture.runAsync(() -> {
                long end = System.nanoTime() + Duration.ofSeconds(40).toNanos();
                while (System.nanoTime() < end) {
                    (deployment.health() == 200 ? answers : failures).incrementAndGet();
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            String attacks = Mcp.stdout(client, String.join("; ",
                    "cd /run/sandbox-mcp",
                    "echo \"mount: $(grep ' /run/sandbox-mcp ' /proc/mounts)\"",
                    "ls -ln /run/sandbox-mcp | sed 's/^/listing: /'",
                    "mv runner.sock aside.sock 2>&1 | sed 's/^/rename: /'",
                    "rm -f runner.sock 2>&1 | sed 's/^/delete: /'",
                    "nc -lU evil.sock 2>&1 & sleep 0.5; kill $! 2>/dev/null; echo replace: $(ls evil.sock 2>&1)",
                    "ln -sf /tmp/evil.sock runner.sock 2>&1 | sed 's/^/shadow: /'",
                    "printf 'garbage\\n' | timeout 5 nc -U -N runner.sock | sed 's/^/garbage: /'",
                    "printf '{\"kind\":\"call\",\"id\":1,\"tool\":\"run_command\",\"arguments\":{\"command\":\"touch "
                            + "/workspace/pwned\"}}\\n' | timeout 5 nc -U -N runner.sock | sed 's/^/call-without-hello: /'",
                    "printf '{\"kind\":\"hello\",\"version\":1,\"secret\":\"%s\"}\\n' $(printf '0%.0s' $(seq 64)) "
                            + "| timeout 5 nc -U -N runner.sock | sed 's/^/wrong-secret: /'",
                    "for i in $(seq 50); do (sleep 4 | nc -U runner.sock >/dev/null 2>&1 &); done; sleep 1; "
                            + "echo flood: 50 silent connections",
                    "echo \"ticket: $(ls ticket 2>&1)\"",
                    // The runner's lock is its init's (PID 1) shared flock: a command's exclusive one is refused.
                    "(exec 9<runner.lock && { flock -n -x 9 && echo lock: free || echo lock: held; })",
                    "echo \"memory: $(for p in $(pgrep -x java); do head -c 1 /proc/$p/mem 2>&1 >/dev/null; done)\"",
                    "echo \"environ: $(for p in $(pgrep -x java); do head -c 1 /proc/$p/environ 2>&1 >/dev/null; done)\"",
                    "s=" + split(secret),
                    // The secret as the pattern, on standard input (printf is a builtin): no command line holds it.
                    "printf '%s\\n' \"$s\" | grep -rlsF -f - / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "
                            + "2>/dev/null | sed 's/^/found-in-file: /'",
                    "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f 2>/dev/null; done > /tmp/p",
                    "printf '%s\\n' \"$s\" | grep -cF -f - /tmp/p | sed 's/^/found-in-processes: /'; rm -f /tmp/p",
                    "echo done"), 120);
            System.out.println("ChannelTakeoverTest, what a command tried:\n" + attacks.indent(2));
            assertThat(attacks).contains("mount: ").containsPattern("mount: \\S+ /run/sandbox-mcp \\S+ ro[,\\s]")
                    .contains("rename: mv: cannot move").contains("Read-only file system")
                    .contains("delete: rm: cannot remove").contains("replace: ls: cannot access 'evil.sock'")
                    .contains("shadow: ln: ").contains("garbage: {\"kind\":\"refused\"")
                    .contains("call-without-hello: {\"kind\":\"refused\"").contains("wrong-secret: {\"kind\":\"refused\"")
                    .contains("ticket: ls: cannot access 'ticket'").contains("lock: held").contains("found-in-processes: 0")
                    .doesNotContain("found-in-file: ").doesNotContain("\"kind\":\"welcome\"")
                    .contains("done");
            assertThat(attacks).containsPattern("memory: .*Permission denied").containsPattern("environ: .*Permission denied");
            String call = Mcp.stdout(client, "echo still-the-real-runner; ls /workspace/pwned 2>&1");
            assertThat(call).contains("still-the-real-runner").contains("No such file");
            watch.join();
            assertThat(failures).as("the server answered /healthz throughout").hasValue(0);
            assertThat(answers.get()).isPositive();
            assertThat(deployment.pairHealthy()).isTrue();
            String serverLog = deployment.logs();
            assertThat(serverLog).contains("refused a connection on the channel").contains("still-the-real-runner");
            assertThat(ComposeDeployment.logs(deployment.runner)).doesNotContain("refused this runner");
        }
    }

    /**
     * The secret of the runner's next start, read from the channel volume on the host while the
     * server publishes it (until the new runner proves itself): what the search must not find. On
     * the way, the runner's health as /healthz reports it follows the channel: right after the
     * runner's connection ends, the server answers and does not say the runner is ok.
     */
    private static String catchTicket(ComposeDeployment deployment) throws Exception {
        Commands.Result inspect = Commands.run(List.of("docker", "volume", "inspect", "-f", "{{.Mountpoint}}",
                deployment.project + "_channel"), 30);
        assertThat(inspect.exitCode()).as(inspect.output()).isZero();
        Path ticket = Path.of(inspect.output().strip(), "ticket");
        assertThat(deployment.pairHealthy()).isTrue();
        Commands.Result stop = Commands.run(List.of("docker", "stop", "-t", "10", deployment.runner), 60);
        assertThat(stop.exitCode()).as(stop.output()).isZero();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!deployment.logs().contains("the runner's connection ended") && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(deployment.health()).isEqualTo(200);
        assertThat(deployment.pairHealthy()).as("/healthz right after the runner's connection ended").isFalse();
        Commands.Result start = Commands.run(List.of("docker", "start", deployment.runner), 60);
        assertThat(start.exitCode()).as(start.output()).isZero();
        String secret = null;
        while (secret == null && System.nanoTime() < deadline) {
            try {
                secret = Files.readString(ticket).strip();
            } catch (java.io.IOException notYet) {
                Thread.sleep(5);
            }
        }
        assertThat(secret).as("the ticket was published on the host's view of the volume").isNotNull().hasSize(64);
        deployment.awaitHealthy(Duration.ofSeconds(90));
        assertThat(ticket).as("the ticket is gone once the runner proved itself").doesNotExist();
        return secret;
    }

    static String split(String secret) {
        int half = secret.length() / 2;
        return "\"" + secret.substring(0, half) + "\"\"" + secret.substring(half) + "\"";
    }
}
