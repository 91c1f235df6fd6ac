package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The runner's health in the deployment as composed, while commands run every 2 s for 5 minutes
 * (each followed by the idle sweep): Docker's own health check of the runner never fails, an
 * operator's {@code docker exec} sessions (one detached, one interactive, each with a child)
 * survive to the end, and what commands leave behind is swept every time it is planted. It reads
 * Docker's health status only, never the check's transport. {@code -Dsandbox.health.seconds}
 * shortens the run for a quick try. It runs beside the other classes (junit-platform.properties):
 * it only waits between its commands, in a deployment of its own.
 */
@RequiresDocker
@Execution(ExecutionMode.CONCURRENT)
class RunnerHealthTest {

    private static final Duration RUN = Duration.ofSeconds(Long.getLong("sandbox.health.seconds", 300));
    private static final Duration EVERY = Duration.ofSeconds(2);
    /** Daemons that escape a command's own bookkeeping each way, all of which the sweep must kill. */
    private static final String PLANT = String.join("\n",
            "setsid env -i /bin/sleep 1001 </dev/null >/dev/null 2>&1 &",
            "setsid env -i /bin/sh -c '(/bin/sleep 1002 &)' </dev/null >/dev/null 2>&1 &",
            "setsid env -i /bin/bash -c 'exec -a \"[kworker/0:1]\" /bin/sleep 1003' </dev/null >/dev/null 2>&1 &",
            "setsid env -i /bin/sh -c 'printf \"x) S 0 1 1 0\" >/proc/$$/comm; /bin/sleep 1004; :' </dev/null >/dev/null 2>&1 &",
            "(sleep 1005 </dev/null >/dev/null 2>&1 &)",
            "setsid sleep 1006 </dev/null >/dev/null 2>&1 &",
            "sleep 0.5; ps -ww -eo pid,ppid,sid,comm,args");
    private static final Pattern PLANTED = Pattern.compile("(?m)\\b100[1-6]$");

    record Health(String status, int failingStreak, String exitCodes) {
    }

    @Test
    void commandsEveryTwoSecondsForFiveMinutesLeaveTheRunnerHealthyAndOperatorsShellsAliveAndSweepDaemons()
            throws Exception {
        try (ComposeDeployment deployment = ComposeDeployment.start("health");
                McpSyncClient client = deployment.streamableClient()) {
            String runner = deployment.runner;
            awaitHealthy(runner, Duration.ofSeconds(90));
            // An operator's two ways in: a detached shell with a child, and an interactive one.
            Commands.Result detached = Commands.run(List.of("docker", "exec", "-d", runner, "sh", "-c",
                    "sleep 600 & echo $$ $! >/tmp/operator; wait"), 30);
            assertThat(detached.exitCode()).as(detached.output()).isZero();
            Process interactive = new ProcessBuilder("docker", "exec", "-i", runner, "sh").redirectErrorStream(true).start();
            BufferedReader shellOut = new BufferedReader(
                    new InputStreamReader(interactive.getInputStream(), StandardCharsets.UTF_8));
            Writer shellIn = new OutputStreamWriter(interactive.getOutputStream(), StandardCharsets.UTF_8);
            String shellPid = ask(shellIn, shellOut, "sleep 600 & echo $$");
            String[] operator = docker(runner, "sh", "-c", "while [ ! -s /tmp/operator ]; do sleep 0.1; done; cat /tmp/operator")
                    .strip().split(" ");
            List<String> operatorPids = List.of(operator[0], operator[1], shellPid);

            List<Health> samples = new ArrayList<>();
            int plants = 0;
            long start = System.nanoTime();
            long end = start + RUN.toNanos();
            for (int i = 0; System.nanoTime() < end; i++) {
                long next = start + (i + 1) * EVERY.toNanos();
                if (i % 25 == 5) {
                    String listing = (String) Mcp.run(client, PLANT, 30).get("stdout");
                    assertThat(PLANTED.matcher(listing).results().count()).as("planted and running:\n" + listing)
                            .isEqualTo(6);
                    assertThat(listing).contains("x) S 0 1 1 0", "[kworker/0:1] 1003");
                    plants++;
                } else {
                    assertThat(Mcp.stdout(client, "echo " + i)).isEqualTo(i + "\n");
                }
                if (i % 25 == 6) {
                    // The sweep after the planting command (and after this one) is over: seen from outside.
                    String left = docker(runner, "ps", "-ww", "-eo", "pid,ppid,sid,comm,args");
                    assertThat(PLANTED.matcher(left).find()).as("swept:\n" + left).isFalse();
                    assertThat(left).doesNotContain("kworker", "x) S");
                }
                if (i % 5 == 0) {
                    Health health = health(runner);
                    samples.add(health);
                    assertThat(health.status()).as("runner's health at %d s: %s", i * 2, health).isEqualTo("healthy");
                    assertThat(health.failingStreak()).as("failing streak at %d s: %s", i * 2, health).isZero();
                }
                TimeUnit.NANOSECONDS.sleep(Math.max(0, next - System.nanoTime()));
            }
            Health last = health(runner);
            System.out.printf("runner health over %d s: %d samples, last %s; %d plantings swept%n",
                    RUN.toSeconds(), samples.size(), last, plants);
            assertThat(last.exitCodes()).as("the last checks' exit codes").matches("0( 0)*");
            assertThat(plants).isPositive();
            for (String pid : operatorPids) {
                assertThat(docker(runner, "cat", "/proc/" + pid + "/stat")).as("operator's process " + pid)
                        .doesNotContain(") Z ");
            }
            assertThat(ask(shellIn, shellOut, "echo still $$")).isEqualTo("still " + shellPid);
            assertThat(deployment.pairHealthy()).isTrue();
            shellIn.close();
            interactive.waitFor(10, TimeUnit.SECONDS);
            interactive.destroyForcibly();
        }
    }

    /** Sends one line to the interactive shell and reads its one-line answer. */
    private static String ask(Writer in, BufferedReader out, String line) throws Exception {
        in.write(line + "\n");
        in.flush();
        String answer = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return "(unreadable: " + e + ")";
            }
        }).get(10, TimeUnit.SECONDS);
        assertThat(answer).as("the operator's shell answers '" + line + "'").isNotNull();
        return answer;
    }

    private static String docker(String container, String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of("docker", "exec", container));
        args.addAll(List.of(command));
        Commands.Result result = Commands.run(args, 30);
        assertThat(result.exitCode()).as(String.join(" ", args) + ":\n" + result.output()).isZero();
        return result.output();
    }

    static Health health(String container) throws Exception {
        Commands.Result inspect = Commands.run(List.of("docker", "inspect", "--format",
                "{{.State.Health.Status}}|{{.State.Health.FailingStreak}}|{{range .State.Health.Log}}{{.ExitCode}} {{end}}",
                container), 30);
        assertThat(inspect.exitCode()).as(inspect.output()).isZero();
        String[] fields = inspect.output().strip().split("\\|", -1);
        return new Health(fields[0], Integer.parseInt(fields[1]), fields[2]);
    }

    static void awaitHealthy(String container, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Health health = health(container);
        while (!health.status().equals("healthy")) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(container + " is not healthy after " + timeout + ": " + health + "\n"
                        + ComposeDeployment.logs(container));
            }
            Thread.sleep(1_000);
            health = health(container);
        }
    }
}
