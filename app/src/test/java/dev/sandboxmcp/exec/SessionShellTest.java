package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandboxmcp.config.Limits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a command is started: one login shell, its own session, its own three descriptors. */
class SessionShellTest {

    @TempDir
    Path dir;
    CommandRunner runner;

    @BeforeEach
    void setUp() {
        runner = new CommandRunner(Map.of("PATH", "/usr/local/bin:/usr/bin:/bin", "HOME", dir.toString()), 64 * 1024,
                Duration.ofSeconds(1), 32);
    }

    @AfterEach
    void tearDown() {
        runner.close();
    }

    @Test
    void theShellLeadsASessionOfItsOwnHoldingOnlyStdinStdoutAndStderr() throws Exception {
        CommandResult result = runner.run("echo $$; cat /proc/$$/stat; ls /proc/$$/fd", dir, Duration.ofSeconds(10));
        String[] lines = result.stdout().text().split("\n");
        long shell = Long.parseLong(lines[0]);
        ProcStat stat = ProcStat.parse(lines[1].getBytes(StandardCharsets.ISO_8859_1), lines[1].length());
        assertThat(stat.session()).as("session id of the shell").isEqualTo(shell);
        assertThat(List.of(lines).subList(2, lines.length)).containsExactly("0", "1", "2");
        assertThat(result.exitCode()).isZero();
    }

    @Test
    void theCommandIsTheLoginShellItselfNotAWrapperAroundIt() throws Exception {
        CommandResult result = runner.run("tr '\\0' ' ' < /proc/$PPID/cmdline; echo; tr '\\0' ' ' < /proc/$$/cmdline",
                dir, Duration.ofSeconds(10));
        String[] lines = result.stdout().text().split("\n");
        assertThat(lines[1]).startsWith("/bin/sh -lc ");
        assertThat(lines[0]).as("the shell's parent is the runner, not setsid or another shell")
                .doesNotStartWith("setsid").doesNotStartWith("/bin/sh");
    }

    @Test
    void theFallbackForOlderGlibcGivesTheSameSessionAndOomScore() throws Exception {
        Process process = SessionShell.startWithSetsid(List.of("/bin/sh", "-lc", SessionShell.OOM_FIRST
                + "echo $$; cat /proc/$$/stat; cat /proc/self/oom_score_adj"), dir, Map.of("PATH", "/usr/bin:/bin"), false,
                false);
        String[] lines = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split("\n");
        assertThat(process.waitFor()).isZero();
        ProcStat stat = ProcStat.parse(lines[1].getBytes(StandardCharsets.ISO_8859_1), lines[1].length());
        assertThat(stat.session()).isEqualTo(Long.parseLong(lines[0]));
        assertThat(lines[2]).isEqualTo("1000");
    }

    @Test
    void aCommandAtTheKernelsLimitStillRunsUntouchedAndFirstForTheOomKiller() throws Exception {
        String head = "cat /proc/self/oom_score_adj; printf '%s|' \"$0\" \"$#\" #";
        for (int length : new int[] {Limits.COMMAND_BYTES - 1, Limits.COMMAND_BYTES - SessionShell.OOM_FIRST.length() - 1,
                Limits.COMMAND_BYTES - SessionShell.OOM_FIRST.length()}) {
            String command = head + "x".repeat(length - head.length());
            CommandResult result = runner.run(command, dir, Duration.ofSeconds(10));
            assertThat(result.stdout().text()).as("a command of %d bytes", length).isEqualTo("1000\n/bin/sh|0|");
        }
    }

    @Test
    void stdinGivenToTheCallReachesTheCommandThenEndOfFile() throws Exception {
        CommandResult result = (CommandResult) runner.run("cat; echo \" eof=$?\"", dir, Duration.ofSeconds(10),
                "from the call".getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(10));
        assertThat(result.stdout().text()).isEqualTo("from the call eof=0\n");
    }

    @Test
    void aNulCharacterInTheCommandIsRefusedNotCutShort() {
        assertThatThrownBy(() -> runner.run("echo kept\0; rm -rf stuff", dir, Duration.ofSeconds(10)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("NUL");
    }

    /**
     * Regression: a command's pipes were once read on virtual threads, whose carriers a blocking
     * pipe read holds; a few quiet commands then starved every other call of the runner.
     */
    @Test
    void quietCommandsDoNotStallOtherCalls() throws Exception {
        int quiet = 2 * Runtime.getRuntime().availableProcessors() + 2;
        List<CompletableFuture<CommandResult>> sleepers = new ArrayList<>();
        for (int i = 0; i < quiet; i++) {
            sleepers.add(onVirtualThread("sleep 20"));
        }
        Thread.sleep(500);
        CommandResult echo = onVirtualThread("echo alive").get(15, TimeUnit.SECONDS);
        assertThat(echo.stdout().text()).isEqualTo("alive\n");
        assertThat(sleepers).noneMatch(CompletableFuture::isDone);
        runner.close();
        for (CompletableFuture<CommandResult> sleeper : sleepers) {
            sleeper.handle((result, failure) -> null).get(15, TimeUnit.SECONDS);
        }
    }

    private CompletableFuture<CommandResult> onVirtualThread(String command) {
        CompletableFuture<CommandResult> result = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                result.complete(runner.run(command, dir, Duration.ofSeconds(30)));
            } catch (Exception e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }
}
