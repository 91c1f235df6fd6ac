package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.IdleSweep;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.tools.ListJobsTool;
import dev.sandboxmcp.tools.LocalTools;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.ToolCatalog;
import dev.sandboxmcp.tools.ToolResponse;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.Workspace;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The runner's answers in the worst shapes of text stay within the line the server reads
 * ({@link Bounds#maxReplyBytes}), through the real tools, and their pages, read in sequence, give
 * back the text whole: files and command output of control characters, of quotes and backslashes,
 * of 4-byte characters, and of all of them mixed.
 */
class LargestRepliesTest {

    private static final Limits LIMITS = Limits.defaults();
    private static final int BOUND = Bounds.maxReplyBytes(LIMITS);

    @TempDir
    Path root;

    Workspace workspace;
    CommandRunner commands;
    JobManager jobs;
    LocalTools tools;
    long longest;

    @BeforeEach
    void setUp() throws Exception {
        workspace = Workspace.open(root);
        Map<String, String> environment = Map.of("PATH", "/usr/bin:/bin");
        commands = CommandRunner.under(LIMITS, environment, IdleSweep.NONE);
        jobs = JobManager.under(LIMITS, environment, IdleSweep.NONE);
        tools = ToolCatalog.local(new ToolCatalog.Parts(workspace, commands, jobs, LIMITS));
    }

    @AfterEach
    void tearDown() throws Exception {
        jobs.close();
        commands.close();
        workspace.close();
    }

    /** Lines of 100 bytes (newline included) made of {@code shape}'s characters, {@code bytes} in all. */
    static byte[] text(String shape, int bytes) {
        Random random = new Random(11);
        String[] pieces = switch (shape) {
            case "control" -> new String[] {"\u0001"};
            case "quotes" -> new String[] {"\"", "\\"};
            case "emoji" -> new String[] {"😀"};
            default -> new String[] {"\u0001", "\u001f", "\t", "\"", "\\", "a", "é", "中", "😀"};
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (out.size() < bytes) {
            byte[] piece = pieces[random.nextInt(pieces.length)].getBytes(StandardCharsets.UTF_8);
            if (line.size() + piece.length > 99) {
                line.write('\n');
                out.writeBytes(line.toByteArray());
                line.reset();
            }
            line.writeBytes(piece);
        }
        return out.toByteArray();
    }

    /** Bytes that are not UTF-8: each becomes U+FFFD, three bytes, once decoded. */
    static byte[] invalid(int bytes) {
        byte[] out = new byte[bytes];
        java.util.Arrays.fill(out, (byte) 0xFF);
        return out;
    }

    private ToolResponse call(String tool, Map<String, Object> arguments) {
        ToolResponse response = tools.execute(tool, arguments, Progress.NONE);
        int line = Protocol.encode(RunnerAgent.reply(1, response)).length;
        longest = Math.max(longest, line);
        assertThat(line).as("%s %s: %.200s", tool, arguments, response.text()).isLessThanOrEqualTo(BOUND);
        assertThat(response.error()).as(response.text()).isFalse();
        return response;
    }

    @ParameterizedTest
    @ValueSource(strings = {"control", "quotes", "emoji", "mixed"})
    void readFilePagesFitTheLineAndGiveTheFileBack(String shape) throws Exception {
        byte[] file = text(shape, LIMITS.fileMaxBytes() * 3 / 2);
        Files.write(root.resolve("f.txt"), file);
        for (Map<String, Object> page : java.util.List.<Map<String, Object>>of(Map.of(), Map.of("limit", LIMITS.readLinesMax()))) {
            StringBuilder read = new StringBuilder();
            long offset = 1;
            boolean more = true;
            while (more) {
                Map<String, Object> arguments = new java.util.HashMap<>(page);
                arguments.put("path", "f.txt");
                arguments.put("offset", offset);
                Map<String, Object> structured = call("read_file", arguments).structured();
                read.append((String) structured.get("content"));
                offset += (Long) structured.get("lines");
                more = (Boolean) structured.get("has_more");
            }
            assertThat(read.toString()).isEqualTo(new String(file, StandardCharsets.UTF_8));
        }
        call("read_file", Map.of("path", "f.txt", "tail", LIMITS.readLinesMax()));
        System.out.printf("read_file %s: longest line %d of %d%n", shape, longest, BOUND);
        assertThat(longest).as("a page at the file limit, twice, and a little").isGreaterThan(2L * LIMITS.fileMaxBytes() * 9 / 10);
    }

    /**
     * A listing at the entry cap, three levels of the longest names (255 bytes each) of plain
     * letters, of control characters, or links with the longest targets: each stays within the
     * line, cut by its size as JSON where the entry cap would not cut it, and says so.
     */
    @ParameterizedTest
    @ValueSource(strings = {"letters", "control", "links"})
    void listingsOfTheLongestNamesFitTheLine(String shape) throws Exception {
        char c = shape.equals("control") ? '\u0001' : 'n';
        Path deepest = Files.createDirectories(root.resolve("t").resolve(String.valueOf(c).repeat(255))
                .resolve(String.valueOf(c).repeat(255)));
        for (int i = 0; i < LIMITS.listEntries(); i++) {
            String name = String.format("%05d", i) + String.valueOf(c).repeat(250);
            if (shape.equals("links")) {
                Files.createSymbolicLink(deepest.resolve(name), Path.of("x".repeat(4000)));
            } else {
                Files.createFile(deepest.resolve(name));
            }
        }
        Map<String, Object> listed = call("list_directory", Map.of("path", "t", "depth", 3)).structured();
        System.out.printf("list_directory %s: longest line %d of %d, %d entries%n", shape, longest, BOUND,
                ((java.util.List<?>) listed.get("entries")).size());
        assertThat(listed).containsEntry("truncated", true);
        assertThat(((java.util.List<?>) listed.get("entries")).size()).as("cut by size, before the entry cap")
                .isLessThan(LIMITS.listEntries());
    }

    @ParameterizedTest
    @ValueSource(strings = {"control", "quotes", "emoji", "mixed", "invalid"})
    void commandOutputFitsTheLineAndItsPagesGiveItBack(String shape) throws Exception {
        byte[] output = shape.equals("invalid") ? invalid(LIMITS.outputCapBytes()) : text(shape, LIMITS.outputCapBytes() - 100);
        Files.write(root.resolve("out.bin"), output);
        Map<String, Object> run = call("run_command", Map.of("command", "cat out.bin; cat out.bin >&2")).structured();
        String id = (String) run.get("output_id");
        for (String stream : new String[] {"stdout", "stderr"}) {
            StringBuilder read = new StringBuilder();
            long offset = 0;
            boolean more = true;
            while (more) {
                Map<String, Object> page = call("job_output", Map.of("id", id, "stream", stream, "offset", offset))
                        .structured();
                read.append((String) page.get("output"));
                assertThat((Long) page.get("next_offset")).isGreaterThan(offset);
                offset = (Long) page.get("next_offset");
                more = (Boolean) page.get("has_more");
            }
            assertThat(read.toString()).isEqualTo(new String(output, StandardCharsets.UTF_8));
        }
        System.out.printf("run_command and job_output %s: longest line %d of %d%n", shape, longest, BOUND);
    }

    /**
     * list_jobs names every kept job's command, each up to 128 KiB: it shows each cut, so that a
     * listing of the longest commands, of control characters, stays within the bound; job_output
     * still shows a command whole.
     */
    @org.junit.jupiter.api.Test
    void aListingOfTheLongestCommandsStaysWithinTheBound() throws Exception {
        ToolResponse listed = listEveryKeptJob(tools, LIMITS, ".");
        assertThat(listed.text()).contains("command cut: " + COMMAND.length() + " characters");
        String id = (String) ((Map<?, ?>) ((java.util.List<?>) listed.structured().get("jobs")).getLast()).get("id");
        Map<String, Object> shown = tools.execute("job_output", Map.of("id", id), Progress.NONE).structured();
        assertThat(shown.get("command")).as("job_output shows the command whole").isEqualTo(COMMAND);
        assertThat(shown).doesNotContainKey("command_chars");
    }

    /**
     * With the most jobs kept that MCP_MAX_JOBS allows (64, so 256 kept), each started in a
     * directory whose name is as long as a path may be and starts with control characters, the listing
     * shows less of each command and directory, and still fits the bound.
     */
    @org.junit.jupiter.api.Test
    void aListingOfTheMostJobsInTheLongestDirectoriesStaysWithinTheBound() throws Exception {
        Limits most = Limits.fromEnvironment(Map.of("MCP_MAX_JOBS", "64"));
        String cwd = longestDirectory();
        Map<String, String> environment = Map.of("PATH", "/usr/bin:/bin");
        try (JobManager manyJobs = JobManager.under(most, environment, IdleSweep.NONE)) {
            LocalTools many = ToolCatalog.local(new ToolCatalog.Parts(workspace, commands, manyJobs, most));
            ToolResponse listed = listEveryKeptJob(many, most, cwd);
            // Both cut to one length, so that the 256 fit: shorter than the directory, its length beside it.
            assertThat((java.util.List<?>) listed.structured().get("jobs")).allSatisfy(job -> {
                Map<?, ?> shown = (Map<?, ?>) job;
                assertThat(shown.get("cwd_chars")).isEqualTo(cwd.length());
                assertThat((String) shown.get("cwd")).hasSameSizeAs((String) shown.get("command")).hasSizeLessThan(cwd.length());
            });
        }
    }

    /**
     * Commands that outlast their call's budget go on as jobs that count against no job limit, only
     * the command slots: with 4 jobs kept per MCP_MAX_JOBS=4 (16) and 120 such commands running at
     * once, the table holds 120 jobs, and their listing, long commands in long directories, still
     * fits the bound.
     */
    @org.junit.jupiter.api.Test
    void aListingOfMoreRunningJobsThanAreKeptStaysWithinTheBound() throws Exception {
        int running = 120;
        Limits wide = Limits.fromEnvironment(Map.of("MCP_MAX_JOBS", "4", "MCP_MAX_CONCURRENT_COMMANDS", "200",
                "MCP_CALL_BUDGET_SECONDS", "1"));
        byte[] listing = listRunning(wide, running);
        System.out.printf("list_jobs of %d running commands (%d jobs kept): line %d of %d%n", running,
                wide.keptJobs(), listing.length - 1, BOUND);
        assertThat(listing.length - 1).isLessThanOrEqualTo(BOUND);
    }

    /**
     * With the most commands at once (1024) and jobs (64) and the smallest file limit, the table
     * may hold 1,088 jobs, too many for even their cut commands to fit the text's share: the cut
     * is at its floor, and the channel's bound makes room for what list_jobs charges such a
     * listing (before, these limits' bound was 1,769,472 bytes, under that charge). What a job's
     * entry really takes, measured on 40 jobs (long commands in long directories), is within the
     * charge.
     */
    @org.junit.jupiter.api.Test
    void aListingOfTheMostJobsTheTableMayHoldFitsTheBoundOfItsLimits() throws Exception {
        int running = 40;
        Limits most = Limits.fromEnvironment(Map.of("MCP_MAX_JOBS", "64", "MCP_MAX_CONCURRENT_COMMANDS", "1024",
                "MCP_FILE_LIMIT_BYTES", "1024", "MCP_CALL_BUDGET_SECONDS", "1"));
        byte[] listing = listRunning(most, running);
        long perJob = (listing.length - 1) / running + 1;
        long scaled = perJob * most.mostJobsHeld();
        int bound = Bounds.maxReplyBytes(most);
        System.out.printf("list_jobs of %d running commands at the floor of the cut: %d bytes a job, %d for the %d jobs the "
                + "table may hold, charged %d, bound %d%n", running, perJob, scaled, most.mostJobsHeld(),
                ListJobsTool.largestListingBytes(most), bound);
        assertThat(scaled).as("what the jobs' entries take, against what list_jobs charges them")
                .isLessThanOrEqualTo(ListJobsTool.largestListingBytes(most));
        assertThat(ListJobsTool.largestListingBytes(most)).isLessThanOrEqualTo(bound);
    }

    /**
     * Starts {@code running} commands that outlast their call's budget, each long (control
     * characters) in {@link #longestDirectory}, and lists them; returns the listing's line.
     */
    private byte[] listRunning(Limits limits, int running) throws Exception {
        String cwd = longestDirectory();
        String command = "sleep 60 #" + "\u0001".repeat(Limits.COMMAND_BYTES - 100);
        Map<String, String> environment = Map.of("PATH", "/usr/bin:/bin");
        try (CommandRunner wideCommands = CommandRunner.under(limits, environment, IdleSweep.NONE);
                JobManager wideJobs = JobManager.under(limits, environment, IdleSweep.NONE);
                var calls = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            LocalTools many = ToolCatalog.local(new ToolCatalog.Parts(workspace, wideCommands, wideJobs, limits));
            var answers = java.util.stream.IntStream.range(0, running).mapToObj(i -> calls.submit(() -> many.execute(
                    "run_command", Map.of("command", command, "cwd", cwd, "timeout_seconds", 60), Progress.NONE))).toList();
            for (var answer : answers) {
                assertThat(answer.get().structured()).containsEntry("still_running", true);
            }
            ToolResponse listed = many.execute("list_jobs", Map.of(), Progress.NONE);
            assertThat(listed.error()).as(listed.text()).isFalse();
            assertThat((java.util.List<?>) listed.structured().get("jobs")).hasSize(running);
            return Protocol.encode(RunnerAgent.reply(9, listed));
        }
    }

    /**
     * A directory as long as a path may be, its first 1,023 characters control characters (four
     * levels of 255), the rest "/.": made in the workspace, named relative to it.
     */
    private String longestDirectory() throws java.io.IOException {
        String level = "\u0001".repeat(255);
        String directory = String.join("/", level, level, level, level);
        Files.createDirectories(root.resolve(directory));
        return directory + "/.".repeat((Names.MAX_PATH_CHARS - directory.length()) / 2);
    }

    private static final String COMMAND = "true #" + "\u0001".repeat(Limits.COMMAND_BYTES - 100);

    /** Starts as many jobs of {@link #COMMAND} in {@code cwd} as {@code limits} keeps, one after another, and lists them. */
    private static ToolResponse listEveryKeptJob(LocalTools tools, Limits limits, String cwd) throws InterruptedException {
        for (int i = 0; i < limits.keptJobs(); i++) {
            ToolResponse started = tools.execute("start_job", Map.of("command", COMMAND, "cwd", cwd), Progress.NONE);
            assertThat(started.error()).as(started.text()).isFalse();
            String id = (String) started.structured().get("id");
            while ((Boolean) tools.execute("job_output", Map.of("id", id), Progress.NONE).structured().get("running")) {
                Thread.sleep(10);
            }
        }
        ToolResponse listed = tools.execute("list_jobs", Map.of(), Progress.NONE);
        byte[] listing = Protocol.encode(RunnerAgent.reply(9, listed));
        System.out.printf("list_jobs of %d jobs, commands of %d control characters, in %s: line %d of %d%n",
                limits.keptJobs(), COMMAND.length(), cwd.length() + "-character directories", listing.length - 1, BOUND);
        assertThat(listing.length - 1).isLessThanOrEqualTo(BOUND);
        assertThat(listed.error()).as(listed.text()).isFalse();
        assertThat((java.util.List<?>) listed.structured().get("jobs")).hasSize(limits.keptJobs()).allSatisfy(job ->
                assertThat(((Map<?, ?>) job).get("command_chars")).isEqualTo(COMMAND.length()));
        return listed;
    }

    /** An answer past the bound (none of the tools gives one) goes as a tool error, not as a line the server would close the channel on. */
    @org.junit.jupiter.api.Test
    void anAnswerPastTheBoundGoesAsAToolError() {
        Protocol.Call call = new Protocol.Call(9, "read_file", Map.of(), false);
        byte[] over = Protocol.encode(RunnerAgent.reply(9, ToolResponse.success("x".repeat(BOUND), null, null, null)));
        assertThat(over.length).isGreaterThan(BOUND);
        byte[] sent = RunnerAgent.withinBound(call, over, BOUND);
        assertThat(new String(sent, StandardCharsets.UTF_8)).contains("\"error\":true")
                .contains("bytes as JSON, more than the " + BOUND);
        assertThat(RunnerAgent.withinBound(call, sent, BOUND)).isSameAs(sent);
    }
}
