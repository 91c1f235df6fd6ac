package dev.sandboxmcp.workspace;

import dev.sandboxmcp.workspace.OpenAt.Access;
import dev.sandboxmcp.workspace.WorkspaceException.Change;
import dev.sandboxmcp.workspace.WorkspaceException.Changed;
import dev.sandboxmcp.workspace.WorkspaceException.Failed;
import dev.sandboxmcp.workspace.WorkspaceException.NotSynced;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;

/**
 * Replacing a file's content so that a reader, or a crash, sees the old content or the new, never
 * a mix: the bytes go to a new temporary file in the same directory and are synced, the temporary
 * file is renamed over the target, and the directory is synced so the rename survives too.
 */
final class AtomicReplace {

    private static final SecureRandom RANDOM = new SecureRandom();

    private AtomicReplace() {
    }

    /**
     * Replaces {@code target} with {@code content}, giving it {@code mode} when not null. With
     * {@code expected} not null, only while the target still holds exactly those bytes, checked
     * just before the rename.
     */
    static void replace(Walk.Target target, byte[] content, Set<PosixFilePermission> mode,
            byte[] expected) throws IOException {
        Directory dir = target.dir();
        String name = target.requested();
        String temp = ".sandbox-mcp-" + HexFormat.of().toHexDigits(RANDOM.nextLong()) + ".tmp";
        boolean created = false;
        boolean renamed = false;
        try {
            int fd = OpenAt.open(dir.fd(), temp, Access.CREATE_NEW);
            created = true;
            try {
                // Through the descriptor, not the name: a command may already have swapped the name.
                if (mode != null) {
                    Files.setPosixFilePermissions(OpenAt.path(fd), mode);
                }
                try (FileChannel channel = FileChannel.open(OpenAt.path(fd), Access.CREATE_NEW.reopen)) {
                    ChannelBytes.writeFully(channel, content);
                    channel.force(true);
                }
            } finally {
                OpenAt.close(fd);
            }
            if (expected != null && !holds(target, expected)) {
                throw new WorkspaceException(target.op(), name, new Changed(Change.CONTENT));
            }
            dir.stream().move(Path.of(temp), dir.stream(), Path.of(target.name()));
            renamed = true;
        } catch (WorkspaceException e) {
            throw e;
        } catch (IOException e) {
            String detail = e instanceof FileSystemException fse && fse.getReason() != null ? fse.getReason() : e.toString();
            throw new WorkspaceException(target.op(), name, new Failed(detail), e);
        } finally {
            if (created && !renamed) {
                try {
                    dir.stream().deleteFile(Path.of(temp));
                } catch (IOException ignored) {
                    // already gone
                }
            }
        }
        syncDirectory(target);
    }

    /** Whether the target is still a regular file with exactly {@code expected} as its content. */
    private static boolean holds(Walk.Target target, byte[] expected) throws IOException {
        Optional<BasicFileAttributes> now = target.attributes();
        if (now.isEmpty() || !now.get().isRegularFile() || now.get().size() != expected.length) {
            return false;
        }
        try (FileChannel channel = target.open(Access.READ)) {
            return Arrays.equals(ChannelBytes.readAtMost(channel, expected.length), expected);
        } catch (WorkspaceException | OpenAt.Failure swappedOrRemoved) {
            return false;
        }
    }

    /** Makes a rename or a new name in {@code dir} survive a power loss, not only the bytes. */
    static void syncDirectory(Walk.Target target) throws WorkspaceException {
        try (SeekableByteChannel channel = target.dir().stream().newByteChannel(Path.of("."), Set.of(StandardOpenOption.READ))) {
            if (channel instanceof FileChannel directory) {
                directory.force(true);
            }
        } catch (IOException e) {
            throw new WorkspaceException(target.op(), target.requested(), new NotSynced(e.toString()), e);
        }
    }
}
