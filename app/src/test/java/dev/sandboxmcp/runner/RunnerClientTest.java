package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.tools.LocalTools;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.SandboxTool;
import dev.sandboxmcp.tools.ToolArguments;
import dev.sandboxmcp.tools.ToolResponse;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The server's end of the channel against a real runner end and against hostile ones. */
class RunnerClientTest {

    static final Duration DEADLINE = Duration.ofSeconds(2);
    static final int MAX_REPLY = 64 * 1024;

    @TempDir
    Path dir;

    RunnerClient client(Path socket) {
        return new RunnerClient(socket, MAX_REPLY, (tool, arguments) -> DEADLINE);
    }

    /** A tool that echoes its "text" argument, reports progress twice, or waits to be interrupted. */
    static final class EchoTool implements SandboxTool {
        final CountDownLatch interrupted = new CountDownLatch(1);

        @Override
        public McpSchema.Tool definition() {
            return McpSchema.Tool.builder().name("echo").inputSchema(McpSchema.JsonSchema.builder().type("object").build())
                    .build();
        }

        @Override
        public ToolResponse call(ToolArguments arguments, Progress progress) {
            try {
                String text = arguments.optionalString("text", "");
                if (text.equals("block")) {
                    Thread.sleep(Duration.ofMinutes(5));
                }
                progress.report(1, 2.0, "half");
                progress.report(2, 2.0, "x".repeat(10_000));
                return new ToolResponse(false, text, Map.of("echo", text), "ignored", 7, 42L, false);
            } catch (InterruptedException e) {
                interrupted.countDown();
                return ToolResponse.failure(null, "interrupted");
            } catch (Exception e) {
                return ToolResponse.failure(null, e.toString());
            }
        }
    }

    @Test
    void callRoundTripsThroughARealRunnerWithProgressBoundedAndTheTargetFromTheCall() throws Exception {
        Path socket = dir.resolve("runner.sock");
        EchoTool echo = new EchoTool();
        try (RunnerServer runner = RunnerServer.start(socket, new LocalTools(List.of(echo)),
                new HealthProbe(List.of(), DEADLINE, Duration.ZERO), 1 << 20, 8)) {
            List<String> progress = new ArrayList<>();
            ToolResponse response = client(socket).execute("echo", Map.of("text", "héllo\nworld", "path", "a.txt"),
                    (done, total, message) -> progress.add(done + "/" + total + " " + message));
            assertThat(response.error()).as(response.text()).isFalse();
            assertThat(response.text()).isEqualTo("héllo\nworld");
            assertThat(response.structured()).containsEntry("echo", "héllo\nworld");
            assertThat(response.exitCode()).isEqualTo(7);
            assertThat(response.bytes()).isEqualTo(42L);
            assertThat(response.target()).isEqualTo("a.txt");
            assertThat(progress).hasSize(2);
            assertThat(progress.get(0)).isEqualTo("1.0/2.0 half");
            assertThat(progress.get(1)).hasSizeLessThan(220);
            assertThat(client(socket).ping(DEADLINE)).isEqualTo(new RunnerClient.Health.Answered(List.of()));
        }
    }

    @Test
    void callPastItsDeadlineIsAbandonedAndTheRunnerInterruptsIt() throws Exception {
        Path socket = dir.resolve("runner.sock");
        EchoTool echo = new EchoTool();
        try (RunnerServer runner = RunnerServer.start(socket, new LocalTools(List.of(echo)),
                new HealthProbe(List.of(), DEADLINE, Duration.ZERO), 1 << 20, 8)) {
            long started = System.nanoTime();
            ToolResponse response = client(socket).execute("echo", Map.of("text", "block"), Progress.NONE);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(DEADLINE.plusSeconds(2));
            assertThat(response.error()).isTrue();
            assertThat(response.text()).contains("did not answer within 2 s");
            assertThat(echo.interrupted.await(5, TimeUnit.SECONDS)).as("the runner saw the cancel").isTrue();
        }
    }

    @Test
    void absentRunnerIsAClearErrorAtOnce() {
        ToolResponse response = client(dir.resolve("nobody.sock")).execute("echo", Map.of(), Progress.NONE);
        assertThat(response.error()).isTrue();
        assertThat(response.text()).contains("runner is not running").contains("try again");
        assertThat(client(dir.resolve("nobody.sock")).ping(DEADLINE)).isInstanceOf(RunnerClient.Health.Unreachable.class);
    }

