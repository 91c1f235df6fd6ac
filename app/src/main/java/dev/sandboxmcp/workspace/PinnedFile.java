package dev.sandboxmcp.workspace;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * A regular file held open so that another program reads exactly it: {@link #path} names the
 * open descriptor in {@code /proc/<this process>/fd}, which the kernel resolves to the inode that
 * was opened, whatever has become of its name since (a directory above it exchanged for another,
 * the file renamed over). The program must run as this process's user while it is open.
 */
public final class PinnedFile implements Closeable {

    private final int fd;

    PinnedFile(int fd) {
        this.fd = fd;
    }

    /** The descriptor as another process of this user opens it. */
    public Path path() {
        return Path.of("/proc/" + ProcessHandle.current().pid() + "/fd/" + fd);
    }

    /** What the file is now, read from the descriptor: identity, size, modification and change time. */
    public Stat stat() throws IOException {
        BasicFileAttributes attrs = Files.readAttributes(OpenAt.path(fd), BasicFileAttributes.class);
        return new Stat(String.valueOf(attrs.fileKey()), attrs.size(), attrs.lastModifiedTime(),
                (FileTime) Files.getAttribute(OpenAt.path(fd), "unix:ctime"));
    }

    /** A pinned file's identity (device and inode), size and times. */
    public record Stat(String fileKey, long size, FileTime modified, FileTime changed) {
    }

    @Override
    public void close() {
        OpenAt.close(fd);
    }
}
