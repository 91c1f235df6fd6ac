package dev.sandboxmcp;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A filesystem of a fixed size for a test to fill: a tmpfs mounted in a directory of the test's
 * own, unmounted (and the directory removed) on close. Mounting needs root, which CI has; as
 * any other user the test is skipped, and says why.
 */
public final class SmallTmpfs implements AutoCloseable {

    public final Path path;

    private SmallTmpfs(Path path) {
        this.path = path;
    }

    /** A tmpfs of {@code mebibytes} in a new directory under {@code parent}, owned by {@code uid:gid}. */
    public static SmallTmpfs mount(Path parent, int mebibytes, int uid, int gid) throws IOException, InterruptedException {
        return mount(parent, "size=" + mebibytes + "m,mode=0755,uid=" + uid + ",gid=" + gid);
    }

    /** A tmpfs of {@code mebibytes} that holds at most {@code inodes} files and directories, its root included. */
    public static SmallTmpfs mountWithInodes(Path parent, int mebibytes, int inodes) throws IOException, InterruptedException {
        return mount(parent, "size=" + mebibytes + "m,nr_inodes=" + inodes + ",mode=0755");
    }

    private static SmallTmpfs mount(Path parent, String options) throws IOException, InterruptedException {
        assumeTrue("0".equals(run(List.of("id", "-u")).strip()),
                "mounting a tmpfs of a fixed size needs root (CI runs as root); run the tests as root to include this");
        Path path = Files.createTempDirectory(parent, "small-fs-");
        String output = run(List.of("mount", "-t", "tmpfs", "-o", options, "tmpfs", path.toString()));
        if (!Files.isDirectory(path) || !run(List.of("findmnt", "-n", "-o", "FSTYPE", path.toString())).contains("tmpfs")) {
            throw new IOException("mount -t tmpfs -o " + options + " " + path + " failed: " + output);
        }
        return new SmallTmpfs(path);
    }

    public static SmallTmpfs mount(Path parent, int mebibytes) throws IOException, InterruptedException {
        return mount(parent, mebibytes, 0, 0);
    }

    /** Free space as the runner's user sees it (statvfs f_bavail). */
    public long free() {
        return path.toFile().getUsableSpace();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        run(List.of("umount", "-l", path.toString()));
        Files.deleteIfExists(path);
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        process.waitFor(30, TimeUnit.SECONDS);
        return output;
    }
}
