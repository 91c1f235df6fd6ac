package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.tools.CallCancellation;
import dev.sandboxmcp.tools.HeapBudget;
import dev.sandboxmcp.tools.LocalTools;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.SandboxTool;
import dev.sandboxmcp.tools.ToolArguments;
import dev.sandboxmcp.tools.ToolResponse;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The channel in one process: the server's listener and link, the runner's agent with a test tool. */
class ChannelTest {

    static final Duration DEADLINE = Duration.ofSeconds(3);
    static final Bounds BOUNDS = new Bounds(1 << 20, 10_000, 16, 1 << 20);

    @TempDir
    Path dir;

    final List<AutoCloseable> open = new ArrayList<>();
    final AtomicBoolean refused = new AtomicBoolean();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
    }

    /** A tool that echoes "text", reports progress twice, or waits to be interrupted ("block"). */
    static final class EchoTool implements SandboxTool {
        final CountDownLatch started = new CountDownLatch(1);
        /** Counted down when a "block" call has begun. */
        final CountDownLatch blocking = new CountDownLatch(1);
        final CountDownLatch interrupted = new CountDownLatch(1);
        /** Whether each call, in order, was given a progress that goes somewhere. */
        final List<Boolean> progressListened = java.util.Collections.synchronizedList(new ArrayList<>());
        /** The threads that carried out calls. */
        final java.util.Set<Thread> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @Override
        public McpSchema.Tool definition() {
            return McpSchema.Tool.builder().name("echo").inputSchema(McpSchema.JsonSchema.builder().type("object").build())
                    .build();
        }

        @Override
        public ToolResponse call(ToolArguments arguments, Progress progress) {
            try {
                String text = arguments.optionalString("text", "");
                progressListened.add(progress != Progress.NONE);
                threads.add(Thread.currentThread());
                started.countDown();
                if (text.equals("block")) {
                    blocking.countDown();
                    Thread.sleep(Duration.ofMinutes(5));
                }
                if (text.equals("nap")) {
                    Thread.sleep(50);
                }
                progress.report(1, 2.0, "half");
                progress.report(2, 2.0, "x".repeat(10_000));
                return new ToolResponse(false, text, Map.of("echo", text, "deep", List.of(Map.of("n", 1))), "ignored", 7,
                        42L, false);
            } catch (InterruptedException e) {
                interrupted.countDown();
                return ToolResponse.failure(null, "interrupted");
            } catch (Exception e) {
                return ToolResponse.failure(null, e.toString());
            }
        }
    }

    RunnerLink link() {
        return new RunnerLink(BOUNDS, (tool, arguments) -> DEADLINE);
    }

    ChannelListener listen(RunnerLink link) throws Exception {
        ChannelListener listener = ChannelListener.start(dir.resolve("runner.sock"), link, BOUNDS, Limits.defaults());
        open.add(listener);
        return listener;
    }

    RunnerAgent agent(ChannelListener listener, Secret secret, EchoTool tool, int maxCalls) {
        RunnerAgent agent = RunnerAgent.start(listener.socket(), secret, limits -> new RunnerAgent.Service(
                new LocalTools(List.of(tool)), new HealthProbe(List.of(), DEADLINE, Duration.ZERO), BOUNDS, () -> { }),
                maxCalls, () -> refused.set(true));
        open.add(agent);
        return agent;
    }

    /** A link with an agent of {@code tool} connected to it. */
    RunnerLink connected(EchoTool tool, int maxCalls) throws Exception {
        RunnerLink link = link();
        ChannelListener listener = listen(link);
        agent(listener, listener.rotate(), tool, maxCalls);
        awaitConnected(link, true);
        return link;
    }

    /**
     * A connection to a listener of {@code link}'s that proved itself and read its welcome, and reads
     * no more: a runner that stopped, or one taken over. {@code link} carries calls over it.
     */
    SocketChannel provenNotReading(RunnerLink link) throws Exception {
        ChannelListener listener = listen(link);
        Secret secret = listener.rotate();
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(listener.socket()));
            Channels.newOutputStream(channel).write((HostileRunner.hello(secret.hex()) + "\n")
                    .getBytes(StandardCharsets.UTF_8));
            InputStream in = Channels.newInputStream(channel);
            for (int b = in.read(); b != '\n'; b = in.read()) { // its welcome, and nothing after it
                assertThat(b).as("the welcome").isNotNegative();
            }
            awaitConnected(link, true);
            return channel;
        } catch (Exception | Error e) {
            channel.close();
            throw e;
        }
    }

    static void awaitConnected(RunnerLink link, boolean connected) throws InterruptedException {
        for (int i = 0; i < 200 && link.connected() != connected; i++) {
            Thread.sleep(25);
        }
        assertThat(link.connected()).isEqualTo(connected);
    }

    @Test
    void aCallWhoseClientDoesNotListenMakesNoProgressAtTheRunner() throws Exception {
        EchoTool echo = new EchoTool();
        RunnerLink link = connected(echo, 8);
        List<String> heard = java.util.Collections.synchronizedList(new ArrayList<>());
        assertThat(link.execute("echo", Map.of("text", "quiet"), Progress.NONE).text()).isEqualTo("quiet");
        assertThat(link.execute("echo", Map.of("text", "heard"), (done, total, message) -> heard.add(message)).text())
                .isEqualTo("heard");
        assertThat(echo.progressListened).containsExactly(false, true);
        assertThat(heard).hasSize(2).contains("half");
    }

    @Test
    void callsRoundTripMultiplexedWithProgress() throws Exception {
        // Room for all 20 at once (they may all be in flight): "busy" has its own test.
        RunnerLink link = connected(new EchoTool(), 20);
        List<CompletableFuture<ToolResponse>> calls = new ArrayList<>();
        List<String> progress = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 20; i++) {
            String text = "héllo " + i;
            calls.add(CompletableFuture.supplyAsync(() -> link.execute("echo", Map.of("text", text, "path", "a.txt"),
                    (done, total, message) -> progress.add(done + "/" + total + " " + message))));
        }
        for (int i = 0; i < 20; i++) {
            ToolResponse response = calls.get(i).get(10, TimeUnit.SECONDS);
            assertThat(response.error()).as(response.text()).isFalse();
            assertThat(response.text()).isEqualTo("héllo " + i);
            assertThat(response.structured()).containsEntry("echo", "héllo " + i);
            assertThat(response.exitCode()).isEqualTo(7);
            assertThat(response.bytes()).isEqualTo(42L);
        }
        assertThat(progress).hasSize(40).contains("1.0/2.0 half").allSatisfy(p -> assertThat(p).hasSizeLessThan(220));
        assertThat(link.ping(DEADLINE)).isEqualTo(new RunnerLink.Health.Answered(List.of()));
    }

    @Test
    void cancelIsAMessageThatInterruptsTheCallAndLeavesTheConnection() throws Exception {
        EchoTool echo = new EchoTool();
        RunnerLink link = connected(echo, 8);
        CallCancellation cancellation = new CallCancellation();
        CompletableFuture<ToolResponse> call = CompletableFuture.supplyAsync(() -> link.execute("echo",
                Map.of("text", "block"), Progress.NONE, cancellation));
        assertThat(echo.started.await(5, TimeUnit.SECONDS)).isTrue();
        cancellation.cancel("the test");
        ToolResponse response = call.get(5, TimeUnit.SECONDS);
        assertThat(response.error()).isTrue();
        assertThat(response.text()).contains("cancelled (the test)");
        assertThat(echo.interrupted.await(5, TimeUnit.SECONDS)).as("the runner saw the cancel").isTrue();
        assertThat(link.execute("echo", Map.of("text", "after"), Progress.NONE).text()).isEqualTo("after");
    }

    @Test
    void callsAreCarriedOutByTheThreadsThatReadThemAndACancelReachesNoLaterCall() throws Exception {
        EchoTool echo = new EchoTool();
        RunnerLink link = connected(echo, 8);
        for (int i = 0; i < 50; i++) {
            assertThat(link.execute("echo", Map.of("text", "n" + i), Progress.NONE).text()).isEqualTo("n" + i);
        }
        // The reader hands the reading on and carries the call out itself: a few pooled threads, none made per call.
        assertThat(echo.threads).hasSizeLessThan(10).noneMatch(Thread::isVirtual);

        CallCancellation cancellation = new CallCancellation();
        CompletableFuture<ToolResponse> blocked = CompletableFuture.supplyAsync(() -> link.execute("echo",
                Map.of("text", "block"), Progress.NONE, cancellation));
        assertThat(echo.blocking.await(5, TimeUnit.SECONDS)).isTrue();
        cancellation.cancel("the test");
        assertThat(blocked.get(5, TimeUnit.SECONDS).text()).contains("cancelled (the test)");
        assertThat(echo.interrupted.await(5, TimeUnit.SECONDS)).isTrue();
        // The cancelled call's thread goes back to the pool: no later call on it may see that interrupt.
        for (int i = 0; i < 10; i++) {
            assertThat(link.execute("echo", Map.of("text", "nap"), Progress.NONE).text()).isEqualTo("nap");
        }
    }

    @Test
    void aCallNoThreadCanBeStartedForIsAnsweredSoAndTakesNoSlot() throws Exception {
        java.util.concurrent.ThreadFactory pooled = RunnerAgent.pooledThreads;
        java.util.concurrent.ThreadFactory own = RunnerAgent.ownThreads;
        java.util.concurrent.ThreadFactory refused = body -> {
            throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource limits reached");
        };
        try {
            RunnerLink link = connected(new EchoTool(), 2); // its reader started
            RunnerAgent.pooledThreads = refused;
            RunnerAgent.ownThreads = refused;
            for (int i = 0; i < 4; i++) { // more than the runner's two slots: a slot kept by a refused call would show
                assertThat(link.execute("echo", Map.of("text", "x"), Progress.NONE).text())
                        .contains("could not start a thread for the call");
            }
            RunnerAgent.pooledThreads = pooled;
            RunnerAgent.ownThreads = own;
            assertThat(link.execute("echo", Map.of("text", "after"), Progress.NONE).text()).isEqualTo("after");
        } finally {
            RunnerAgent.pooledThreads = pooled;
            RunnerAgent.ownThreads = own;
        }
    }

    @Test
    void callPastItsDeadlineIsCancelledAtTheRunner() throws Exception {
        EchoTool echo = new EchoTool();
        RunnerLink link = connected(echo, 8);
        long started = System.nanoTime();
        ToolResponse response = link.execute("echo", Map.of("text", "block"), Progress.NONE);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(DEADLINE.plusSeconds(2));
        assertThat(response.text()).contains("did not answer within 3 s");
        assertThat(echo.interrupted.await(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void noRunnerIsAClearErrorAtOnce() throws Exception {
        RunnerLink link = link();
        listen(link);
        ToolResponse response = link.execute("echo", Map.of("path", "a.txt"), Progress.NONE);
        assertThat(response.error()).isTrue();
        assertThat(response.text()).contains("runner is not connected").contains("try again");
        assertThat(link.ping(DEADLINE)).isInstanceOf(RunnerLink.Health.Unreachable.class);
    }

    @Test
    void runnerPastItsCallBoundAnswersBusy() throws Exception {
        EchoTool echo = new EchoTool();
        RunnerLink link = connected(echo, 1);
        CompletableFuture<ToolResponse> blocked = CompletableFuture.supplyAsync(() -> link.execute("echo",
                Map.of("text", "block"), Progress.NONE));
        assertThat(echo.started.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(link.execute("echo", Map.of("text", "x"), Progress.NONE).text()).contains("busy");
        blocked.cancel(true);
    }

    @Test
    void runnerThatGoesAwayFailsItsCallsInFlightAndTheNextOneCarriesOn() throws Exception {
        RunnerLink link = link();
        ChannelListener listener = listen(link);
        Secret secret = listener.rotate();
        EchoTool echo = new EchoTool();
        RunnerAgent first = agent(listener, secret, echo, 8);
        awaitConnected(link, true);
        CompletableFuture<ToolResponse> inFlight = CompletableFuture.supplyAsync(() -> link.execute("echo",
                Map.of("text", "block"), Progress.NONE));
        assertThat(echo.blocking.await(5, TimeUnit.SECONDS)).isTrue();
        first.close();
        ToolResponse lost = inFlight.get(5, TimeUnit.SECONDS);
        assertThat(lost.error()).isTrue();
        assertThat(lost.text()).contains("the runner stopped before it answered");
        assertThat(echo.interrupted.await(5, TimeUnit.SECONDS)).as("the runner cancelled its call with the connection")
                .isTrue();
        awaitConnected(link, false);
        agent(listener, secret, new EchoTool(), 8);
        awaitConnected(link, true);
        assertThat(link.execute("echo", Map.of("text", "again"), Progress.NONE).text()).isEqualTo("again");
    }

    @Test
    void runnerWithAnOldSecretIsRefusedAndToldSo() throws Exception {
        RunnerLink link = link();
        ChannelListener listener = listen(link);
        Secret old = listener.rotate();
        listener.rotate();
        agent(listener, old, new EchoTool(), 8);
        for (int i = 0; i < 200 && !refused.get(); i++) {
            Thread.sleep(25);
        }
        assertThat(refused).isTrue();
        assertThat(link.connected()).isFalse();
    }

    @Test
    void connectionsThatDoNotProveThemselvesAreClosedAndTheRunnerStillGetsIn() throws Exception {
        RunnerLink link = link();
        ChannelListener listener = listen(link);
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(listener.socket());
        List<SocketChannel> silent = new ArrayList<>();
        for (int i = 0; i < ChannelListener.MAX_UNPROVEN + 20; i++) { // a flood: the cap closes the rest at once
            SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
            c.connect(address);
            silent.add(c);
        }
        try (SocketChannel garbage = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            Thread.sleep(ChannelListener.HELLO_DEADLINE.toMillis() + 500); // the silent ones are closed at the deadline
            garbage.connect(address);
            OutputStream out = Channels.newOutputStream(garbage);
            InputStream in = Channels.newInputStream(garbage);
            out.write("{\"kind\":\"hello\",\"version\":1,\"secret\":\"".concat("0".repeat(64)).concat("\"}\n")
                    .getBytes(StandardCharsets.UTF_8));
            String answer = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).contains("\"kind\":\"refused\"").contains("secret is not this start's");
        }
        for (SocketChannel c : silent) {
            assertThat(Channels.newInputStream(c).read()).as("closed by the server").isEqualTo(-1);
            c.close();
        }
        agent(listener, listener.rotate(), new EchoTool(), 8);
        awaitConnected(link, true);
        assertThat(link.execute("echo", Map.of("text", "in"), Progress.NONE).text()).isEqualTo("in");
    }

    @Test
    void aClientThatDoesNotTakeItsProgressHoldsUpNoOtherCall() throws Exception {
        RunnerLink link = connected(new EchoTool(), 8);
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean reportedAfterItsResult = new AtomicBoolean();
        AtomicBoolean returned = new AtomicBoolean();
        Progress stalledClient = (done, total, message) -> { // its stream's buffers are full: the write waits
            if (returned.get()) {
                reportedAfterItsResult.set(true);
            }
            stuck.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        CompletableFuture<ToolResponse> slow = CompletableFuture.supplyAsync(() -> {
            ToolResponse response = link.execute("echo", Map.of("text", "slow"), stalledClient);
            returned.set(true);
            return response;
        });
        assertThat(stuck.await(5, TimeUnit.SECONDS)).isTrue();
        // Each within the link's deadline, not past it ("did not answer within 3 s").
        assertThat(link.execute("echo", Map.of("text", "other"), Progress.NONE).text()).isEqualTo("other");
        assertThat(link.ping(DEADLINE)).isEqualTo(new RunnerLink.Health.Answered(List.of()));
        assertThat(slow).as("the stalled client's call waits for its report").isNotDone();
        release.countDown();
        assertThat(slow.get(5, TimeUnit.SECONDS).text()).isEqualTo("slow");
        Thread.sleep(200);
        assertThat(reportedAfterItsResult).as("a progress after the call's result").isFalse();
    }

    @Test
    void callsGivenUpWhileTheRunnerDoesNotReadLeaveNothingQueuedHere() throws Exception {
        RunnerLink link = new RunnerLink(BOUNDS, (tool, arguments) -> Duration.ofMillis(300));
        try (SocketChannel stopped = provenNotReading(link);
                var callers = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            String text = "x".repeat(100_000);
            List<java.util.concurrent.Future<ToolResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 100; i++) { // 10 MB of calls; the socket takes a few hundred KB of them
                calls.add(callers.submit(() -> link.execute("echo", Map.of("text", text), Progress.NONE)));
            }
            for (var call : calls) {
                assertThat(call.get(10, TimeUnit.SECONDS).text()).contains("did not answer within");
            }
            assertThat(link.queuedBytes()).as("what the server still holds for a runner that stopped reading")
                    .isLessThan(text.length());
        }
    }

    @Test
    void aRunnerThatAnswersCallsItWasNotSentIsCutOffAndLeavesNoLineQueuedHere() throws Exception {
        java.util.concurrent.atomic.AtomicLong held = new java.util.concurrent.atomic.AtomicLong();
        HeapBudget counting = new HeapBudget() {
            @Override
            public Hold tryHold(long bytes) {
                held.addAndGet(bytes);
                java.util.concurrent.atomic.AtomicBoolean given = new java.util.concurrent.atomic.AtomicBoolean();
                return () -> {
                    if (given.compareAndSet(false, true)) {
                        held.addAndGet(-bytes);
                    }
                };
            }

            @Override
            public long capacity() {
                return Long.MAX_VALUE;
            }
        };
        RunnerLink link = new RunnerLink(BOUNDS, (tool, arguments) -> DEADLINE, counting);
        try (SocketChannel forger = provenNotReading(link);
                var callers = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            OutputStream out = Channels.newOutputStream(forger);
            String text = "x".repeat(100_000);
            List<java.util.concurrent.Future<ToolResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 50; i++) { // 5 MB of calls; the socket takes a few hundred KB of them
                calls.add(callers.submit(() -> link.execute("echo", Map.of("text", text), Progress.NONE)));
            }
            while (link.queuedBytes() < 40L * text.length()) {
                Thread.sleep(10);
            }
            try {
                for (long id = 1; id <= 50; id++) { // ids are a count: the next ones are easy to guess
                    // Each long enough to hold part of the budget, which a cut-off answer must give back.
                    out.write(Protocol.encode(new Protocol.Reply(id, false, "forged".repeat(12_000), Map.of(), null, 0L,
                            false)));
                }
            } catch (java.io.IOException hungUp) {
                // the server closed the connection at the first answer to a call it had not sent: what is wanted
            }
            List<String> texts = new ArrayList<>();
            for (var call : calls) {
                texts.add(call.get(DEADLINE.toSeconds() - 1, TimeUnit.SECONDS).text());
            }
            assertThat(texts).as("a forged answer to a call still queued here").anyMatch(t -> t.contains("had not been sent"));
            awaitConnected(link, false);
            assertThat(link.queuedBytes()).isZero();
            for (var call : calls) {
                call.get(1, TimeUnit.SECONDS).text(); // every answer handed back (the calls here keep no hold)
            }
            assertThat(held).as("heap still held for answers").hasValue(0);
        }
    }

    @Test
    void aConnectionThatClosesBeforeItsHelloLeavesNoDeadlineBehind() throws Exception {
        RunnerLink link = link();
        ChannelListener listener = listen(link);
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(listener.socket());
        for (int i = 0; i < 50; i++) { // a command that connects and closes in a loop
            try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                c.connect(address);
            }
        }
        for (int i = 0; i < 200 && listener.refusedSoFar() < 50; i++) {
            Thread.sleep(25);
        }
        assertThat(listener.refusedSoFar()).isEqualTo(50);
        for (int i = 0; i < 40 && listener.helloDeadlinesWaiting() > 0; i++) {
            Thread.sleep(25); // at most 1 s: inside the 2 s for which a kept deadline would hold on
        }
        assertThat(listener.helloDeadlinesWaiting()).as("deadlines kept (each holds its connection's buffers)").isZero();
    }

    @Test
    void aCallTooBigForTheRunnerIsRefusedHereAndTheConnectionStays() throws Exception {
        RunnerLink link = connected(new EchoTool(), 8);
        Object deep = "x";
        for (int i = 0; i < 40; i++) {
            deep = List.of(deep);
        }
        ToolResponse response = link.execute("echo", Map.of("text", "x", "deep", deep), Progress.NONE);
        assertThat(response.text()).contains("too large for the runner").contains("nesting");
        assertThat(link.execute("echo", Map.of("text", "still"), Progress.NONE).text()).isEqualTo("still");
    }
}
