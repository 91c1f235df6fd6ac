package dev.sandboxmcp.bench;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * {@code make bench}: our server and the reference Node server measured side by side in one run
 * on this machine. Prints one Markdown report and writes it to BENCHMARKS.md, above the file's
 * hand-written part ({@link #HAND_WRITTEN} and what follows it), which it keeps.
 */
public final class Benchmark {

    static final int[] CLIENTS = {1, 8, 32};
    /** The directory list_directory reads in the side-by-side table: a small one, as most are. */
    static final int SMALL_DIRECTORY_FILES = 10;
    /** Ours at most this fraction of the reference's echo (p50, plain clients, one client). */
    static final double TARGET_RATIO_TO_ECHO = 0.7;
    static final String BASE = "/mcp-sandbox";
    /** The side-by-side table's plain clients: in this JVM, and in a Node process of their own. */
    static final String PLAIN_JAVA = "plain HTTP, Java";
    static final String PLAIN_NODE = "plain HTTP, Node";

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

    private static final String READ_4K = "read_file 4 KiB";
    private static final String RUN_TRUE = "run_command true";
    private static final String LIST_SMALL = "list_directory, " + SMALL_DIRECTORY_FILES + " files";
    private static final CallToolRequest READ_4K_CALL = new CallToolRequest("read_file", Map.of("path", "file-4k.txt"));
    private static final CallToolRequest RUN_TRUE_CALL = new CallToolRequest("run_command", Map.of("command", "true"));
    private static final String READ_4K_JSON = toolCall("read_file", "{\"path\":\"file-4k.txt\"}");
    private static final String RUN_TRUE_JSON = toolCall("run_command", "{\"command\":\"true\"}");
    private static final String LIST_SMALL_JSON = toolCall("list_directory", "{\"path\":\"small\"}");

    /** Round trips by transport, call and clients ({@code "SSE/read_file 4 KiB/8"}), and the RSS under the heaviest load. */
    private record SdkFigures(Map<String, LoadRun.Stats> stats, double loadRssMib) {
    }

    /**
     * The reference Node server: its start, its idle RSS, ours/theirs calls/s by client kind and
     * count, and ours/theirs p50 of the plain client, one client, by our call.
     */
    private record NodeFigures(long startMillis, Resident resident, Map<String, Double> throughputRatio,
            Map<String, Double> latencyRatio) {
    }

    private void run() throws Exception {
        try (TempTree temp = TempTree.create("sandbox-mcp-bench-")) {
            run(temp.path());
        }
    }

    private void run(Path temp) throws Exception {
        Path workspace = Files.createDirectories(temp.resolve("workspace"));
        Files.writeString(workspace.resolve("file-4k.txt"), "0123456789abcdef".repeat(256));
        Path small = Files.createDirectories(workspace.resolve("small"));
        for (int i = 0; i < SMALL_DIRECTORY_FILES; i++) {
            Files.writeString(small.resolve("file-" + i + ".txt"), "x".repeat(100 * i));
        }
        String handWritten = handWritten(root.resolve("BENCHMARKS.md"));
        header();
        try (OurJar jar = OurJar.start(root, workspace, temp.resolve("ours.log"))) {
            Resident jarResident = Resident.measure(System.nanoTime(), () -> Processes.treeRssMib(jar.process().pid()));
            warmUp(jar);
            SdkFigures sdk = sdkRoundTrips(jar);
            Map<String, LoadRun.Stats> raw = rawRoundTrips(jar);
            NodeFigures node = sideBySide(temp, jar, sdk.stats(), raw);
            ContainerFigures container = containerFigures(jar.token());
            startUpAndMemory(jar, jarResident, sdk.loadRssMib(), node, container);
            targets(sdk.stats(), raw, node, container, jarResident);
        }
        report.append(Scaling.section(root, new long[] {1, 100, 1000}));
        report.append(Costs.section(root));
        report.append(handWritten);
        System.out.print(report);
        Files.writeString(root.resolve("BENCHMARKS.md"), report.toString());
        System.out.println("\nwritten to " + root.resolve("BENCHMARKS.md"));
    }

    private void header() throws Exception {
        line("# Benchmarks");
        line("");
        line("Made by `make bench` (`" + String.join(" ", ProcessHandle.current().info().commandLine().map(List::of)
                .orElse(List.of("java dev.sandboxmcp.bench.Benchmark"))).replaceAll("-cp \\S+ ", "") + "`) on " + Instant.now()
                + ", " + Runtime.getRuntime().availableProcessors() + " cores, Java " + System.getProperty("java.version")
                + ", Node " + Processes.run(List.of("node", "--version")) + ". Each cell: " + warmup.toSeconds()
                + " s warm-up (" + RawRoundTrips.EXTRA_WARMUP.toMillis() + " ms more for the plain clients), then "
                + measure.toSeconds() + " s measured, on loopback. "
                + "Two kinds of client: the SDK's Java client (what an MCP host runs), and plain keep-alive HTTP/1.1 "
                + "clients that send the JSON-RPC request and read the answer (the server's own cost; the SDK client "
                + "otherwise takes most of the two cores). Both run in this benchmark's JVM, except the side-by-side rows "
                + "marked Node: the same plain client in a Node process of its own (`" + NodeRawRoundTrips.CLIENT + "`). "
                + "\"jar\" is `java -Xmx200m -XX:+UseSerialGC -jar` on this host; "
                + "\"container\" is the image as deployed (compose flags, AOT cache, the image's own /bin/sh).");
        line("");
    }

    /** JIT warm-up of the server before anything is measured. */
    private static void warmUp(OurJar jar) throws Exception {
        LoadRun.run(jar::streamableClient, READ_4K_CALL, 4, Duration.ofSeconds(5), Duration.ofSeconds(1));
        LoadRun.run(jar::streamableClient, RUN_TRUE_CALL, 2, Duration.ofSeconds(3), Duration.ofSeconds(1));
    }

    private SdkFigures sdkRoundTrips(OurJar jar) throws Exception {
        line("## Tool-call round trips, ours (jar), SDK Java client");
        line("");
        tableHead();
        Map<String, LoadRun.Stats> stats = new HashMap<>();
        double loadRss = 0;
        Map<String, Supplier<McpSyncClient>> transports = new LinkedHashMap<>();
        transports.put("Streamable HTTP", jar::streamableClient);
        transports.put("SSE", jar::sseClient);
        for (var transport : transports.entrySet()) {
            for (var call : List.of(Map.entry(READ_4K, READ_4K_CALL), Map.entry(RUN_TRUE, RUN_TRUE_CALL))) {
                for (int clients : CLIENTS) {
                    RssSampler sampler = clients == 32 ? new RssSampler(jar.process().pid()) : null;
                    LoadRun.Stats result = LoadRun.run(transport.getValue(), call.getValue(), clients, warmup, measure);
                    if (sampler != null) {
                        loadRss = Math.max(loadRss, sampler.stop());
                    }
                    stats.put(transport.getKey() + "/" + call.getKey() + "/" + clients, result);
                    row(transport.getKey(), call.getKey(), result);
                }
            }
        }
        line("");
        return new SdkFigures(stats, loadRss);
    }

    /** Round trips by call and clients ({@code "read_file 4 KiB/8"}). */
    private Map<String, LoadRun.Stats> rawRoundTrips(OurJar jar) throws Exception {
        line("## Tool-call round trips, ours (jar), plain HTTP clients, Streamable HTTP");
        line("");
        tableHead();
        RawRoundTrips.Target target = jar.rawTarget();
        Map<String, LoadRun.Stats> stats = new HashMap<>();
        for (var call : List.of(Map.entry(READ_4K, READ_4K_JSON), Map.entry(RUN_TRUE, RUN_TRUE_JSON))) {
            for (int clients : CLIENTS) {
                LoadRun.Stats result = RawRoundTrips.measure(target, call.getValue(), clients, warmup, measure);
                stats.put(call.getKey() + "/" + clients, result);
                row("Streamable HTTP", call.getKey(), result);
            }
        }
        line("");
        return stats;
    }

    private NodeFigures sideBySide(Path temp, OurJar ours, Map<String, LoadRun.Stats> sdk, Map<String, LoadRun.Stats> raw)
            throws Exception {
        int nodePort = Processes.freePort();
        long nodeStarted = System.nanoTime();
        Process node = Processes.start(List.of("node",
                        root.resolve("bench/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js").toString(),
                        "streamableHttp"), Map.of("PORT", Integer.toString(nodePort)), temp.resolve("node.log"));
        try {
            long nodeStart = Processes.millisUntilAnswers(nodeStarted, () -> Processes.listening(nodePort),
                    Duration.ofSeconds(60));
            Resident nodeResident = Resident.measure(System.nanoTime(), () -> Processes.rssMib(node.pid()));
            String nodeOrigin = "http://127.0.0.1:" + nodePort;
            Supplier<McpSyncClient> nodeClient = () -> connect(HttpClientStreamableHttpTransport.builder(nodeOrigin)
                    .endpoint("/mcp").build());
            CallToolRequest echo = new CallToolRequest("echo", Map.of("message", "x"));
            RawRoundTrips.Target nodeRaw = new RawRoundTrips.Target(nodeOrigin + "/mcp", null, true);
            String echoJson = toolCall("echo", "{\"message\":\"x\"}");

            line("## Side by side with the reference Node server (Streamable HTTP)");
            line("");
            line("Ours: `read_file` of 4 KiB and `list_directory` of a directory of " + SMALL_DIRECTORY_FILES + " files "
                    + "(jar); theirs: `@modelcontextprotocol/server-everything` "
                    + packageVersion(root, "server-everything") + ", `echo` tool (it has no file tool), each client with its "
                    + "own session as that server requires. The SDK client and the Java plain client: ours is the figure "
                    + "from the tables above, theirs is measured here; then the Java plain client's `list_directory` of "
                    + "ours, compared with their one-client `echo`. The Node "
                    + "plain client: ours `read_file`, their `echo` and ours `list_directory`, one after the other, both of "
                    + "ours compared with that `echo`. Ratio below 1 means ours is faster (latency) and above 1 means "
                    + "ours does more (calls/s).");
            line("");
            line("| client | ours | clients | ours p50 ms | theirs p50 ms | p50 ours/theirs | ours calls/s | theirs calls/s "
                    + "| calls/s ours/theirs |");
            line("|---|---|---:|---:|---:|---:|---:|---:|---:|");
            Map<String, Double> throughputRatio = new HashMap<>();
            Map<String, Double> latencyRatio = new HashMap<>();
            for (int clients : CLIENTS) {
                compare("SDK Java", READ_4K, clients, sdk.get("Streamable HTTP/" + READ_4K + "/" + clients),
                        LoadRun.run(nodeClient, echo, clients, warmup, measure), throughputRatio, latencyRatio);
            }
            LoadRun.Stats echoOne = null;
            for (int clients : CLIENTS) {
                LoadRun.Stats theirs = RawRoundTrips.measure(nodeRaw, echoJson, clients, warmup, measure);
                echoOne = clients == 1 ? theirs : echoOne;
                compare(PLAIN_JAVA, READ_4K, clients, raw.get(READ_4K + "/" + clients), theirs, throughputRatio,
                        latencyRatio);
            }
            RawRoundTrips.Target oursRaw = ours.rawTarget();
            compare(PLAIN_JAVA, LIST_SMALL, 1, RawRoundTrips.measure(oursRaw, LIST_SMALL_JSON, 1, warmup, measure), echoOne,
                    throughputRatio, latencyRatio);
            // The same three calls from the Node client, one after the other.
            LoadRun.Stats readNode = NodeRawRoundTrips.measure(root, oursRaw, READ_4K_JSON, 1, warmup, measure);
            LoadRun.Stats echoNode = NodeRawRoundTrips.measure(root, nodeRaw, echoJson, 1, warmup, measure);
            compare(PLAIN_NODE, READ_4K, 1, readNode, echoNode, throughputRatio, latencyRatio);
            compare(PLAIN_NODE, LIST_SMALL, 1, NodeRawRoundTrips.measure(root, oursRaw, LIST_SMALL_JSON, 1, warmup, measure),
                    echoNode, throughputRatio, latencyRatio);
            line("");
            return new NodeFigures(nodeStart, nodeResident, throughputRatio, latencyRatio);
        } finally {
            node.destroy();
        }
    }

    private void startUpAndMemory(OurJar jar, Resident jarResident, double loadRss, NodeFigures node,
            ContainerFigures container) {
        line("## Start-up and memory");
        line("");
        line("| what | ours, jar (server + child runner) | ours, containers (server + runner) | reference Node server |");
        line("|---|---:|---:|---:|");
        line("| cold start to first healthy response | " + jar.startMillis() + " ms | " + container.start() + " | "
                + node.startMillis() + " ms (port open) |");
        line(String.format(Locale.ROOT, "| RSS %d s after the first answer | %.0f MiB | %s | %.0f MiB |",
                Resident.STARTED.toSeconds(), jarResident.startedMib(), container.rss(Resident::startedMib),
                node.resident().startedMib()));
        line(String.format(Locale.ROOT, "| RSS idle (%d s after the first answer, no calls) | %.0f MiB | %s | %.0f MiB |",
                Resident.IDLE.toSeconds(), jarResident.idleMib(), container.rss(Resident::idleMib), node.resident().idleMib()));
        line(String.format(Locale.ROOT, "| RSS under the 32-client load (max sampled) | %.0f MiB | | |", loadRss));
        line("| image size | | " + ContainerRun.imageSizes() + " | |");
        line("");
        line("Plain-client round trips against the container (one client; through Docker's loopback port forwarding):");
        line("");
        line("| call | p50 ms | p99 ms | calls/s |");
        line("|---|---:|---:|---:|");
        line("| " + READ_4K + " | " + container.read() + " |");
        line("| " + RUN_TRUE + " | " + container.run() + " |");
        line("| " + READ_4K + ", through Traefik (HTTPS, the example's entry point, the rendered route; "
                + "infra/traefik/requirements.txt's version) | " + container.frontDoor() + " |");
        line("");
    }

    private void targets(Map<String, LoadRun.Stats> sdk, Map<String, LoadRun.Stats> raw, NodeFigures node,
            ContainerFigures container, Resident jarResident) {
        LoadRun.Stats rawRead = raw.get(READ_4K + "/1");
        LoadRun.Stats rawRun = raw.get(RUN_TRUE + "/1");
        double ratio8 = node.throughputRatio().get(PLAIN_JAVA + "/8");
        line("## Targets");
        line("");
        line("| target | measured | met |");
        line("|---|---:|---|");
        // The server's own round trip: the container figure adds Docker's userland port proxy,
        // which is not the server's (run_command is judged on the container, whose /bin/sh is).
        target("read_file 4 KiB p50, Streamable HTTP, 1 client, at most 1 ms", fmt(rawRead.p50Millis()) + " ms jar"
                + (container.readStats() != null ? ", " + fmt(container.readStats().p50Millis())
                        + " ms container through Docker's port proxy" : "")
                + " (plain client); " + fmt(sdk.get("Streamable HTTP/" + READ_4K + "/1").p50Millis()) + " ms SDK client",
                rawRead.p50Millis() <= 1.0);
        target("throughput at 8 clients at least 2x the Node reference", fmt(ratio8) + "x plain clients, "
                + fmt(node.throughputRatio().get("SDK Java/8")) + "x SDK client", ratio8 >= 2.0);
        for (String call : List.of(READ_4K, LIST_SMALL)) {
            double java = node.latencyRatio().get(PLAIN_JAVA + "/" + call);
            double nodeClient = node.latencyRatio().get(PLAIN_NODE + "/" + call);
            target(call + " p50 at most " + TARGET_RATIO_TO_ECHO + "x the Node reference's `echo` (plain clients, 1 client)",
                    fmt(java) + "x Java client, " + fmt(nodeClient) + "x Node client",
                    java <= TARGET_RATIO_TO_ECHO && nodeClient <= TARGET_RATIO_TO_ECHO);
        }
        double runP50 = container.runStats() != null ? container.runStats().p50Millis() : rawRun.p50Millis();
        target("run_command true p50 at most 10 ms", (container.runStats() != null
                ? fmt(container.runStats().p50Millis()) + " ms container, " : "no container, ")
                + fmt(rawRun.p50Millis()) + " ms jar with this host's /bin/sh (plain client); "
                + fmt(sdk.get("Streamable HTTP/" + RUN_TRUE + "/1").p50Millis()) + " ms SDK client", runP50 <= 10.0);
        target("containers (server and runner) start to healthy at most 2 s", container.start(),
                container.startMillis() >= 0 && container.startMillis() <= 2_000);
        double rss = container.resident() != null ? container.resident().idleMib() : jarResident.idleMib();
        target("idle RSS at most 150 MiB (" + Resident.IDLE.toSeconds() + " s after the first answer, no calls)",
                container.rss(Resident::idleMib) + " container, "
                        + String.format(Locale.ROOT, "%.0f MiB jar", jarResident.idleMib()), rss <= 150);
        line("");
    }

    private void tableHead() {
        line("| transport | call | clients | p50 ms | p99 ms | calls/s | refused busy | failed |");
        line("|---|---|---:|---:|---:|---:|---:|---:|");
    }

    /**
     * What was measured of the container: a negative start, no resident memory and no stats
     * when it could not run ({@code why}). {@code frontDoorRead}: the same read_file through
     * Traefik, measured right after the direct one; {@code frontDoorWhy}: why not, when it was not.
     */
    private record ContainerFigures(long startMillis, Resident resident, LoadRun.Stats readStats, LoadRun.Stats runStats,
            LoadRun.Stats frontDoorRead, String frontDoorWhy, String why) {
        String start() {
            return startMillis >= 0 ? startMillis + " ms" : why;
        }

        /** To a tenth of a MiB: the pair idles within one of its target. */
        String rss(java.util.function.ToDoubleFunction<Resident> when) {
            return resident != null ? String.format(Locale.ROOT, "%.1f MiB", when.applyAsDouble(resident)) : why;
        }

        String read() {
            return cells(readStats);
        }

        String run() {
            return cells(runStats);
        }

        String frontDoor() {
            return frontDoorRead == null && readStats != null ? "not measured (" + frontDoorWhy + ") | | "
                    : cells(frontDoorRead);
        }

        private String cells(LoadRun.Stats s) {
            return s == null ? why + " | | "
                    : String.format(Locale.ROOT, "%.2f | %.2f | %.0f", s.p50Millis(), s.p99Millis(), s.callsPerSecond())
                            + (s.failed() > 0 ? " (" + s.failed() + " failed or cut off)" : "");
        }
    }

    private ContainerFigures containerFigures(String token) {
        if (!ContainerRun.imageAvailable()) {
            return new ContainerFigures(-1, null, null, null, null, null, "n/a (no Docker daemon or no " + ContainerRun.SERVER_IMAGE
                    + " and " + ContainerRun.RUNNER_IMAGE + " images)");
        }
        try (ContainerRun container = ContainerRun.start(token, BASE)) {
            RawRoundTrips.Target target = new RawRoundTrips.Target(container.mcpUrl, token, false);
            // The cache holds the classes, not compiled code: the JIT still needs its warm-up.
            RawRoundTrips.measure(target, READ_4K_JSON, 4, Duration.ofSeconds(5), Duration.ofSeconds(1));
            LoadRun.Stats read = RawRoundTrips.measure(target, READ_4K_JSON, 1, warmup, measure);
            LoadRun.Stats run = RawRoundTrips.measure(target, RUN_TRUE_JSON, 1, warmup, measure);
            LoadRun.Stats frontDoor = null;
            String frontDoorWhy = null;
            try (FrontDoor door = FrontDoor.start(root, container.port, BASE)) {
                RawRoundTrips.Target through = new RawRoundTrips.Target(door.mcpUrl, token, false);
                RawRoundTrips.measure(through, READ_4K_JSON, 4, Duration.ofSeconds(3), Duration.ofSeconds(1));
                frontDoor = RawRoundTrips.measure(through, READ_4K_JSON, 1, warmup, measure);
            } catch (Exception e) {
                frontDoorWhy = e.getMessage();
                System.err.println("bench: the front door was not measured: " + e.getMessage());
            }
            return new ContainerFigures(container.startMillis, container.resident, read, run,
                    frontDoor, frontDoorWhy, null);
        } catch (Exception e) {
            return new ContainerFigures(-1, null, null, null, null, null, "failed: " + e.getMessage());
        }
    }

    /**
     * A row of the side-by-side table; the ratios are kept by client and count
     * ({@code "plain HTTP, Java/8"}, read_file) and by call (one client).
     */
    private void compare(String client, String call, int clients, LoadRun.Stats mine, LoadRun.Stats theirs,
            Map<String, Double> throughputRatio, Map<String, Double> latencyRatio) {
        double ratio = mine.callsPerSecond() / theirs.callsPerSecond();
        double latency = mine.p50Millis() / theirs.p50Millis();
        if (call.equals(READ_4K)) {
            throughputRatio.put(client + "/" + clients, ratio);
        }
        if (clients == 1) {
            latencyRatio.put(client + "/" + call, latency);
        }
        line(String.format(Locale.ROOT, "| %s | %s | %d | %.2f | %.2f | %.2f | %.0f | %.0f | %.2f |", client, call, clients,
                mine.p50Millis(), theirs.p50Millis(), latency, mine.callsPerSecond(), theirs.callsPerSecond(), ratio));
        System.out.println(report.substring(report.lastIndexOf("\n", report.length() - 2) + 1).strip());
    }

    /** Where the hand-written part of BENCHMARKS.md begins; {@code make bench} rewrites what is above it and keeps the rest. */
    static final String HAND_WRITTEN = "<!-- Hand-written from here on: make bench keeps this line and everything below it. -->";

    /** The hand-written part of {@code file}, from its marker on; empty when there is none. */
    static String handWritten(Path file) throws java.io.IOException {
        if (!Files.exists(file)) {
            return "";
        }
        String text = Files.readString(file);
        int at = text.indexOf(HAND_WRITTEN);
        return at < 0 ? "" : text.substring(at);
    }

    /** The installed version of an npm package of the reference servers. */
    static String packageVersion(Path root, String name) {
        try {
            String json = Files.readString(root.resolve("bench/node/node_modules/@modelcontextprotocol/" + name
                    + "/package.json"));
            return json.replaceAll("(?s).*\"version\"\\s*:\\s*\"([^\"]+)\".*", "$1");
        } catch (Exception e) {
            return "(version unknown)";
        }
    }

    private static String toolCall(String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }

    static McpSyncClient connect(McpClientTransport transport) {
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
                        max = Math.max(max, Processes.treeRssMib(pid));
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
