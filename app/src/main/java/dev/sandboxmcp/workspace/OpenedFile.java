package dev.sandboxmcp.workspace;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.attribute.FileTime;

/**
 * A regular file opened for reading, and what it was when it was opened: its identity (device
 * and inode, as {@link java.nio.file.attribute.BasicFileAttributes#fileKey}), size and
 * modification time, read from the open descriptor. A reader that keeps to {@code size} sees one
 * version of a file that grows while it is read.
 */
public record OpenedFile(FileChannel channel, Object fileKey, long size, FileTime modified) implements Closeable {

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
