package dev.sandboxmcp.bench;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientSseClientTransport;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * {@code make bench}: our server and the reference Node server measured side by side in one run
 * on this machine. Prints one Markdown report and writes it to BENCHMARKS.md.
 */
public final class Benchmark {

    static final int[] CLIENTS = {1, 8, 32};
    static final String BASE = "/mcp-sandbox";

    private final Path root;
    private final Duration warmup = Duration.ofSeconds(1);
    private final Duration measure;
    private final StringBuilder report = new StringBuilder();

    private Benchmark(Path root, Duration measure) {
        this.root = root;
        this.measure = measure;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Path root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        new Benchmark(root, Duration.ofSeconds(seconds)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        Path temp = Files.createTempDirectory("sandbox-mcp-bench-");
        Path workspace = Files.createDirectories(temp.resolve("workspace"));
        Files.writeString(workspace.resolve("file-4k.txt"), "0123456789abcdef".repeat(256));
        String token = HexFormat.of().formatHex(java.security.SecureRandom.getSeed(24));

        line("# Benchmarks");
        line("");
        line("Made by `make bench` (`" + String.join(" ", ProcessHandle.current().info().commandLine().map(List::of)
                .orElse(List.of("java dev.sandboxmcp.bench.Benchmark"))).replaceAll("-cp \\S+ ", "") + "`) on " + Instant.now()
                + ", " + Runtime.getRuntime().availableProcessors() + " cores, Java " + System.getProperty("java.version")
                + ", Node " + Processes.run(List.of("node", "--version")) + ". Each cell: " + warmup.toSeconds()
                + " s warm-up, then " + measure.toSeconds() + " s measured; clients are the SDK's Java client in one JVM, "
                + "on loopback. Our server runs as in the container (`-Xmx200m -XX:+UseSerialGC`, 8 commands at once).");
        line("");

        int port = Processes.freePort();
        long started = System.nanoTime();
        Process ours = Processes.start(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx200m", "-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED", "-jar",
                        root.resolve("app/target/sandbox-mcp.jar").toString()),
                Map.of("MCP_ADDR", "127.0.0.1:" + port, "MCP_WORKSPACE", workspace.toString(), "MCP_AUTH_TOKEN", token),
                temp.resolve("ours.log"));
        long jarStart = Processes.millisUntilAnswers(started, () -> Processes.healthy("http://127.0.0.1:" + port + "/healthz"),
                Duration.ofSeconds(60));
        Thread.sleep(2_000);
        double idleRss = Processes.rssMib(ours.pid());

        Process node = null;
        try {
            String origin = "http://127.0.0.1:" + port;
            Supplier<McpSyncClient> streamable = () -> connect(HttpClientStreamableHttpTransport.builder(origin)
                    .endpoint(BASE + "/mcp").httpRequestCustomizer((b, m, u, body, c) -> b.header("Authorization", "Bearer " + token))
                    .build());
            Supplier<McpSyncClient> sse = () -> connect(HttpClientSseClientTransport.builder(origin)
                    .sseEndpoint(BASE + "/sse").httpRequestCustomizer((b, m, u, body, c) -> b.header("Authorization", "Bearer " + token))
                    .build());
            CallToolRequest read4k = new CallToolRequest("read_file", Map.of("path", "file-4k.txt"));
            CallToolRequest runTrue = new CallToolRequest("run_command", Map.of("command", "true"));

            // JIT warm-up of the server before anything is measured.
            LoadRun.run(streamable, read4k, 4, Duration.ofSeconds(5), Duration.ofSeconds(1));
            LoadRun.run(streamable, runTrue, 2, Duration.ofSeconds(3), Duration.ofSeconds(1));

            line("## Tool-call round trips, ours");
            line("");
            line("| transport | call | clients | p50 ms | p99 ms | calls/s | refused busy | failed |");
            line("|---|---|---:|---:|---:|---:|---:|---:|");
            Map<String, LoadRun.Stats> ourStats = new java.util.HashMap<>();
            double loadRss = 0;
            for (var transport : List.of(Map.entry("Streamable HTTP", streamable), Map.entry("SSE", sse))) {
                for (var call : List.of(Map.entry("read_file 4 KiB", read4k), Map.entry("run_command true", runTrue))) {
                    for (int clients : CLIENTS) {
                        RssSampler sampler = clients == 32 ? new RssSampler(ours.pid()) : null;
                        LoadRun.Stats stats = LoadRun.run(transport.getValue(), call.getValue(), clients, warmup, measure);
                        if (sampler != null) {
                            loadRss = Math.max(loadRss, sampler.stop());
                        }
                        ourStats.put(transport.getKey() + "/" + call.getKey() + "/" + clients, stats);
                        row(transport.getKey(), call.getKey(), stats);
                    }
                }
            }
            line("");
            line("The SDK's Java client adds much of those figures. The server's own round trip, from a plain keep-alive "
                    + "HTTP/1.1 client, one call at a time on Streamable HTTP:");
            line("");
            line("| call | p50 ms | p99 ms | calls/s |");
            line("|---|---:|---:|---:|");
            String mcpUrl = origin + BASE + "/mcp";
            LoadRun.Stats rawRead = RawRoundTrips.measure(mcpUrl, token, toolCall("read_file", "{\"path\":\"file-4k.txt\"}"),
                    warmup, measure);
            LoadRun.Stats rawRun = RawRoundTrips.measure(mcpUrl, token, toolCall("run_command", "{\"command\":\"true\"}"),
                    warmup, measure);
            line(String.format(Locale.ROOT, "| read_file 4 KiB | %.2f | %.2f | %.0f |", rawRead.p50Millis(), rawRead.p99Millis(),
                    rawRead.callsPerSecond()));
            line(String.format(Locale.ROOT, "| run_command true | %.2f | %.2f | %.0f |", rawRun.p50Millis(), rawRun.p99Millis(),
                    rawRun.callsPerSecond()));
            line("");

            int nodePort = Processes.freePort();
            long nodeStarted = System.nanoTime();
            node = Processes.start(List.of("node", root.resolve("bench/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js").toString(),
                    "streamableHttp"), Map.of("PORT", Integer.toString(nodePort)), temp.resolve("node.log"));
            long nodeStart = Processes.millisUntilAnswers(nodeStarted, () -> Processes.listening(nodePort), Duration.ofSeconds(60));
            Thread.sleep(1_000);
            double nodeIdleRss = Processes.rssMib(node.pid());
            String nodeOrigin = "http://127.0.0.1:" + nodePort;
            Supplier<McpSyncClient> nodeClient = () -> connect(HttpClientStreamableHttpTransport.builder(nodeOrigin).endpoint("/mcp").build());
            CallToolRequest echo = new CallToolRequest("echo", Map.of("message", "x"));

            line("## Side by side with the reference Node server (Streamable HTTP)");
            line("");
            line("Ours: `read_file` of 4 KiB; theirs: `@modelcontextprotocol/server-everything` " + nodeVersion()
                    + ", `echo` tool (it has no file tool). Ratio below 1 means ours is faster (latency) and above 1 means ours "
                    + "does more (calls/s).");
            line("");
            line("| clients | ours p50 ms | theirs p50 ms | p50 ours/theirs | ours calls/s | theirs calls/s | calls/s ours/theirs |");
            line("|---:|---:|---:|---:|---:|---:|---:|");
            Map<Integer, LoadRun.Stats> nodeStats = new java.util.HashMap<>();
            for (int clients : CLIENTS) {
                LoadRun.Stats theirs = LoadRun.run(nodeClient, echo, clients, warmup, measure);
                nodeStats.put(clients, theirs);
                LoadRun.Stats mine = ourStats.get("Streamable HTTP/read_file 4 KiB/" + clients);
                line(String.format(Locale.ROOT, "| %d | %.2f | %.2f | %.2f | %.0f | %.0f | %.2f |", clients, mine.p50Millis(),
                        theirs.p50Millis(), mine.p50Millis() / theirs.p50Millis(), mine.callsPerSecond(), theirs.callsPerSecond(),
                        mine.callsPerSecond() / theirs.callsPerSecond()));
            }
            line("");

            String containerStart = containerStartMillis(token);
            line("## Start-up and memory");
            line("");
            line("| what | ours | reference Node server |");
            line("|---|---:|---:|");
            line("| cold start to first healthy response, jar | " + jarStart + " ms | " + nodeStart + " ms (port open) |");
            line("| cold start to first healthy response, container (`docker start` of the compose flags) | " + containerStart + " | |");
            line(String.format(Locale.ROOT, "| RSS idle | %.0f MiB | %.0f MiB |", idleRss, nodeIdleRss));
            line(String.format(Locale.ROOT, "| RSS under the 32-client load (max sampled) | %.0f MiB | |", loadRss));
            line("");

            LoadRun.Stats read1 = ourStats.get("Streamable HTTP/read_file 4 KiB/1");
            LoadRun.Stats run1 = ourStats.get("Streamable HTTP/run_command true/1");
            double ratio8 = ourStats.get("Streamable HTTP/read_file 4 KiB/8").callsPerSecond() / nodeStats.get(8).callsPerSecond();
            line("## Targets");
            line("");
            line("| target | measured | met |");
            line("|---|---:|---|");
            target("read_file 4 KiB p50, Streamable HTTP, 1 client, at most 1 ms", fmt(read1.p50Millis()) + " ms (SDK client), "
                    + fmt(rawRead.p50Millis()) + " ms (plain client)", rawRead.p50Millis() <= 1.0);
            target("throughput at 8 clients at least 2x the Node reference", fmt(ratio8) + "x", ratio8 >= 2.0);
            target("run_command true p50 at most 10 ms", fmt(run1.p50Millis()) + " ms (SDK client), "
                    + fmt(rawRun.p50Millis()) + " ms (plain client)", rawRun.p50Millis() <= 10.0);
            boolean containerMet = containerStart.endsWith(" ms") && Long.parseLong(containerStart.replace(" ms", "")) <= 2_000;
            target("container start to healthy at most 2 s", containerStart, containerMet);
            target("idle RSS at most 150 MiB", String.format(Locale.ROOT, "%.0f MiB", idleRss), idleRss <= 150);
        } finally {
            ours.destroy();
            if (node != null) {
                node.destroy();
            }
        }
        System.out.print(report);
        Files.writeString(root.resolve("BENCHMARKS.md"), report.toString());
        System.out.println("\nwritten to " + root.resolve("BENCHMARKS.md"));
    }

