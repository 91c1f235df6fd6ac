package dev.sandboxmcp.bench;

import dev.sandboxmcp.config.Limits;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a listing, an edit and a command start cost, side by side in one run with the reference
 * filesystem server (stdio) and, for a command, with the shell started directly (the floor):
 * a directory of 100,000 files, a tree of 100 x 1,000 files, one line edited in a 1 MiB file,
 * and {@code run_command true}, through HTTP and at the runner, next to {@code /bin/sh -lc true}
 * and {@code /bin/sh -c true} timed in the same loop. Part of {@code make bench}; runnable alone ({@code make bench-costs}).
 */
public final class Costs {

    static final int FILES = 100_000;
    static final int TREE_DIRECTORIES = 100;
    static final int EDIT_FILE_BYTES = 1 << 20;
    static final int EDITS = 21;
    static final int COMMANDS = 400;
    static final int BLOCK = 50;
    static final int WARM_UP_COMMANDS = 1000;
    /**
     * Before the commands, this long of {@code list_directory} calls from two clients: a server in
     * use has run its HTTP and MCP path (the same for every tool) tens of thousands of times and
     * compiled it; the commands alone, about a hundred a second, leave it half compiled.
     */
    static final Duration WARM_UP_HTTP = Duration.ofSeconds(10);
    static final double TARGET_COMMAND_ABOVE_SHELL_MS = 1.5;

