package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandboxmcp.TestServer;
import dev.sandboxmcp.config.Config;
import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.tools.LocalTools;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The limits travel one way: the server owns them and states them in its welcome; a runner (one a
 * command took over) can state none, and what it sends is read within bounds the server derived
 * from its own configuration. The runner serves under the welcome's limits, checked against their
 * declarations, and nothing else.
 */
class StatedLimitsTest {

    /** Small limits, so that the server's bound on a runner's line is small. */
    static final Map<String, String> SMALL = Map.of("MCP_FILE_LIMIT_BYTES", "1024", "MCP_OUTPUT_LIMIT_BYTES", "1024",
            "MCP_OUTPUT_VIEW_BYTES", "1024", "MCP_CALL_BUDGET_SECONDS", "7");
    /**
     * What the server reads of one runner line under SMALL ({@code Bounds.maxReplyBytes}): a job_output
     * page (64 KiB) and the job's command (128 KiB, six bytes a byte as JSON), each twice, and 64 KiB.
     */
    static final int SMALL_LINE_BOUND = 2 * 64 * 1024 + 12 * 128 * 1024 + 64 * 1024;

    @TempDir
    Path dir;

    @Test
    void aRunnerThatStatesLimitsIsRefusedAndTheServersBoundsDoNotMove() throws Exception {
        Path socket = Files.createDirectories(dir.resolve("channel")).resolve("runner.sock");
        Map<String, String> env = new HashMap<>(SMALL);
        env.put("MCP_RUNNER_SOCKET", socket.toString());
        Files.writeString(Files.createDirectories(dir.resolve("ws")).resolve("a.txt"), "a\n");
        String stating = ",\"limits\":{\"fileMaxBytes\":67108864,\"outputCapBytes\":67108864}}";
        try (TestServer server = TestServer.start(dir.resolve("ws"), env);
                HostileRunner hostile = new HostileRunner(socket, (kind, id, out) -> { },
                        secret -> HostileRunner.hello(secret).replaceFirst("}$", stating))) {
            awaitAnswers(hostile, 1);
            assertThat(hostile.answers().getFirst()).contains("\"kind\":\"refused\"")
                    .contains("a hello message with an unknown field 'limits'");

            hostile.sayHello(HostileRunner::hello);
            hostile.awaitConnected();
            Protocol.Message welcome = decodeWelcome(hostile.answers().getLast());
            Limits configured = Limits.fromEnvironment(env);
            assertThat(welcome).isEqualTo(new Protocol.Welcome(configured));
            assertThat(configured.fileMaxBytes()).isEqualTo(1024);

            // A reply past the server's bound, far within what the stated limits would have allowed.
            String text = "x".repeat(SMALL_LINE_BOUND);
            hostile.behave((kind, id, out) -> HostileRunner.writeLine(out, "{\"kind\":\"reply\",\"id\":" + id
                    + ",\"error\":false,\"text\":\"" + text + "\",\"structured\":{\"content\":\"" + text + "\"}}"));
            try (McpSyncClient client = server.streamableClient()) {
                client.initialize();
                McpSchema.CallToolResult read = client.callTool(new McpSchema.CallToolRequest("read_file",
                        Map.of("path", "a.txt")));
                assertThat(read.isError()).isTrue();
                assertThat(((McpSchema.TextContent) read.content().getFirst()).text())
                        .contains("the runner's answer was unusable")
                        .contains("a line longer than " + SMALL_LINE_BOUND + " bytes");
            }
        }
    }

