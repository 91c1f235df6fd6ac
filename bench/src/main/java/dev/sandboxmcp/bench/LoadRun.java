package dev.sandboxmcp.bench;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/** N clients calling one tool back to back for a while; latencies of the successful calls. */
final class LoadRun {

    record Stats(int clients, long calls, double p50Millis, double p99Millis, double callsPerSecond, long refused, long failed) {

        /** From the latencies (nanoseconds) of the successful calls in the measured window. */
        static Stats of(int clients, List<Long> latencies, Duration measure, long refused, long failed) {
            List<Long> sorted = new ArrayList<>(latencies);
            Collections.sort(sorted);
            if (sorted.isEmpty()) {
                return new Stats(clients, 0, Double.NaN, Double.NaN, 0, refused, failed);
            }
            return new Stats(clients, sorted.size(), sorted.get(sorted.size() / 2) / 1e6,
                    sorted.get(Math.min(sorted.size() - 1, (int) (sorted.size() * 0.99))) / 1e6,
                    sorted.size() / (measure.toNanos() / 1e9), refused, failed);
        }
    }

    private LoadRun() {
    }

    static Stats run(Supplier<McpSyncClient> connect, CallToolRequest request, int clients, Duration warmup, Duration measure)
            throws Exception {
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        AtomicLong refused = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        CountDownLatch connected = new CountDownLatch(clients);
        long[] window = new long[2];
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                futures.add(pool.submit(() -> {
                    try (McpSyncClient client = connect.get()) {
                        connected.countDown();
                        connected.await();
                        long warmEnd;
                        long end;
                        synchronized (window) {
                            if (window[0] == 0) {
                                window[0] = System.nanoTime() + warmup.toNanos();
                                window[1] = window[0] + measure.toNanos();
                            }
                            warmEnd = window[0];
                            end = window[1];
                        }
                        long now;
                        while ((now = System.nanoTime()) < end) {
                            try {
                                CallToolResult result = client.callTool(request);
                                long took = System.nanoTime() - now;
                                if (now >= warmEnd) {
                                    if (Boolean.TRUE.equals(result.isError())) {
                                        refused.incrementAndGet();
                                    } else {
                                        latencies.add(took);
                                    }
                                }
                            } catch (RuntimeException e) {
                                failed.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(warmup.toSeconds() + measure.toSeconds() + 120, TimeUnit.SECONDS);
            }
        }
        return Stats.of(clients, latencies, measure, refused.get(), failed.get());
    }
}
