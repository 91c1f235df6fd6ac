package dev.sandboxmcp.workspace;

import dev.sandboxmcp.workspace.OpenAt.Access;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Optional;
import java.util.Set;

/**
 * An open directory, held twice over the same inode: the descriptor that {@link OpenAt} opens
 * relative to, and a {@link SecureDirectoryStream} for everything {@code java.nio} does
 * without waiting (lstat, list, rename, delete).
 */
record Directory(int fd, SecureDirectoryStream<Path> stream) implements AutoCloseable {

    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

    static Directory open(int dirFd, String name, Access access) throws IOException {
        int fd = OpenAt.open(dirFd, name, access);
        try {
            DirectoryStream<Path> stream = Files.newDirectoryStream(OpenAt.path(fd));
            if (stream instanceof SecureDirectoryStream<Path> secure) {
                return new Directory(fd, secure);
            }
            stream.close();
            throw new IOException("this platform has no SecureDirectoryStream (openat); refusing to serve files");
        } catch (IOException | RuntimeException e) {
            OpenAt.close(fd);
            throw e;
        }
    }

    /** What the entry {@code name} is, the link itself when it is one; empty when there is none. */
    Optional<BasicFileAttributes> attributes(String name) throws IOException {
        return attributes(Path.of(name));
    }

    /**
     * As {@link #attributes(String)}, the entry named by a path this directory's stream gave
     * (which keeps a name's bytes as they are, also where they are not UTF-8).
     */
    Optional<BasicFileAttributes> attributes(Path name) throws IOException {
        try {
            return Optional.of(stream.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW)
                    .readAttributes());
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** As {@link #attributes}, with an unreadable entry taken for a missing one. */
    Optional<BasicFileAttributes> attributesQuietly(String name) {
        try {
            return attributes(name);
        } catch (IOException unreadable) {
            return Optional.empty();
        }
    }

    /** The permission bits of the entry {@code name}, when the file system has them. */
    Optional<Set<PosixFilePermission>> permissions(String name) {
        try {
            return Optional.of(stream.getFileAttributeView(Path.of(name), PosixFileAttributeView.class, NOFOLLOW)
                    .readAttributes().permissions());
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    /** The text of the link {@code name} in this directory, read relative to it. */
    String readLink(String name) throws IOException {
        return readLink(Path.of(name));
    }

    /** As {@link #readLink(String)}, the entry named by a path this directory's stream gave. */
    String readLink(Path name) throws IOException {
        return Files.readSymbolicLink(OpenAt.path(fd).resolve(name)).toString();
    }

    /** Whether this directory's entries make it a git directory ({@link ProtectedPaths#looksLikeGitDirectory}). */
    boolean isGitDirectory() {
        return ProtectedPaths.looksLikeGitDirectory(entry -> attributesQuietly(entry).isPresent());
    }

    @Override
    public void close() {
        try {
            stream.close();
        } catch (IOException ignored) {
            // closing a directory handle we opened; nothing to recover
        }
        OpenAt.close(fd);
    }
}