    @Test
    void theRunnerServesUnderTheWelcomesLimitsAndRefusesAnyOthers() throws Exception {
        Limits stated = Limits.fromEnvironment(Map.of("MCP_FILE_LIMIT_BYTES", "8192", "MCP_MAX_JOBS", "2"));
        String good = line(new Protocol.Welcome(stated));
        List<String> hostile = List.of(
                good.replace("\"fileMaxBytes\":8192", "\"fileMaxBytes\":2147483647"),
                good.replace("\"pageBytes\":65536", "\"pageBytes\":1"),
                good.replace("\"maxJobs\":2,", "\"maxJobs\":2,\"sandboxOff\":1,"),
                good.replace("\"maxJobs\":2,", ""),
                good.replace("\"maxJobs\":2,", "\"maxJobs\":2,\"maxJobs\":64,"),
                "{\"kind\":\"welcome\"}",
                "{\"kind\":\"welcome\",\"limits\":{\"fileMaxBytes\":\"8192\"}}");
        for (String line : hostile) {
            assertThat(line).isNotEqualTo(good);
            assertThatThrownBy(() -> decodeWelcome(line)).as(line).isInstanceOf(Protocol.Violation.class);
        }

        BlockingQueue<String> welcomes = new LinkedBlockingQueue<>(hostile);
        welcomes.add(good);
        List<Limits> setUps = new CopyOnWriteArrayList<>();
        AtomicBoolean refused = new AtomicBoolean();
        try (FakeServer server = new FakeServer(dir.resolve("fake.sock"), welcomes);
                RunnerAgent agent = RunnerAgent.start(server.socket, Secret.random(), limits -> {
                    setUps.add(limits);
                    return new RunnerAgent.Service(new LocalTools(List.of()), new HealthProbe(List.of(),
                            Duration.ofSeconds(1), Duration.ZERO), ChannelTest.BOUNDS, () -> { });
                }, 4, () -> refused.set(true))) {
            await(() -> !setUps.isEmpty(), "the runner set up under the good welcome");
            assertThat(server.connections()).as("one connection per welcome").isEqualTo(hostile.size() + 1);
            assertThat(setUps).containsExactly(stated);

            // The same server, reconnected, states the same limits: the runner carries on with what it built.
            welcomes.add(good);
            server.dropAll();
            await(() -> server.connections() == hostile.size() + 2, "the runner connected again");
            Thread.sleep(300);
            assertThat(refused).isFalse();

            // Other limits at a reconnect: the runner gives up rather than serve under two sets.
            welcomes.add(line(new Protocol.Welcome(Limits.defaults())));
            server.dropAll();
            await(refused::get, "the runner gave up on other limits");
            assertThat(setUps).containsExactly(stated);
        }
    }

    @Test
    void aWelcomeFitsWhatTheRunnerReadsWithRoomToSpare() throws Exception {
        Protocol.Welcome welcome = new Protocol.Welcome(Limits.defaults());
        assertThat(decodeWelcome(line(welcome))).isEqualTo(welcome);
        // Every value is an int (the declarations allow no more): the widest welcome has ten digits in each.
        String widest = line(welcome).replaceAll(":\\d+", ":2147483647");
        assertThat(widest.length()).isLessThan(RunnerAgent.WELCOME.lineBytes() / 8);
        assertThat(2L * welcome.limits().values().size() + 4).isLessThan(RunnerAgent.WELCOME.tokens() / 8);
    }

    static String line(Protocol.Message message) {
        byte[] encoded = Protocol.encode(message);
        return new String(encoded, 0, encoded.length - 1, StandardCharsets.UTF_8);
    }

    static Protocol.Message decodeWelcome(String line) throws Protocol.Violation {
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        return Protocol.decode(bytes, bytes.length, Protocol.Sender.SERVER, Protocol.Phase.HELLO,
                RunnerAgent.WELCOME.factory());
    }

    static void awaitAnswers(HostileRunner hostile, int count) throws InterruptedException {
        await(() -> hostile.answers().size() >= count, count + " answers to the stand-in's hellos");
    }

    static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        for (int i = 0; i < 400 && !condition.getAsBoolean(); i++) {
            Thread.sleep(25);
        }
        assertThat(condition.getAsBoolean()).as(what).isTrue();
    }

    /** A stand-in for the server's end: answers each hello with the next of {@code welcomes}. */
    static final class FakeServer implements AutoCloseable {
        final Path socket;
        private final ServerSocketChannel listener;
        private final List<SocketChannel> open = new CopyOnWriteArrayList<>();

        FakeServer(Path socket, BlockingQueue<String> welcomes) throws IOException {
            this.socket = socket;
            listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            listener.bind(UnixDomainSocketAddress.of(socket));
            Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        SocketChannel connection = listener.accept();
                        open.add(connection);
                        InputStream in = Channels.newInputStream(connection);
                        ByteArrayOutputStream hello = new ByteArrayOutputStream();
                        for (int b = in.read(); b != '\n' && b >= 0; b = in.read()) {
                            hello.write(b);
                        }
                        String welcome = welcomes.take();
                        Channels.newOutputStream(connection).write((welcome + "\n").getBytes(StandardCharsets.UTF_8));
                    }
                } catch (IOException | InterruptedException closed) {
                    // the test is over
                }
            });
        }

        int connections() {
            return open.size();
        }

        void dropAll() throws IOException {
            for (SocketChannel connection : open) {
                connection.close();
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            dropAll();
        }
    }
}