    @Test
    void frozenRunnerThatNeverAcceptsCostsOneDeadline() throws Exception {
        Path socket = dir.resolve("frozen.sock");
        try (ServerSocketChannel frozen = HostileRunner.frozen(socket)) {
            for (int i = 0; i < 4; i++) { // past the backlog too
                long started = System.nanoTime();
                ToolResponse response = client(socket).execute("echo", Map.of(), Progress.NONE);
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(DEADLINE.plusSeconds(2));
                assertThat(response.error()).isTrue();
                assertThat(response.text()).contains("did not answer within");
            }
        }
    }

    static Stream<Arguments> hostileAnswers() {
        return Stream.of(
                Arguments.of("an endless line", (HostileRunner.Behaviour) (in, out) -> {
                    byte[] junk = new byte[8192];
                    java.util.Arrays.fill(junk, (byte) 'a');
                    for (int i = 0; i < 100_000; i++) {
                        out.write(junk);
                    }
                }, "longer than"),
                Arguments.of("not JSON", (HostileRunner.Behaviour) (in, out) -> HostileRunner.writeLine(out, "{\"v\":1,"),
                        "not a JSON object"),
                Arguments.of("a JSON array", (HostileRunner.Behaviour) (in, out) -> HostileRunner.writeLine(out, "[1,2]"),
                        "not a JSON object"),
                Arguments.of("another version", (HostileRunner.Behaviour) (in, out) -> HostileRunner.writeLine(out,
                        "{\"v\":2,\"reply\":{\"error\":false,\"text\":\"x\",\"structured\":{}}}"), "protocol version 2"),
                Arguments.of("a reply without text", (HostileRunner.Behaviour) (in, out) -> HostileRunner.writeLine(out,
                        "{\"v\":1,\"reply\":{\"error\":false}}"), "lacks error or text"),
                Arguments.of("structured that is not an object", (HostileRunner.Behaviour) (in, out) -> HostileRunner.writeLine(
                        out, "{\"v\":1,\"reply\":{\"error\":false,\"text\":\"x\",\"structured\":[1]}}"), "not an object"),
                Arguments.of("a success without structured content", (HostileRunner.Behaviour) (in, out) -> HostileRunner
                        .writeLine(out, "{\"v\":1,\"reply\":{\"error\":false,\"text\":\"x\"}}"), "without its structured"),
                Arguments.of("deeply nested JSON", (HostileRunner.Behaviour) (in, out) -> HostileRunner.writeLine(out,
                        "{\"v\":1,\"reply\":" + "[".repeat(20_000) + "]".repeat(20_000) + "}"), "broke the protocol"),
                Arguments.of("a hang-up without an answer", (HostileRunner.Behaviour) (in, out) -> { },
                        "stopped before it answered"),
                Arguments.of("a line cut short", (HostileRunner.Behaviour) (in, out) -> out.write("{\"v\":1".getBytes()),
                        "without a newline"),
                Arguments.of("silence", (HostileRunner.Behaviour) (in, out) -> Thread.sleep(Duration.ofMinutes(5)),
                        "did not answer within"),
                Arguments.of("a trickle of progress past the deadline", (HostileRunner.Behaviour) (in, out) -> {
                    for (int i = 0; i < 600; i++) {
                        HostileRunner.writeLine(out, "{\"v\":1,\"progress\":{\"done\":" + i + "}}");
                        Thread.sleep(10);
                    }
                }, "did not answer within"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileAnswers")
    void hostileRunnerGetsAClearErrorWithinTheDeadline(String name, HostileRunner.Behaviour behaviour, String expected)
            throws Exception {
        Path socket = dir.resolve("hostile.sock");
        try (HostileRunner hostile = new HostileRunner(socket, behaviour)) {
            long started = System.nanoTime();
            ToolResponse response = client(socket).execute("echo", Map.of("path", "a.txt"), Progress.NONE);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(DEADLINE.plusSeconds(2));
            assertThat(response.error()).isTrue();
            assertThat(response.text()).contains(expected);
            assertThat(response.target()).isEqualTo("a.txt");
            assertThat(client(socket).ping(Duration.ofMillis(500))).isInstanceOf(RunnerClient.Health.Unreachable.class);
        }
    }

    @Test
    void runnerRefusesRequestLinesOverItsLimit() throws IOException {
        Path socket = dir.resolve("runner.sock");
        try (RunnerServer runner = RunnerServer.start(socket, new LocalTools(List.of(new EchoTool())),
                new HealthProbe(List.of(), DEADLINE, Duration.ZERO), 1024, 8)) {
            ToolResponse fits = client(socket).execute("echo", Map.of("text", "x".repeat(900)), Progress.NONE);
            assertThat(fits.error()).as(fits.text()).isFalse();
            ToolResponse over = client(socket).execute("echo", Map.of("text", "x".repeat(1100)), Progress.NONE);
            assertThat(over.error()).isTrue();
            assertThat(over.text()).contains("stopped before it answered");
        }
    }
}
