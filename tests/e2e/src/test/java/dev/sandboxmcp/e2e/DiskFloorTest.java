package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The disk floor in the deployment, the workspace on a filesystem of its own: a 512 MiB tmpfs (of 200,000 inodes) the
 * test mounts over the deployment's workspace directory before compose starts the pair (the
 * bind mount then is the tmpfs), and unmounts once the pair is down. The floor is 192 MiB: room
 * for how far past it writers get on a loaded machine, which the test prints.
 */
@RequiresDocker
class DiskFloorTest {

    static final int WORKSPACE_MIB = 512;
    /** What the tmpfs holds, in files and directories: the floor keeps 192/512 of them free. */
    static final int WORKSPACE_INODES = 200_000;
    static final int FLOOR_INODES = 75_000;
    static final long MIB = 1 << 20;
    static final Map<String, String> FLOOR = Map.of("MCP_DISK_FLOOR_MIB", "192", "MCP_DISK_FLOOR_PERCENT", "0");
    static final Map<String, String> NO_FLOOR = Map.of("MCP_DISK_FLOOR_MIB", "0", "MCP_DISK_FLOOR_PERCENT", "0");
    /** Bounded, so that a workspace that is not the tmpfs after all cannot fill the host's disk. */
    static final String WRITER = "dd if=/dev/zero of=fill bs=1M count=" + 2 * WORKSPACE_MIB;

    @BeforeAll
    static void needsRoot() throws Exception {
        assumeTrue(Commands.run(List.of("id", "-u"), 10).output().strip().equals("0"),
                "mounting the workspace's tmpfs needs root (CI runs as root); run the e2e suite as root to include this");
    }

    @Test
    void aWriterAtFullSpeedIsStoppedWithSpaceLeftWhileAJobAndTheServerGoOn() throws Exception {
        List<Path> mounted = new ArrayList<>();
        try (ComposeDeployment deployment = ComposeDeployment.start("floor", workspace -> mount(workspace, mounted), FLOOR,
                List.of());
                McpSyncClient client = deployment.streamableClient()) {
            assertThat(Mcp.stdout(client, "stat -f -c %T /workspace")).isEqualTo("tmpfs\n");
            String ticker = (String) Mcp.call(client, "start_job",
                    Map.of("command", "while true; do echo tick; sleep 0.2; done")).get("id");

            CallToolResult stopped = client.callTool(new CallToolRequest("run_command",
                    Map.of("command", WRITER, "timeout_seconds", 60)));
            assertThat(text(stopped)).startsWith("stopped: /workspace had ")
                    .contains(" free, below the 192 MiB floor; free space, then run it again: exit code 1")
                    .doesNotContain("No space left");
            @SuppressWarnings("unchecked")
            Map<String, Object> floor = (Map<String, Object>) ((Map<String, Object>) stopped.structuredContent())
                    .get("disk_floor");
            assertThat(floor).containsEntry("path", "/workspace").containsEntry("floor_bytes", (int) (192 * MIB));
            long free = deployment.workspace.toFile().getUsableSpace();
            assertThat(free).as("free space left on the workspace").isGreaterThan(0);
            report("one dd", floor, free);

            // The job and the server go on; a command that writes nothing runs below the floor.
            assertThat(Mcp.call(client, "job_output", Map.of("id", ticker))).containsEntry("running", true)
                    .doesNotContainKey("disk_floor");
            assertThat(Mcp.stdout(client, "echo still here")).isEqualTo("still here\n");
            assertThat(deployment.pairHealthy()).isTrue();

            CallToolResult refused = client.callTool(new CallToolRequest("write_file",
                    Map.of("path", "notes.txt", "content", "a line\n")));
            assertThat(refused.isError()).isTrue();
            assertThat(text(refused)).startsWith("refused: /workspace has ").contains("below the 192 MiB floor")
                    .contains("nothing was written");
            assertThat(deployment.workspace.resolve("notes.txt")).doesNotExist();

            // Space freed, work goes on; several writers at once are stopped the same way.
            assertThat(Mcp.stdout(client, "rm fill; echo freed")).isEqualTo("freed\n");
            assertThat(Mcp.call(client, "write_file", Map.of("path", "notes.txt", "content", "a line\n")))
                    .containsEntry("bytes_written", 7);
            CallToolResult parallel = client.callTool(new CallToolRequest("run_command", Map.of("command",
                    "for i in 1 2 3 4; do dd if=/dev/zero of=fill$i bs=1M count=" + WORKSPACE_MIB + " 2>/dev/null & done; wait",
                    "timeout_seconds", 60)));
            assertThat(text(parallel)).startsWith("stopped: /workspace had ");
            @SuppressWarnings("unchecked")
            Map<String, Object> parallelFloor = (Map<String, Object>) ((Map<String, Object>) parallel.structuredContent())
                    .get("disk_floor");
            report("four dd in one command", parallelFloor, deployment.workspace.toFile().getUsableSpace());
            assertThat(deployment.workspace.toFile().getUsableSpace()).isGreaterThan(0);
            assertThat(Mcp.call(client, "job_output", Map.of("id", ticker))).containsEntry("running", true);

            // A writer a command leaves outside its tree (a session of its own, a cleared
            // environment): no tree to blame, and the idle sweep waits while the job runs. Not
            // stopped, it writes 562 MiB, more than the workspace holds.
            assertThat(Mcp.stdout(client, "rm -f fill*; echo freed")).isEqualTo("freed\n");
            assertThat(Mcp.stdout(client, "setsid env -i PATH=/usr/bin:/bin sh -c ': stray-writer; for i in $(seq 9000); "
                    + "do head -c 65536 /dev/zero >> /workspace/stray; done' </dev/null >/dev/null 2>&1 & "
                    // once it has left the session: until then it is the command's, killed when the command ends
                    + "sleep 1; pgrep -f 'stray-write[r]' >/dev/null && echo left"))
                    .isEqualTo("left\n");
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(90);
            while (!Mcp.stdout(client, "pgrep -f 'stray-write[r]' >/dev/null && echo running || echo gone").equals("gone\n")) {
                assertThat(System.nanoTime()).as("the stray writer still runs after 90 s").isLessThan(deadline);
                Thread.sleep(500);
            }
            long freeAfterStray = deployment.workspace.toFile().getUsableSpace();
            System.out.printf("disk floor in the deployment, a writer outside every tree: %.1f MiB below the 192 MiB floor "
                    + "once stopped%n", (192 * MIB - freeAfterStray) / (double) MIB);
            assertThat(freeAfterStray).as("free space left on the workspace").isGreaterThan(0);
            assertThat(ComposeDeployment.logs(deployment.runner)).contains("left running by one outside its tree");
            assertThat(Mcp.call(client, "job_output", Map.of("id", ticker))).containsEntry("running", true);

            // Empty files by the hundred thousand: the byte floor never sees them. The inode floor
            // (the same 37.5 percent of the tmpfs's inodes) stops every running command and job.
            CallToolResult files = client.callTool(new CallToolRequest("run_command", Map.of("command",
                    "mkdir many && cd many && i=0; while [ $i -lt " + 3 * WORKSPACE_INODES / 2 + " ]; do : > f$i; "
                            + "i=$((i+1)); done", "timeout_seconds", 120)));
            assertThat(text(files)).startsWith("stopped: /workspace had ").contains(" inodes free")
                    .contains("below the floor of " + FLOOR_INODES).doesNotContain("No space left");
            @SuppressWarnings("unchecked")
            Map<String, Object> inodeFloor = (Map<String, Object>) ((Map<String, Object>) files.structuredContent())
                    .get("disk_floor");
            assertThat(inodeFloor).containsEntry("path", "/workspace").containsEntry("floor_inodes", FLOOR_INODES);
            long freeInodes = Long.parseLong(Commands.run(List.of("stat", "-f", "-c", "%d", deployment.workspace.toString()),
                    10).output().strip());
            System.out.printf("inode floor in the deployment, one shell making empty files: seen %d below the floor of %d, "
                    + "%d below once stopped%n", FLOOR_INODES - ((Number) inodeFloor.get("free_inodes")).longValue(),
                    FLOOR_INODES, FLOOR_INODES - freeInodes);
            assertThat(freeInodes).as("inodes left on the workspace").isGreaterThan(0);
            assertThat(Mcp.call(client, "job_output", Map.of("id", ticker))).containsEntry("running", false)
                    .containsKey("disk_floor");
            assertThat(Mcp.stdout(client, "rm -r many; echo removed")).isEqualTo("removed\n");
            assertThat(ComposeDeployment.logs(deployment.runner)).contains("below its " + FLOOR_INODES + "-inode floor");
        } finally {
            unmount(mounted);
        }
    }

