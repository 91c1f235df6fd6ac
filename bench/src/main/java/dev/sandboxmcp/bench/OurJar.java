package dev.sandboxmcp.bench;

import dev.sandboxmcp.verify.BearerClients;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Our server as the bench runs it: the jar ({@code java -Xmx200m -XX:+UseSerialGC -jar}, the
 * runner as its child) on a free loopback port, serving {@code workspace} with a fresh token.
 */
record OurJar(Process process, String origin, String token, long startMillis) implements AutoCloseable {

    private static final String REFERENCE_FILESYSTEM =
            "bench/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";

    /** Starts the jar, logging to {@code log}, and waits until it answers /healthz. */
    static OurJar start(Path root, Path workspace, Path log) throws Exception {
        String token = HexFormat.of().formatHex(java.security.SecureRandom.getSeed(24));
        int port = Processes.freePort();
        long started = System.nanoTime();
        Process process = Processes.start(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx200m", "-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED", "-jar",
                        root.resolve("app/target/sandbox-mcp.jar").toString()),
                Map.of("MCP_ADDR", "127.0.0.1:" + port, "MCP_WORKSPACE", workspace.toString(), "MCP_AUTH_TOKEN", token),
                log);
        String origin = "http://127.0.0.1:" + port;
        long millis = Processes.millisUntilAnswers(started, () -> Processes.healthy(origin + "/healthz"), Duration.ofSeconds(60));
        return new OurJar(process, origin, token, millis);
    }

    /** A connected SDK Java client over Streamable HTTP. */
    McpSyncClient streamableClient() {
        return Benchmark.connect(BearerClients.streamable(origin, Benchmark.BASE, token));
    }

    /** A connected SDK Java client over HTTP+SSE. */
    McpSyncClient sseClient() {
        return Benchmark.connect(BearerClients.sse(origin, Benchmark.BASE, token));
    }

    /** The Streamable HTTP endpoint's URL. */
    String mcpUrl() {
        return origin + Benchmark.BASE + "/mcp";
    }

    /** The Streamable HTTP endpoint for a plain keep-alive client (stateless: no session). */
    RawRoundTrips.Target rawTarget() {
        return new RawRoundTrips.Target(mcpUrl(), token, false);
    }

    /**
     * The reference filesystem server from npm over stdio, serving {@code workspace}, or empty when
     * {@code bench/node} has not been installed.
     */
    static Optional<McpSyncClient> referenceFilesystem(Path root, Path workspace) {
        Path reference = root.resolve(REFERENCE_FILESYSTEM);
        if (!Files.exists(reference)) {
            return Optional.empty();
        }
        return Optional.of(Benchmark.connect(new StdioClientTransport(ServerParameters.builder("node")
                .args(reference.toString(), workspace.toString()).build(), McpJsonDefaults.getMapper())));
    }

    static boolean hasReferenceFilesystem(Path root) {
        return Files.exists(root.resolve(REFERENCE_FILESYSTEM));
    }

    @Override
    public void close() {
        process.destroy();
    }
}
