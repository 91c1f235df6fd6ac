package dev.sandboxmcp.bench;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How {@code read_file} scales with the file: a 100-line page at the start, the middle and the end
 * of files of growing size (made here, in a temporary directory, of 100-byte lines), first call
 * and later calls, ours (jar) and, when installed, the reference filesystem server from npm over
 * stdio (its head and tail reads; it cannot start a page in the middle). Part of
 * {@code make bench}; runnable alone ({@code make bench-scaling}) with the sizes in MB as
 * {@code 1,100,1000}.
 */
public final class Scaling {

    static final int LINE_BYTES = 100;
    static final int PAGE_LINES = 100;
    static final double TARGET_FIRST_MS = 1_500;
    static final double TARGET_LATER_MS = 20;
    static final double TARGET_SCAN_GB_PER_S = 1;

    private Scaling() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Path root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
        long[] sizes = Arrays.stream((args.length > 1 ? args[1] : "1,100,1000").split(",")).mapToLong(Long::parseLong).toArray();
        System.out.print(section(root, sizes));
        System.exit(0);
    }

    /** The Markdown section: one row per file size and place in it. */
    static String section(Path root, long[] sizesMb) throws Exception {
        try (TempTree temp = TempTree.create("sandbox-mcp-scaling-")) {
            return section(root, sizesMb, temp.path());
        }
    }

    private static String section(Path root, long[] sizesMb, Path temp) throws Exception {
        Path workspace = Files.createDirectories(temp.resolve("workspace"));
        StringBuilder out = new StringBuilder();
        out.append("## read_file scaling: a 100-line page in files of growing size\n\n");
        out.append("Files of ").append(LINE_BYTES).append("-byte lines made by the bench (in the page cache, as a log being "
                + "read usually is). \"first\" is the first call after the file changed (no line index yet: the "
                + "modification time is bumped before it), \"later\" the median of ").append(Timing.LATER_CALLS)
                .append(" calls after it. Ours: the jar, SDK Java client over Streamable HTTP, `offset`/`limit` (or `tail`). ");
        boolean withReference = OurJar.hasReferenceFilesystem(root);
        out.append(withReference ? "Theirs: `@modelcontextprotocol/server-filesystem` " + Benchmark.packageVersion(root,
                "server-filesystem") + " over stdio (SDK Java client), `read_text_file` with `head`/`tail`; it has no "
                + "page in the middle. Ratio: ours/theirs, below 1 means ours is faster.\n\n"
                : "(The reference filesystem server is not installed: `cd bench/node && npm ci`.)\n\n");
        out.append("| file | page | ours first ms | ours later ms | theirs first ms | theirs later ms | later ours/theirs "
                + "| target |\n|---|---|---:|---:|---:|---:|---:|---|\n");
        String scanRate = null;
        try (OurJar ours = OurJar.start(root, workspace, temp.resolve("ours.log"))) {
            McpSyncClient client = ours.streamableClient();
            McpSyncClient theirs = OurJar.referenceFilesystem(root, workspace).orElse(null);
            for (long mb : sizesMb) {
                String name = "scale-" + mb + "MB.log";
                Path file = workspace.resolve(name);
                long lines = write(file, mb * 1_000_000 / LINE_BYTES);
                warmUp(client, name, lines);
                String size = mb >= 1000 ? mb / 1000 + " GB" : mb + " MB";
                List<Place> places = List.of(
                        new Place("start", Map.of("path", name, "offset", 1, "limit", PAGE_LINES), 1, true,
                                Map.of("path", name, "head", PAGE_LINES), 1),
                        new Place("middle", Map.of("path", name, "offset", lines / 2, "limit", PAGE_LINES), lines / 2, false,
                                null, 0),
                        new Place("end (offset)", Map.of("path", name, "offset", lines - PAGE_LINES + 1, "limit", PAGE_LINES),
                                lines - PAGE_LINES + 1, false, Map.of("path", name, "tail", PAGE_LINES), lines),
                        new Place("end (tail)", Map.of("path", name, "tail", PAGE_LINES), lines - PAGE_LINES + 1, true, null, 0));
                for (Place place : places) {
                    Timing mine = time(file, round -> call(client, "read_file", place.ours(), place.firstLine()));
                    if (place.name().equals("end (offset)") && mb >= 100) {
                        // The first call counts every newline of the file: its scanning speed (a call's own
                        // few milliseconds hide it in a small file).
                        double gbPerSecond = Files.size(file) / 1e9 / (mine.first() / 1e3);
                        scanRate = String.format(Locale.ROOT, "Byte scanning: %.1f GB/s (the %s file's end by offset, first "
                                + "call: the whole file scanned for newlines in %.1f ms, the call included); target at least "
                                + "%.0f GB/s: %s.", gbPerSecond, size, mine.first(), TARGET_SCAN_GB_PER_S,
                                gbPerSecond >= TARGET_SCAN_GB_PER_S ? "met" : "**missed**");
                    }
                    Timing other = theirs == null || place.theirs() == null ? null : time(file,
                            callOf(theirs, place.theirs(), place.theirLine()));
                    boolean met = mine.later() <= TARGET_LATER_MS && (place.startOrTail() ? mine.first() <= TARGET_LATER_MS
                            : mine.first() <= TARGET_FIRST_MS);
                    out.append(String.format(Locale.ROOT, "| %s | %s | %.1f | %.1f | %s | %s | %s | %s |%n", size, place.name(),
                            mine.first(), mine.later(), other == null ? "" : Timing.millis(other.first()),
                            other == null ? "" : Timing.millis(other.later()),
                            other == null ? "" : String.format(Locale.ROOT, "%.1f", mine.later() / other.later()),
                            met ? "met" : "**missed**"));
                    System.err.print(out.substring(out.lastIndexOf("\n", out.length() - 2) + 1));
                }
                Files.delete(file);
            }
            if (theirs != null) {
                theirs.closeGracefully();
            }
        }
        out.append("\nTargets: first call at most ").append((long) TARGET_FIRST_MS).append(" ms (at most ")
                .append((long) TARGET_LATER_MS).append(" ms at the start and by `tail`), later calls at most ")
                .append((long) TARGET_LATER_MS).append(" ms. The first call in the middle or at the end by offset "
                + "counts newlines up to the page (bounded by how fast the file can be read and scanned, about "
                + "a byte per cycle per core here); later calls start at a line index checkpoint.\n\n");
        if (scanRate != null) {
            out.append(scanRate).append("\n\n");
        }
        return out.toString();
    }

    /**
     * A place to read a page: our arguments, a line the page holds, and the reference's arguments (or
     * null). Their {@code tail} counts the empty string after the final newline as a line, so its
     * pages are checked for the file's last line.
     */
    private record Place(String name, Map<String, Object> ours, long firstLine, boolean startOrTail, Map<String, Object> theirs,
            long theirLine) {
    }

    private static Timing.Call callOf(McpSyncClient theirs, Map<String, Object> arguments, long firstLine) {
        return round -> call(theirs, "read_text_file", arguments, firstLine);
    }

    /** The first call after the file's modification time changes, and the median of the calls after it. */
    private static Timing time(Path file, Timing.Call call) throws Exception {
        Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + Math.round(Math.random() * 1e6)));
        return Timing.of(call);
    }

    /** Calls the tool and checks that the page holds the line expected. */
    private static void call(McpSyncClient client, String tool, Map<String, Object> arguments, long expectedLine) {
        CallToolResult result = client.callTool(new CallToolRequest(tool, arguments));
        String text = result.content().isEmpty() || !(result.content().getFirst() instanceof TextContent t) ? "" : t.text();
        if (Boolean.TRUE.equals(result.isError()) || !text.contains(line(expectedLine).substring(0, 20))) {
            throw new IllegalStateException(tool + " " + arguments + " did not return line " + expectedLine + ": "
                    + text.substring(0, Math.min(200, text.length())));
        }
    }

    /** Reads a few pages so that the JIT has compiled the server's paths before anything is timed. */
    private static void warmUp(McpSyncClient client, String name, long lines) {
        for (int i = 0; i < 200; i++) {
            call(client, "read_file", Map.of("path", name, "offset", 1 + (i % 10), "limit", PAGE_LINES), 1 + (i % 10));
        }
        call(client, "read_file", Map.of("path", name, "offset", lines, "limit", 1), lines);
    }

    /** Writes {@code count} lines of {@link #LINE_BYTES} bytes; returns the count. */
    private static long write(Path file, long count) throws IOException {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 20)) {
            for (long i = 1; i <= count; i++) {
                out.write(line(i).getBytes(StandardCharsets.US_ASCII));
            }
        }
        return count;
    }

    /** Line n: its number, then filler to {@link #LINE_BYTES} bytes with the newline. */
    static String line(long n) {
        String head = String.format(Locale.ROOT, "line %012d ", n);
        return head + "x".repeat(LINE_BYTES - head.length() - 1) + "\n";
    }
}
