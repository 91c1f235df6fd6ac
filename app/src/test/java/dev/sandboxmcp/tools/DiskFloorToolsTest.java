package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.SmallTmpfs;
import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.DiskFloor;
import dev.sandboxmcp.exec.DiskFloorWatch;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.workspace.Workspace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the assistant reads of the disk floor, on a workspace of 256 MiB with a floor of 16 MiB:
 * write_file and edit_file refuse and change nothing, a stopped command and a stopped job say
 * what to do, and the descriptions name the floor (and do not, with none).
 */
class DiskFloorToolsTest {

    static final int MIB = 1 << 20;
    static final Map<String, String> ENVIRONMENT = Map.of("PATH", "/usr/bin:/bin");
    /**
     * Writes the workspace full a mebibyte at a time, a process each (a few hundred MB/s at
     * most): what the stop says is asserted here, not how fast it comes, which DiskFloorWatchTest
     * measures. A single dd fills this small tmpfs in under 100 ms, and a busy machine can let it
     * end with "no space left" just before the stop reaches it.
     */
    static final String STEADY_WRITER = "while :; do dd if=/dev/zero bs=1M count=1 status=none || exit; done > fill";

    @TempDir
    Path temp;
    SmallTmpfs disk;
    Limits limits;
    Workspace workspace;

    @BeforeEach
    void setUp() throws Exception {
        disk = SmallTmpfs.mount(temp, 256);
        limits = limits("16", "0");
        workspace = Workspace.open(disk.path);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (workspace != null) {
            workspace.close();
        }
        if (disk != null) {
            disk.close();
        }
    }

    static Limits limits(String mebibytes, String percent) throws Exception {
        return Limits.fromEnvironment(Map.of("MCP_DISK_FLOOR_MIB", mebibytes, "MCP_DISK_FLOOR_PERCENT", percent));
    }

    static ToolResponse call(SandboxTool tool, Map<String, Object> arguments) {
        return ToolCalls.call(tool, arguments);
    }

    /** Leaves {@code free} bytes free on the workspace, give or take a page. */
    void fillUntil(long free) throws Exception {
        long bytes = disk.free() - free;
        byte[] chunk = new byte[MIB];
        try (var out = Files.newOutputStream(disk.path.resolve("filler-" + System.nanoTime()))) {
            for (long left = bytes; left > 0; left -= chunk.length) {
                out.write(chunk, 0, (int) Math.min(left, chunk.length));
            }
        }
    }

    @Test
    void writeFileRefusesWhatWouldGoBelowTheFloorAndWritesWhatFits() throws Exception {
        WriteFileTool write = new WriteFileTool(workspace, limits);
        fillUntil(16 * MIB + 600 * 1024);
        assertThat(call(write, Map.of("path", "fits.txt", "content", "x".repeat(500 * 1024))).error()).isFalse();

        ToolResponse refused = call(write, Map.of("path", "big.txt", "content", "x".repeat(200 * 1024)));
        assertThat(refused.error()).isTrue();
        assertThat(refused.text()).startsWith("refused: writing 200 KiB would leave " + disk.path
                + " with less than its 16 MiB floor free").contains("nothing was written").contains("Free space");
        assertThat(disk.path.resolve("big.txt")).doesNotExist();
    }

    @Test
    void belowTheFloorWriteAndEditRefuseAndChangeNothing() throws Exception {
        Files.writeString(disk.path.resolve("a.txt"), "old\n");
        fillUntil(15 * MIB);
        ToolResponse write = call(new WriteFileTool(workspace, limits), Map.of("path", "a.txt", "content", "new\n",
                "append", true));
        assertThat(write.error()).isTrue();
        assertThat(write.text()).matches("refused: " + disk.path + " has 1[45](\\.[0-9])? MiB free, below the 16 MiB floor; "
                + "nothing was written\\. Free space .*, then try again");
        ToolResponse edit = call(new EditFileTool(workspace, limits), Map.of("path", "a.txt", "old_text", "old",
                "new_text", "new"));
        assertThat(edit.error()).isTrue();
        assertThat(edit.text()).contains("below the 16 MiB floor").contains("nothing was changed");
        assertThat(disk.path.resolve("a.txt")).hasContent("old");
    }

