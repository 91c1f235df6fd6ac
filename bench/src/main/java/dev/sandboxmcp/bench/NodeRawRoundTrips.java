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
 * in a Node process of its own: a client outside every JVM, beside the one in this benchmark's JVM.
 */
final class NodeRawRoundTrips {

    static final String CLIENT = "bench/node/raw-client.mjs";

    private NodeRawRoundTrips() {
    }

    static LoadRun.Stats measure(Path root, RawRoundTrips.Target target, String toolCallJson, int clients, Duration warmup,
            Duration measure) throws Exception {
        Path output = Files.createTempFile("sandbox-mcp-bench-node-client", ".json");
        try {
            Process client = new ProcessBuilder("node", root.resolve(CLIENT).toString(), target.url(),
                    target.token() == null ? "-" : target.token(), target.session() ? "1" : "0", toolCallJson,
                    Integer.toString(clients), Long.toString(warmup.toMillis()), Long.toString(measure.toMillis()))
                    .redirectOutput(output.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            if (!client.waitFor(warmup.toSeconds() + measure.toSeconds() + 120, TimeUnit.SECONDS)) {
                client.destroyForcibly();
                throw new IllegalStateException(CLIENT + " did not finish");
            }
            if (client.exitValue() != 0) {
                throw new IllegalStateException(CLIENT + " exited with " + client.exitValue());
            }
            JsonNode result = JsonMapper.builder().build().readTree(output.toFile());
            List<Long> latencies = new ArrayList<>();
            result.get("latencies_ns").forEach(latency -> latencies.add(latency.asLong()));
            return LoadRun.Stats.of(clients, latencies, measure, result.get("refused").asLong(), result.get("failed").asLong());
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
