package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.FifoSwapper;
import dev.sandboxmcp.TestServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files written to hurt the server, through the real server over HTTP: every call returns (an
 * error is fine) and the server keeps answering.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileFilesTest {

    static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

    TestServer server;
    HttpClient http;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    void stop() {
        http.close();
        server.close();
    }

    /** The arguments of a tools/call, as JSON text. */
    record Call(String tool, String arguments) {
    }

    @Test
    void fifoSwappedInBetweenCheckAndOpenNeverStallsTheServer() throws Exception {
        Path ws = Files.createDirectories(server.workspace.resolve("race"));
        Files.writeString(ws.resolve("target.txt"), "hello\n");
        Files.createDirectory(ws.resolve("dir"));
        Files.writeString(ws.resolve("dir/inner.txt"), "inner\n");
        List<Call> calls = List.of(
                new Call("read_file", "{\"path\":\"race/target.txt\"}"),
                new Call("write_file", "{\"path\":\"race/target.txt\",\"content\":\"x\\n\",\"append\":true}"),
                new Call("edit_file", "{\"path\":\"race/target.txt\",\"old_text\":\"hello\",\"new_text\":\"hello\"}"),
                new Call("read_file", "{\"path\":\"race/target.txt\",\"offset\":1,\"limit\":3}"),
                new Call("read_file", "{\"path\":\"race/dir/inner.txt\"}"),
                new Call("list_directory", "{\"path\":\"race/dir\"}"),
                new Call("list_directory", "{\"path\":\"race\",\"depth\":2}"),
                new Call("write_file", "{\"path\":\"race/dir/new.txt\",\"content\":\"new\"}"));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        AtomicInteger answered = new AtomicInteger();
        AtomicInteger succeeded = new AtomicInteger();
        AtomicLong probes = new AtomicLong();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        try (FifoSwapper swapper = FifoSwapper.start(List.of(
                new FifoSwapper.Pair(ws.resolve("target.txt"), ws.resolve("target.fifo")),
                new FifoSwapper.Pair(ws.resolve("dir"), ws.resolve("dir.fifo"))))) {
            for (int caller = 0; caller < 8; caller++) {
                int first = caller;
                threads.add(Thread.ofPlatform().name("caller-" + caller).start(() -> {
                    for (int i = first; System.nanoTime() < deadline && failures.isEmpty(); i++) {
                        Call call = calls.get(i % calls.size());
                        try {
                            String body = callTool(call);
                            answered.incrementAndGet();
                            if (!body.contains("\"isError\":true")) {
                                succeeded.incrementAndGet();
                            }
                        } catch (Exception e) {
                            failures.add(call + " did not return within " + CALL_TIMEOUT + ": " + e);
                        }
                    }
                }));
            }
            threads.add(Thread.ofPlatform().name("health-probe").start(() -> {
                while (System.nanoTime() < deadline && failures.isEmpty()) {
                    try {
                        HttpResponse<Void> health = http.send(HttpRequest.newBuilder(URI.create(server.url("/healthz")))
                                .timeout(PROBE_TIMEOUT).build(), HttpResponse.BodyHandlers.discarding());
                        if (health.statusCode() != 200) {
                            failures.add("/healthz answered " + health.statusCode());
                        }
                        probes.incrementAndGet();
                        Thread.sleep(100);
                    } catch (Exception e) {
                        failures.add("/healthz did not answer within " + PROBE_TIMEOUT + ": " + e);
                    }
                }
            }));
            for (Thread thread : threads) {
                thread.join();
            }
            System.out.printf("fifo swap race: %d exchanges, %d calls answered (%d succeeded), %d health probes%n",
                    swapper.exchanges(), answered.get(), succeeded.get(), probes.get());
        }
        assertThat(failures).isEmpty();
        assertThat(answered.get()).isGreaterThan(100);
        assertThat(succeeded.get()).as("some calls got through between swaps").isPositive();
        assertThat(probes.get()).isGreaterThan(50);
    }

    @Test
    void fifoAtThePathIsRefusedAtOnceAsNotARegularFile() throws Exception {
        Path ws = Files.createDirectories(server.workspace.resolve("fifo"));
        FifoSwapper.mkfifo(ws.resolve("pipe"));
        List<Call> calls = List.of(
                new Call("read_file", "{\"path\":\"fifo/pipe\"}"),
                new Call("read_file", "{\"path\":\"fifo/pipe\",\"offset\":1}"),
                new Call("write_file", "{\"path\":\"fifo/pipe\",\"content\":\"x\",\"append\":true}"),
                new Call("write_file", "{\"path\":\"fifo/pipe\",\"content\":\"x\"}"),
                new Call("edit_file", "{\"path\":\"fifo/pipe\",\"old_text\":\"a\",\"new_text\":\"b\"}"));
        for (Call call : calls) {
            long started = System.nanoTime();
            String body = callTool(call);
            long millis = (System.nanoTime() - started) / 1_000_000;
            assertThat(body).as(call.toString()).contains("\"isError\":true")
                    .contains("'fifo/pipe' is not a regular file (a device, socket or FIFO)");
            assertThat(millis).as(call + " took %d ms", millis).isLessThan(5_000);
        }
        assertThat(callTool(new Call("list_directory", "{\"path\":\"fifo/pipe\"}")))
                .contains("\"isError\":true").contains("is not a directory");
        assertThat(Files.isRegularFile(ws.resolve("pipe"))).as("the FIFO is still there").isFalse();
    }

    String callTool(Call call) throws Exception {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + call.tool()
                + "\",\"arguments\":" + call.arguments() + "}}";
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.url(TestServer.BASE + "/mcp")))
                .timeout(CALL_TIMEOUT)
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200 || !response.body().contains("\"result\"")) {
            throw new IllegalStateException("HTTP " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }
}
