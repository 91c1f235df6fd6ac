package dev.sandboxmcp.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The same plain keep-alive round trips as {@link RawRoundTrips}, from {@code bench/node/raw-client.mjs}
 * in a Node process of its own: the client on the other runtime, beside the one in this benchmark's JVM.
 */
final class NodeRawRoundTrips {

    static final String CLIENT = "bench/node/raw-client.mjs";

    private NodeRawRoundTrips() {
    }

    /**
     * As {@link RawRoundTrips#measure}, with its warm-up. A call that failed or was refused, or no
     * call answered, fails the measurement: a p50 of the calls that happened to succeed is no figure.
     */
    static LoadRun.Stats measure(Path root, RawRoundTrips.Target target, String toolCallJson, int clients, Duration warmup,
            Duration measure) throws Exception {
        Path output = Files.createTempFile("sandbox-mcp-bench-node-client", ".json");
        ProcessBuilder builder = new ProcessBuilder("node", root.resolve(CLIENT).toString(), target.url(),
                target.session() ? "1" : "0", toolCallJson, Integer.toString(clients),
                Long.toString(warmup.plus(RawRoundTrips.EXTRA_WARMUP).toMillis()), Long.toString(measure.toMillis()))
                .redirectOutput(output.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT);
        if (target.token() != null) {
            builder.environment().put("BENCH_TOKEN", target.token());
        }
        Process client = builder.start();
        try {
            if (!client.waitFor(warmup.toSeconds() + measure.toSeconds() + 120, TimeUnit.SECONDS)) {
                throw new IllegalStateException(CLIENT + " did not finish");
            }
            if (client.exitValue() != 0) {
                throw new IllegalStateException(CLIENT + " exited with " + client.exitValue());
            }
            JsonNode result = JsonMapper.builder().build().readTree(output.toFile());
            List<Long> latencies = new ArrayList<>();
            result.get("latencies_ns").forEach(latency -> latencies.add(latency.asLong()));
            long failed = result.get("failed").asLong();
            long refused = result.get("refused").asLong();
            if (failed > 0 || refused > 0 || latencies.isEmpty()) {
                throw new IllegalStateException(CLIENT + " against " + target.url() + ": " + failed + " calls failed and "
                        + refused + " were refused (of " + (latencies.size() + failed + refused) + ")");
            }
            return LoadRun.Stats.of(clients, latencies, measure, refused, failed);
        } finally {
            if (client.isAlive()) {
                client.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            Files.deleteIfExists(output);
        }
    }
}