    private String containerStartMillis(String token) {
        try {
            Processes.run(List.of("docker", "image", "inspect", "sandbox-mcp:local"));
        } catch (Exception e) {
            return "n/a (no Docker daemon or no sandbox-mcp:local image)";
        }
        String name = "sandbox-mcp-bench-" + ProcessHandle.current().pid();
        try {
            Path workspace = Files.createTempDirectory("sandbox-mcp-bench-ws-");
            Files.setAttribute(workspace, "unix:uid", 1000);
            Files.setAttribute(workspace, "unix:gid", 1000);
            int port = Processes.freePort();
            String digest = HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8)));
            Processes.run(List.of("docker", "create", "--name", name, "--init", "--read-only", "--cap-drop", "ALL",
                    "--security-opt", "no-new-privileges:true", "--pids-limit", "128", "--memory", "1g", "--cpus", "2",
                    "--user", "1000:1000", "--tmpfs", "/tmp:rw,noexec,nosuid,nodev,size=256m,uid=1000,gid=1000",
                    "-v", workspace + ":/workspace:rw", "-e", "MCP_AUTH_TOKEN_SHA256=" + digest,
                    "-p", "127.0.0.1:" + port + ":8000", "sandbox-mcp:local"));
            long started = System.nanoTime();
            Processes.run(List.of("docker", "start", name));
            long millis = Processes.millisUntilAnswers(started,
                    () -> Processes.healthy("http://127.0.0.1:" + port + "/healthz"), Duration.ofSeconds(60));
            return millis + " ms";
        } catch (Exception e) {
            return "failed: " + e.getMessage();
        } finally {
            try {
                Processes.run(List.of("docker", "rm", "-f", name));
            } catch (Exception ignored) {
                // nothing to remove
            }
        }
    }

    private String nodeVersion() {
        try {
            String json = Files.readString(root.resolve("bench/node/node_modules/@modelcontextprotocol/server-everything/package.json"));
            return json.replaceAll("(?s).*\"version\"\\s*:\\s*\"([^\"]+)\".*", "$1");
        } catch (Exception e) {
            return "(version unknown)";
        }
    }

    private static String toolCall(String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }

    private static McpSyncClient connect(McpClientTransport transport) {
        McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60))
                .initializationTimeout(Duration.ofSeconds(30)).build();
        client.initialize();
        return client;
    }

    private void row(String transport, String call, LoadRun.Stats s) {
        line(String.format(Locale.ROOT, "| %s | %s | %d | %.2f | %.2f | %.0f | %d | %d |", transport, call, s.clients(),
                s.p50Millis(), s.p99Millis(), s.callsPerSecond(), s.refused(), s.failed()));
        System.out.println(report.substring(report.lastIndexOf("\n", report.length() - 2) + 1).strip());
    }

    private void target(String what, String measured, boolean met) {
        line("| " + what + " | " + measured + " | " + (met ? "yes" : "**missed**") + " |");
    }

    private static String fmt(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    private void line(String text) {
        report.append(text).append('\n');
    }

    /** Samples a process's RSS every 200 ms until stopped; returns the largest sample. */
    private static final class RssSampler {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;
        private volatile double max;

        RssSampler(long pid) {
            thread = Thread.ofVirtual().start(() -> {
                while (running.get()) {
                    try {
                        max = Math.max(max, Processes.rssMib(pid));
                        Thread.sleep(200);
                    } catch (Exception e) {
                        return;
                    }
                }
            });
        }

        double stop() throws InterruptedException {
            running.set(false);
            thread.join();
            return max;
        }
    }

}