    @Test
    void withTheFloorOffTheWriterFillsTheWorkspaceAsBefore() throws Exception {
        List<Path> mounted = new ArrayList<>();
        try (ComposeDeployment deployment = ComposeDeployment.start("nofloor", workspace -> mount(workspace, mounted),
                NO_FLOOR, List.of());
                McpSyncClient client = deployment.streamableClient()) {
            assertThat(Mcp.stdout(client, "stat -f -c %T /workspace")).isEqualTo("tmpfs\n");
            assertThat(client.listTools().tools()).allSatisfy(tool -> assertThat(tool.description()).doesNotContain("floor"));
            Map<String, Object> filled = Mcp.run(client, WRITER, 60);
            assertThat(filled).containsEntry("exit_code", 1).doesNotContainKey("disk_floor");
            assertThat((String) filled.get("stderr")).contains("No space left on device");
            assertThat(deployment.workspace.toFile().getUsableSpace()).isZero();
        } finally {
            unmount(mounted);
        }
    }

    static String text(CallToolResult result) {
        return ((TextContent) result.content().getFirst()).text();
    }

    /** How far below the floor a stop came: when it was seen, and once everything was written. */
    static void report(String what, Map<String, Object> floor, long freeAfter) {
        long floorBytes = ((Number) floor.get("floor_bytes")).longValue();
        long seen = ((Number) floor.get("free_bytes")).longValue();
        System.out.printf("disk floor in the deployment, %s on a %d MiB tmpfs: seen %.1f MiB below the %d MiB floor, "
                + "%.1f MiB below once stopped%n", what, WORKSPACE_MIB, (floorBytes - seen) / (double) MIB, floorBytes / MIB,
                (floorBytes - freeAfter) / (double) MIB);
    }

    static void mount(Path workspace, List<Path> mounted) throws Exception {
        Commands.Result mount = Commands.run(List.of("mount", "-t", "tmpfs", "-o", "size=" + WORKSPACE_MIB + "m,nr_inodes="
                + WORKSPACE_INODES + ",mode=0755",
                "tmpfs", workspace.toString()), 30);
        assertThat(mount.exitCode()).as(mount.output()).isZero();
        mounted.add(workspace);
    }

    /** After compose down: the deployment emptied the directory and could not remove the mount point. */
    static void unmount(List<Path> mounted) throws Exception {
        for (Path path : mounted) {
            Commands.Result umount = Commands.run(List.of("umount", path.toString()), 30);
            assertThat(umount.exitCode()).as(umount.output()).isZero();
            Files.deleteIfExists(path);
        }
    }
}
