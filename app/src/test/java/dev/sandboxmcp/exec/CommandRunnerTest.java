package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommandRunnerTest {

    private static final int CAP = 64 * 1024;

    @TempDir
    Path dir;
    CommandRunner runner;

    @BeforeEach
    void setUp() {
        runner = new CommandRunner(Map.of("PATH", "/usr/local/bin:/usr/bin:/bin", "HOME", dir.toString()), CAP,
                Duration.ofSeconds(1), 4);
    }

    @AfterEach
    void tearDown() {
        runner.close();
    }

    private CommandResult run(String command, int timeoutSeconds) throws Exception {
        return runner.run(command, dir, Duration.ofSeconds(timeoutSeconds));
    }

    @Test
    void returnsExitCodeAndBothStreams() throws Exception {
        CommandResult result = run("echo out; echo err >&2; pwd; exit 7", 10);
        assertThat(result.exitCode()).isEqualTo(7);
        assertThat(result.stdout().text()).isEqualTo("out\n" + dir.toRealPath() + "\n");
        assertThat(result.stderr().text()).isEqualTo("err\n");
        assertThat(result.timedOut()).isFalse();
        assertThat(result.stdout().truncated()).isFalse();
    }

    @Test
    void commandsAreTheOomKillersFirstChoiceAndGetTheirCommandLineUntouched() throws Exception {
        CommandResult result = run("cat /proc/self/oom_score_adj; sh -c 'cat /proc/self/oom_score_adj'; "
                + "printf '%s|' \"$0\" '$1' \"a  b\"", 10);
        assertThat(result.stdout().text()).isEqualTo("1000\n1000\n/bin/sh|$1|a  b|");
    }

    @Test
    void stdinIsClosed() throws Exception {
        CommandResult result = run("cat; read line; echo \"read=$?\"", 10);
        assertThat(result.timedOut()).isFalse();
        assertThat(result.stdout().text()).isEqualTo("read=1\n");
        assertThat(result.durationMillis()).isLessThan(5_000);
    }

    @Test
    void commandSeesOnlyTheGivenEnvironment() throws Exception {
        CommandResult result = run("env", 10);
        assertThat(result.stdout().text()).contains("HOME=" + dir).doesNotContain("MCP_AUTH_TOKEN");
    }

    @Test
    void timeoutKillsTheWholeTreeIncludingBackgroundedGrandchildren() throws Exception {
        Path pids = dir.resolve("pids");
        String command = "sleep 300 & echo $! >> pids; "
                + "(sleep 301 & echo $! >> pids) ; "
                + "nohup sh -c 'sleep 302' >/dev/null 2>&1 & echo $! >> pids; "
                + "setsid sleep 303 & echo $! >> pids; "
                + "sleep 304";
        long started = System.nanoTime();
        CommandResult result = run(command, 1);
        long elapsedMillis = (System.nanoTime() - started) / 1_000_000;

        assertThat(result.timedOut()).isTrue();
        assertThat(elapsedMillis).as("deadline plus grace").isLessThan(1_000 + 1_000 + 2_500);
        List<Long> started4 = Files.readAllLines(pids).stream().map(Long::parseLong).toList();
        assertThat(started4).hasSize(4);
        for (long pid : started4) {
            assertThat(isRunning(pid)).as("process %d still running", pid).isFalse();
        }
    }

    @Test
    void processThatIgnoresSigtermIsKilledAfterTheGrace() throws Exception {
        long started = System.nanoTime();
        CommandResult result = run("trap '' TERM; while :; do sleep 0.05; done", 1);
        long elapsedMillis = (System.nanoTime() - started) / 1_000_000;
        assertThat(result.timedOut()).isTrue();
        assertThat(result.exitCode()).isEqualTo(128 + 9);
        assertThat(elapsedMillis).isBetween(1_900L, 4_500L);
    }

    @Test
    void backgroundChildrenAreKilledWhenTheCommandReturns() throws Exception {
        long started = System.nanoTime();
        CommandResult result = run("sleep 300 & echo $! > bg.pid; echo started", 30);
        long elapsedMillis = (System.nanoTime() - started) / 1_000_000;
        assertThat(result.stdout().text()).isEqualTo("started\n");
        assertThat(result.timedOut()).isFalse();
        assertThat(elapsedMillis).as("does not wait for the background child").isLessThan(5_000);
        long pid = Long.parseLong(Files.readString(dir.resolve("bg.pid")).strip());
        assertThat(isRunning(pid)).isFalse();
    }

    @Test
    void outputCapHoldsAtTheEdgeForBothStreams() throws Exception {
        CommandResult exact = run("head -c " + CAP + " /dev/zero | tr '\\0' a; head -c " + CAP
                + " /dev/zero | tr '\\0' b >&2", 30);
        assertThat(exact.stdout().text()).hasSize(CAP);
        assertThat(exact.stdout().truncated()).isFalse();
        assertThat(exact.stderr().text()).hasSize(CAP);
        assertThat(exact.stderr().truncated()).isFalse();

        CommandResult over = run("head -c " + (CAP + 1) + " /dev/zero | tr '\\0' a; head -c " + (CAP + 1)
                + " /dev/zero | tr '\\0' b >&2", 30);
        assertThat(over.stdout().text()).hasSize(CAP);
        assertThat(over.stdout().truncated()).isTrue();
        assertThat(over.stdout().totalBytes()).isEqualTo(CAP + 1);
        assertThat(over.stderr().text()).hasSize(CAP);
        assertThat(over.stderr().truncated()).isTrue();
        assertThat(over.stderr().totalBytes()).isEqualTo(CAP + 1);
    }

    @Test
    void hugeOutputIsCountedButNotKept() throws Exception {
        CommandResult result = run("head -c 100000000 /dev/zero", 60);
        assertThat(result.exitCode()).isZero();
        assertThat(result.stdout().totalBytes()).isEqualTo(100_000_000L);
        assertThat(result.stdout().text()).hasSize(CAP);
        assertThat(result.stdout().truncated()).isTrue();
    }

    @Test
    void invalidUtf8IsReplacedNotFatal() throws Exception {
        CommandResult result = run("printf 'ok \\377\\376 end'", 10);
        assertThat(result.exitCode()).isZero();
        assertThat(result.stdout().text()).startsWith("ok ").endsWith(" end").contains("\uFFFD");
    }

    @Test
    void exitCodeReportsSignals() throws Exception {
        assertThat(run("kill -KILL $$", 10).exitCode()).isEqualTo(128 + 9);
        assertThat(run("true", 10).exitCode()).isZero();
        assertThat(run("false", 10).exitCode()).isEqualTo(1);
    }

    @Test
    void callPastTheConcurrencyBoundIsRefusedAsBusy() throws Exception {
        CommandRunner one = new CommandRunner(Map.of("PATH", "/usr/bin:/bin"), CAP, Duration.ofSeconds(1), 1);
        try {
            CompletableFuture<CommandResult> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return one.run("sleep 2", dir, Duration.ofSeconds(10));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            while (one.runningCount() == 0) {
                Thread.sleep(10);
            }
            assertThatThrownBy(() -> one.run("true", dir, Duration.ofSeconds(10)))
                    .isInstanceOf(CommandRunner.BusyException.class)
                    .hasMessageContaining("try again");
            assertThat(first.get().exitCode()).isZero();
            assertThat(one.run("true", dir, Duration.ofSeconds(10)).exitCode()).isZero();
        } finally {
            one.close();
        }
    }

    @Test
    void closeKillsRunningCommandsAndRefusesNewOnes() throws Exception {
        CompletableFuture<CommandResult> running = CompletableFuture.supplyAsync(() -> {
            try {
                return runner.run("echo $$ > shell.pid; sleep 300", dir, Duration.ofSeconds(60));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        long shell = awaitPid(dir.resolve("shell.pid"));
        long started = System.nanoTime();
        runner.close();
        CommandResult result = running.get();
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(4_000);
        assertThat(result.exitCode()).isNotZero();
        assertThat(isRunning(shell)).isFalse();
        assertThatThrownBy(() -> runner.run("true", dir, Duration.ofSeconds(1))).isInstanceOf(IOException.class);
    }

    /** Waits until a command has written its pid to {@code file}, and returns it. */
    static long awaitPid(Path file) throws Exception {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        while (!Files.exists(file) || Files.readString(file).isBlank()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no pid in " + file);
            }
            Thread.sleep(10);
        }
        return Long.parseLong(Files.readString(file).strip());
    }

    @Test
    void aCallCancelledWhileItsOutputIsGivenUpOnClosesItsOrphanAccount() throws Exception {
        int before = Orphans.openAccounts();
        try {
            for (int call = 0; call < 3; call++) {
                // The shell exits at once; the escaped sleep holds its stdout, so the end waits for it (2 s) when cancelled.
                Thread caller = Thread.ofPlatform().start(() -> {
                    try {
                        run("setsid env -i /bin/sleep 6.173 & echo x", 30);
                    } catch (Exception cancelled) {
                        // expected: the interrupt
                    }
                });
                Thread.sleep(1000);
                caller.interrupt();
                caller.join();
            }
            assertThat(Orphans.openAccounts()).isEqualTo(before);
        } finally {
            ProcessHandle.allProcesses()
                    .filter(p -> p.info().arguments().map(a -> List.of(a).equals(List.of("6.173"))).orElse(false))
                    .forEach(ProcessHandle::destroyForcibly);
        }
    }

    /** Alive and not a zombie waiting for its parent to reap it. */
    static boolean isRunning(long pid) {
        return dev.sandboxmcp.ProcStat.running(pid);
    }
}