    @Test
    void aCommandAndAJobStoppedAtTheFloorSayWhyAndWhatToDo() throws Exception {
        CommandRunner commands = new CommandRunner(ENVIRONMENT, 64 * 1024, Duration.ofSeconds(1), 2);
        JobManager jobs = new JobManager(ENVIRONMENT, 64 * 1024, Duration.ofSeconds(1), 2, 8);
        try (DiskFloorWatch watch = DiskFloorWatch.start(new DiskFloor(16L * MIB, 0), List.of(disk.path), commands, jobs, false)) {
            ToolResponse result = call(new RunCommandTool(commands, jobs, workspace, limits), Map.of("command", STEADY_WRITER));
            assertThat(result.text()).startsWith("stopped: " + disk.path + " had ").containsPattern(
                    " free, below the 16 MiB floor; free space, then run it again: exit code 1(37|43) after [0-9]+ ms\n");
            @SuppressWarnings("unchecked")
            Map<String, Object> floor = (Map<String, Object>) result.structured().get("disk_floor");
            assertThat(floor).containsEntry("path", disk.path.toString()).containsEntry("floor_bytes", 16L * MIB);
            assertThat((long) floor.get("free_bytes")).isLessThan(16L * MIB);

            Files.delete(disk.path.resolve("fill"));
            ToolResponse started = call(new StartJobTool(jobs, workspace, limits), Map.of("command", STEADY_WRITER));
            String id = (String) started.structured().get("id");
            ToolResponse output = call(new JobOutputTool(jobs, limits), Map.of("id", id));
            for (int i = 0; i < 300 && Boolean.TRUE.equals(output.structured().get("running")); i++) {
                Thread.sleep(20);
                output = call(new JobOutputTool(jobs, limits), Map.of("id", id));
            }
            assertThat(output.text()).containsPattern("^" + id + " stopped: " + disk.path + " had [0-9.]+ MiB free, below the "
                    + "16 MiB floor; free space, then run it again, with code 1(37|43) after ");
            assertThat(output.structured()).containsKey("disk_floor").containsEntry("stopped", false);
        } finally {
            jobs.close();
            commands.close();
        }
    }

    @Test
    void theDescriptionsNameTheFloorAndWithNoneSayNothingOfIt() throws Exception {
        assertThat(WriteFileTool.spec(Limits.defaults()).description())
                .contains("disk floor (the larger of 2 GiB and 5 percent of the filesystem)");
        assertThat(EditFileTool.spec(Limits.defaults()).description()).contains("disk floor");
        assertThat(RunCommandTool.spec(Limits.defaults()).description()).contains("the command writing is stopped");
        assertThat(StartJobTool.spec(Limits.defaults()).description()).contains("disk floor");
        assertThat(RunCommandTool.spec(limits("16", "0")).description()).contains("disk floor of free space (16 MiB)");
        Limits off = limits("0", "0");
        for (ToolSpec spec : List.of(WriteFileTool.spec(off), EditFileTool.spec(off), RunCommandTool.spec(off),
                StartJobTool.spec(off))) {
            assertThat(spec.description()).as(spec.name()).doesNotContain("floor");
        }
    }

    @Test
    void sizesAreCutNeverRoundedUp() {
        assertThat(Endings.bytes((2L << 30) - 1)).isEqualTo("1.9 GiB");
        assertThat(Endings.bytes(2L << 30)).isEqualTo("2 GiB");
        assertThat(Endings.bytes(1536L << 20)).isEqualTo("1.5 GiB");
        assertThat(Endings.bytes(512 * 1024)).isEqualTo("512 KiB");
        assertThat(Endings.bytes(1023)).isEqualTo("1023 bytes");
    }
}
