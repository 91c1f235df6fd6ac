package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 50 clients, half on Streamable HTTP and half on SSE, calling all three tools as fast as they
 * can for {@code load.seconds} (default 60): zero protocol errors. Calls past the command bound
 * are refused as busy tool errors, which is the designed behaviour, and are counted. Prints
 * p50/p99 per tool; the speed targets are the benchmark's business, not this test's.
 */
class ConcurrentClientsLoadTest {

    static final int CLIENTS = 50;

    @Test
    void fiftyClientsOnBothTransportsGetNoProtocolErrors(@TempDir Path workspace) throws Exception {
        long seconds = Long.getLong("load.seconds", 60);
        Map<String, List<Long>> latencies = new ConcurrentHashMap<>();
        AtomicLong protocolErrors = new AtomicLong();
        AtomicLong busy = new AtomicLong();
        AtomicLong otherToolErrors = new AtomicLong();
        List<String> firstErrors = Collections.synchronizedList(new ArrayList<>());
        try (TestServer server = TestServer.start(workspace);
                ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            CountDownLatch ready = new CountDownLatch(CLIENTS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            List<Future<?>> clients = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                int id = i;
                clients.add(pool.submit(() -> {
                    try (McpSyncClient client = id % 2 == 0 ? server.streamableClient() : server.sseClient()) {
                        client.initialize();
                        ready.countDown();
                        ready.await();
                        String file = "load-" + id + ".txt";
                        client.callTool(new CallToolRequest("write_file", Map.of("path", file, "content", "x".repeat(4096))));
                        while (System.nanoTime() < deadline) {
                            CallToolRequest request = switch (ThreadLocalRandom.current().nextInt(3)) {
                                case 0 -> new CallToolRequest("read_file", Map.of("path", file));
                                case 1 -> new CallToolRequest("write_file", Map.of("path", file, "content", "y".repeat(4096)));
                                default -> new CallToolRequest("run_command", Map.of("command", "echo " + id));
                            };
                            long started = System.nanoTime();
                            try {
                                CallToolResult result = client.callTool(request);
                                long micros = (System.nanoTime() - started) / 1_000;
                                if (Boolean.TRUE.equals(result.isError())) {
                                    String text = result.content().toString();
                                    (text.contains("busy") ? busy : otherToolErrors).incrementAndGet();
                                    if (!text.contains("busy") && firstErrors.size() < 5) {
                                        firstErrors.add(text);
                                    }
                                } else {
                                    latencies.computeIfAbsent(request.name(),
                                                    k -> Collections.synchronizedList(new ArrayList<>()))
                                            .add(micros);
                                }
                            } catch (RuntimeException e) {
                                protocolErrors.incrementAndGet();
                                if (firstErrors.size() < 5) {
                                    firstErrors.add(e.toString());
                                }
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> client : clients) {
                client.get(seconds + 120, TimeUnit.SECONDS);
            }
            assertThat(server.port()).isPositive();
        }
        System.out.printf("load: %d clients for %d s, %d protocol errors, %d busy refusals, %d other tool errors%n",
                CLIENTS, seconds, protocolErrors.get(), busy.get(), otherToolErrors.get());
        for (var entry : new java.util.TreeMap<>(latencies).entrySet()) {
            List<Long> sorted = new ArrayList<>(entry.getValue());
            Collections.sort(sorted);
            System.out.printf("load: %-12s %7d calls  p50 %7.2f ms  p99 %7.2f ms%n", entry.getKey(), sorted.size(),
                    sorted.get(sorted.size() / 2) / 1000.0, sorted.get((int) (sorted.size() * 0.99)) / 1000.0);
        }
        assertThat(protocolErrors.get()).as("protocol errors; first: %s", firstErrors).isZero();
        assertThat(otherToolErrors.get()).as("tool errors other than busy; first: %s", firstErrors).isZero();
        assertThat(latencies.keySet()).containsExactlyInAnyOrder("read_file", "write_file", "run_command");
    }
}
