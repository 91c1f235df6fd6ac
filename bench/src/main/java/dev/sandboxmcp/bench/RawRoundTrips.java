package dev.sandboxmcp.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Sequential Streamable HTTP tool calls from a plain keep-alive HTTP/1.1 client: the server's own
 * round trip, without the SDK client's per-call overhead.
 */
final class RawRoundTrips {

    private RawRoundTrips() {
    }

    static LoadRun.Stats measure(String url, String token, String toolCallJson, Duration warmup, Duration measure) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(toolCallJson)).build();
        long warmEnd = System.nanoTime() + warmup.toNanos();
        long end = warmEnd + measure.toNanos();
        List<Long> latencies = new ArrayList<>();
        long failed = 0;
        long now;
        while ((now = System.nanoTime()) < end) {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            long took = System.nanoTime() - now;
            if (now < warmEnd) {
                continue;
            }
            if (response.statusCode() == 200 && !response.body().contains("\"isError\":true")) {
                latencies.add(took);
            } else {
                failed++;
            }
        }
        Collections.sort(latencies);
        return new LoadRun.Stats(1, latencies.size(), latencies.get(latencies.size() / 2) / 1e6,
                latencies.get((int) (latencies.size() * 0.99)) / 1e6, latencies.size() / (measure.toNanos() / 1e9), 0, failed);
    }
}
