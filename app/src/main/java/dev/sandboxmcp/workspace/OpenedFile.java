package dev.sandboxmcp.workspace;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.attribute.FileTime;

/**
 * A regular file opened for reading, and what it was when it was opened: its identity (device
 * and inode, as {@link java.nio.file.attribute.BasicFileAttributes#fileKey}), size, modification
 * time and status-change time, read from the open descriptor. A reader that keeps to {@code size}
 * sees one version of a file that grows while it is read. The status-change time ({@code ctime})
 * is the one no command can set back: a file rewritten to the same size with its old modification
 * time restored ({@code touch -d}) still reads as another version.
 */
public record OpenedFile(FileChannel channel, Object fileKey, long size, FileTime modified, FileTime changed)
        implements Closeable {

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
