package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container's out-of-memory count and limit, read from both cgroup layouts. The files are
 * written here as the kernel writes them (a stand-in: no test can make a memory cgroup without
 * privilege); the e2e OutOfMemoryTest reads the real ones in the deployment.
 */
class MemoryCgroupTest {

    @TempDir
    Path mount;

    private Path membership(String text) throws Exception {
        Path file = mount.resolveSibling(mount.getFileName() + ".cgroup");
        Files.writeString(file, text);
        return file;
    }

    @Test
    void version2InAContainerReadsTheRootOfTheMount() throws Exception {
        Files.writeString(mount.resolve("cgroup.controllers"), "cpu memory pids\n");
        Files.writeString(mount.resolve("memory.events"), "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n");
        Files.writeString(mount.resolve("memory.max"), "1073741824\n");
        MemoryCgroup cgroup = MemoryCgroup.find(mount, membership("0::/system.slice/docker-abc.scope\n"));
        assertThat(cgroup.oomKills()).isEqualTo(2);
        assertThat(cgroup.limitBytes()).isEqualTo(1L << 30);
    }

    @Test
    void version2OnAHostReadsItsOwnCgroupAndMaxIsNoLimit() throws Exception {
        Files.writeString(mount.resolve("cgroup.controllers"), "memory\n");
        Path own = Files.createDirectories(mount.resolve("user.slice/session-1.scope"));
        Files.writeString(own.resolve("memory.events"), "oom_kill 5\n");
        Files.writeString(own.resolve("memory.max"), "max\n");
        MemoryCgroup cgroup = MemoryCgroup.find(mount, membership("0::/user.slice/session-1.scope\n"));
        assertThat(cgroup.oomKills()).isEqualTo(5);
        assertThat(cgroup.limitBytes()).isNull();
    }

    @Test
    void version1ReadsTheMemoryHierarchy() throws Exception {
        Path memory = Files.createDirectories(mount.resolve("memory"));
        Files.writeString(memory.resolve("memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n");
        Files.writeString(memory.resolve("memory.limit_in_bytes"), "1073741824\n");
        MemoryCgroup cgroup = MemoryCgroup.find(mount,
                membership("12:pids:/docker/abc\n4:memory:/docker/abc\n1:name=systemd:/docker/abc\n"));
        assertThat(cgroup.oomKills()).isEqualTo(7);
        assertThat(cgroup.limitBytes()).isEqualTo(1L << 30);
    }

    @Test
    void version1UnlimitedIsNoLimit() throws Exception {
        Path memory = Files.createDirectories(mount.resolve("memory"));
        Files.writeString(memory.resolve("memory.limit_in_bytes"), "9223372036854771712\n");
        MemoryCgroup cgroup = MemoryCgroup.find(mount, membership("4:memory:/\n"));
        assertThat(cgroup.limitBytes()).isNull();
        assertThat(cgroup.oomKills()).as("a kernel without the counter").isEqualTo(-1);
    }
}