    private Costs() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Path root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
        System.out.print(section(root));
        System.exit(0);
    }

    static String section(Path root) throws Exception {
        try (TempTree temp = TempTree.create("sandbox-mcp-costs-")) {
            return section(root, temp.path());
        }
    }

    private static String section(Path root, Path temp) throws Exception {
        Path workspace = Files.createDirectories(temp.resolve("workspace"));
        makeFiles(workspace);
        StringBuilder out = new StringBuilder();
        out.append("## Listing, editing, starting a command\n\n");
        boolean withReference = OurJar.hasReferenceFilesystem(root);
        out.append("Ours: the jar, SDK Java client over Streamable HTTP; theirs: ")
                .append(withReference ? "`@modelcontextprotocol/server-filesystem` " + Benchmark.packageVersion(root,
                        "server-filesystem") + " over stdio (SDK Java client)" : "(not installed: `cd bench/node && npm ci`)")
                .append(". \"first\" is the first call, \"later\" the median of ").append(Timing.LATER_CALLS)
                .append(" after it (edits: of ").append(EDITS - 1).append(", each changing the line back and forth). "
                        + "Ratio: ours/theirs of the later calls, below 1 means ours is faster. Our listing stops at its "
                        + "entry cap (").append(String.format(Locale.ROOT, "%,d", Limits.defaults().listEntries()))
                .append(", and says so); theirs returns every name.\n\n");
        out.append("| work | ours | theirs | ours first ms | ours later ms | theirs first ms | theirs later ms "
                + "| later ours/theirs |\n|---|---|---|---:|---:|---:|---:|---:|\n");

        try (OurJar ours = OurJar.start(root, workspace, temp.resolve("ours.log"))) {
            McpSyncClient client = ours.streamableClient();
            McpSyncClient theirs = OurJar.referenceFilesystem(root, workspace).orElse(null);
            warmUp(client);
            McpSyncClient other = theirs;

            row(out, "a directory of 100,000 files", "`list_directory`", "`list_directory`",
                    Timing.of(i -> call(client, "list_directory", Map.of("path", "flat"))),
                    other == null ? null : Timing.of(i -> call(other, "list_directory",
                            Map.of("path", workspace.resolve("flat").toString()))));
            row(out, "a tree of 100 x 1,000 files", "`list_directory` depth 3", "`directory_tree`",
                    Timing.of(i -> call(client, "list_directory", Map.of("path", "tree", "depth", 3))),
                    other == null ? null : Timing.of(i -> call(other, "directory_tree",
                            Map.of("path", workspace.resolve("tree").toString()))));
            row(out, "one line edited in a 1 MiB file", "`edit_file`", "`edit_file`",
                    Timing.of(i -> call(client, "edit_file", Map.of("path", "edit-ours.txt",
                            "old_text", edited(i), "new_text", edited(i + 1)))),
                    other == null ? null : Timing.of(i -> call(other, "edit_file", Map.of("path",
                            workspace.resolve("edit-theirs.txt").toString(),
                            "edits", List.of(Map.of("oldText", edited(i), "newText", edited(i + 1)))))));
            out.append('\n');
            commandFloor(out, ours, workspace);
            if (theirs != null) {
                theirs.closeGracefully();
            }
        }
        return out.toString();
    }

    /**
     * {@code run_command true} through HTTP (plain keep-alive client, one at a time) and at the
     * runner (the server's end of the channel in this JVM, no HTTP), and the shell started here:
     * four kinds in alternating blocks, so that each is timed on the same machine at the same time.
     */
    private static void commandFloor(StringBuilder out, OurJar ours, Path workspace) throws Exception {
        String call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}";
        Map<String, Object> arguments = Map.of("command", "true");
        long[][] took;
        try (PlainHttp http = new PlainHttp(ours.mcpUrl()); AtRunner runner = AtRunner.start(workspace)) {
            Map<String, String> headers = Map.of("Authorization", "Bearer " + ours.token());
            List<Timed> kinds = List.of(() -> {
                PlainHttp.Response response = http.post(headers, call);
                if (response.status() != 200 || !response.body().contains("\"exit_code\":0")) {
                    throw new IllegalStateException("run_command true failed: " + response.body());
                }
            }, () -> runner.call("run_command", arguments), () -> shell(workspace, "-lc"), () -> shell(workspace, "-c"));
            RawRoundTrips.measure(ours.rawTarget(), "{\"jsonrpc\":\"2.0\","
                    + "\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"list_directory\",\"arguments\":{}}}", 2,
                    WARM_UP_HTTP, Duration.ofSeconds(1));
            // The JIT's warm-up: the command path runs through method handles (the native spawn) that
            // are slow until compiled.
            for (int i = 0; i < WARM_UP_COMMANDS; i++) {
                kinds.get(0).run();
                kinds.get(1).run();
            }
            took = new long[kinds.size()][COMMANDS];
            // In blocks, each kind back to back, so that each is timed on a warm machine; blocks alternate.
            for (int block = -1; block < COMMANDS / BLOCK; block++) {
                for (int kind = 0; kind < kinds.size(); kind++) {
                    for (int i = 0; i < BLOCK; i++) {
                        long started = System.nanoTime();
                        kinds.get(kind).run();
                        if (block >= 0) {
                            took[kind][block * BLOCK + i] = System.nanoTime() - started;
                        }
                    }
                }
            }
        }
        double http = p50(took[0]);
        double atRunner = p50(took[1]);
        double login = p50(took[2]);
        out.append("`run_command true` through HTTP (jar, one plain keep-alive HTTP/1.1 connection, the whole MCP call) "
                + "and at the runner (this JVM as the server's end of the channel, the runner its child: no HTTP, MCP or "
                + "dispatcher), and the shell started by this JVM's `ProcessBuilder`, ").append(COMMANDS)
                .append(" of each in alternating blocks of ").append(BLOCK).append(" (after ").append(WARM_UP_HTTP.toSeconds())
                .append(" s of `list_directory` calls through HTTP from two clients, ").append(WARM_UP_COMMANDS)
                .append(" calls of each `run_command` and a block of each to warm up), this host's /bin/sh and /etc/profile:\n\n");
        out.append("| what | p50 ms | p90 ms |\n|---|---:|---:|\n");
        out.append(String.format(Locale.ROOT, "| `run_command true`, HTTP | %.2f | %.2f |%n", http, p90(took[0])));
        out.append(String.format(Locale.ROOT, "| `run_command true`, at the runner | %.2f | %.2f |%n", atRunner, p90(took[1])));
        out.append(String.format(Locale.ROOT, "| `/bin/sh -lc true` | %.2f | %.2f |%n", login, p90(took[2])));
        out.append(String.format(Locale.ROOT, "| `/bin/sh -c true` | %.2f | %.2f |%n", p50(took[3]), p90(took[3])));
        out.append(String.format(Locale.ROOT, "%nTarget: `run_command true` at most %.1f ms above `/bin/sh -lc true` (p50): "
                        + "%.2f ms above through HTTP, %s; %.2f ms above at the runner, %s.%n%n",
                TARGET_COMMAND_ABOVE_SHELL_MS, http - login, met(http - login), atRunner - login, met(atRunner - login)));
    }

    /** One timed call of the command floor. */
    @FunctionalInterface
    private interface Timed {
        void run() throws Exception;
    }

    private static String met(double above) {
        return above <= TARGET_COMMAND_ABOVE_SHELL_MS ? "met" : "**missed**";
    }

    private static void shell(Path workspace, String flags) throws Exception {
        Process process = new ProcessBuilder("/bin/sh", flags, "true").directory(workspace.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        process.getInputStream().readAllBytes();
        if (process.waitFor() != 0) {
            throw new IllegalStateException("/bin/sh " + flags + " true failed");
        }
    }

    private static void row(StringBuilder out, String work, String oursTool, String theirTool, Timing mine, Timing other) {
        out.append(String.format(Locale.ROOT, "| %s | %s | %s | %.1f | %.1f | %s | %s | %s |%n", work, oursTool, theirTool,
                mine.first(), mine.later(), other == null ? "" : Timing.millis(other.first()),
                other == null ? "" : Timing.millis(other.later()),
                other == null ? "" : String.format(Locale.ROOT, "%.2f", mine.later() / other.later())));
        System.err.print(out.substring(out.lastIndexOf("\n", out.length() - 2) + 1));
    }

    private static void call(McpSyncClient client, String tool, Map<String, Object> arguments) {
        CallToolResult result = client.callTool(new CallToolRequest(tool, arguments));
        if (Boolean.TRUE.equals(result.isError())) {
            throw new IllegalStateException(tool + " " + arguments + " failed: " + result.content());
        }
    }

    /** A few calls of each kind so that the JIT has compiled our paths before anything is timed. */
    private static void warmUp(McpSyncClient client) {
        for (int i = 0; i < 50; i++) {
            call(client, "list_directory", Map.of("path", "tree/d000"));
            call(client, "edit_file", Map.of("path", "warm.txt", "old_text", edited(i), "new_text", edited(i + 1)));
        }
    }

    /** The line the edits change: it alternates between two values, so every edit changes the file. */
    private static String edited(int round) {
        return round % 2 == 0 ? "line 500000 before" : "line 500000 after";
    }

    /** The flat directory, the tree, and three 1 MiB files with the line to edit in their middle. */
    private static void makeFiles(Path workspace) throws Exception {
        Path flat = Files.createDirectories(workspace.resolve("flat"));
        for (int i = 0; i < FILES; i++) {
            Files.createFile(flat.resolve(String.format(Locale.ROOT, "f%06d.txt", i)));
        }
        for (int d = 0; d < TREE_DIRECTORIES; d++) {
            Path dir = Files.createDirectories(workspace.resolve(String.format(Locale.ROOT, "tree/d%03d", d)));
            for (int i = 0; i < FILES / TREE_DIRECTORIES; i++) {
                Files.createFile(dir.resolve(String.format(Locale.ROOT, "f%04d.txt", i)));
            }
        }
        String half = "x".repeat(99) + "\n";
        StringBuilder text = new StringBuilder(EDIT_FILE_BYTES + 100);
        while (text.length() < EDIT_FILE_BYTES / 2) {
            text.append(half);
        }
        text.append(edited(0)).append('\n');
        while (text.length() < EDIT_FILE_BYTES) {
            text.append(half);
        }
        // Just under 1 MiB, our file limit (an edit may grow the file by a byte).
        text.setLength(EDIT_FILE_BYTES - 16);
        text.setCharAt(text.length() - 1, '\n');
        byte[] bytes = text.toString().getBytes(StandardCharsets.US_ASCII);
        for (String name : List.of("edit-ours.txt", "edit-theirs.txt", "warm.txt")) {
            Files.write(workspace.resolve(name), bytes);
        }
    }

    private static double p50(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2] / 1e6;
    }

    private static double p90(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length * 9 / 10] / 1e6;
    }
}
