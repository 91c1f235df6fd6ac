package dev.sandboxmcp.workspace;

import static dev.sandboxmcp.workspace.WorkspaceException.Reason.CHANGED;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.ESCAPES_WORKSPACE;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.INVALID_PATH;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.IO_ERROR;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.IS_DIRECTORY;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.NOT_A_DIRECTORY;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.NOT_A_REGULAR_FILE;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.NOT_FOUND;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.PARENT_MISSING;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.PERMISSION_DENIED;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.TOO_LARGE;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.TOO_MANY_LINKS;

import dev.sandboxmcp.workspace.OpenAt.Access;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A directory tree that file operations cannot leave: the {@code os.Root} of this project.
 *
 * <p>Names are relative paths beneath the root. They are resolved one component at a time
 * from open directory handles ({@code openat} with {@code O_NOFOLLOW}, and a
 * {@link SecureDirectoryStream} over each), never by handing a whole path string to the operating
 * system. {@code ..} and symbolic links are followed while they stay inside the root; a {@code ..}
 * above the root, an absolute link target, or a link whose target leaves the root is refused.
 * Because each step opens the next directory relative to the one before without following links,
 * and reads link text relative to it too, a directory swapped for a symlink during an operation
 * cannot redirect it outside.
 *
 * <p>No operation waits on what it finds: every open is made so that it returns at once whatever
 * the name has become by then (see {@link OpenAt}), and a file's type is checked on the open
 * descriptor, so a FIFO or device swapped in after a check is refused instead of blocking the
 * server.
 *
 * <p>Limits, as with {@code os.Root}: bind mounts and hard links inside the root that point
 * elsewhere are not detected, and {@code /proc}-style magic links are not special. Linux only
 * (the opens go through {@code /proc/self/fd}).
 */
public final class Workspace implements Closeable {

    private static final int MAX_LINKS_FOLLOWED = 40;
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path rootPath;
    private final Directory root;

    private Workspace(Path rootPath, Directory root) {
        this.rootPath = rootPath;
        this.root = root;
    }

    /** Opens the directory at {@code rootPath}; it must exist and be a directory. */
    public static Workspace open(Path rootPath) throws IOException {
        Path absolute = rootPath.toAbsolutePath().normalize();
        if (!Files.isDirectory(absolute)) {
            throw new WorkspaceException(NOT_A_DIRECTORY, "workspace " + absolute + " is not a directory");
        }
        return new Workspace(absolute.toRealPath(), Directory.open(OpenAt.AT_FDCWD, absolute.toString(), Access.ROOT));
    }

    /** The real path of the root directory. */
    public Path root() {
        return rootPath;
    }

    /** Reads a whole regular file of at most {@code maxBytes} bytes. */
    public byte[] readFile(String name, int maxBytes) throws IOException {
        try (SeekableByteChannel channel = openRegularFile(name)) {
            if (channel.size() > maxBytes) {
                throw tooLarge(name, channel.size(), maxBytes);
            }
            return readAtMost(channel, name, maxBytes);
        }
    }

    /** Opens a regular file for reading, whatever its size; the caller closes the stream. */
    public InputStream openFile(String name) throws IOException {
        return Channels.newInputStream(openRegularFile(name));
    }

    /** Opens a regular file for reading at any position (reading from its end); the caller closes it. */
    public SeekableByteChannel openFileChannel(String name) throws IOException {
        return openRegularFile(name);
    }

    /** Opens a regular file for reading at any position, with its identity, size and modification time. */
    public OpenedFile openFileVersion(String name) throws IOException {
        try (Walk walk = walk(name)) {
            Target target = walk.requireFinalName(name);
            BasicFileAttributes attrs = target.attributes()
                    .orElseThrow(() -> new WorkspaceException(NOT_FOUND, "no such file: " + Names.quoted(name)));
            requireRegularFile(name, attrs);
            return target.openVersion(name);
        } catch (FileSystemException e) {
            throw translate(name, e);
        }
    }

    private SeekableByteChannel openRegularFile(String name) throws IOException {
        return openFileVersion(name).channel();
    }

    /** What a directory listing shows of one entry; links are reported, never followed. */
    public record Entry(String path, Kind kind, long size, String linkTarget) {

        /** What an entry is, as lstat sees it. */
        public enum Kind { FILE, DIRECTORY, SYMLINK, OTHER }
    }

    /** A listing, and whether the entry cap cut it short. */
    public record Listing(List<Entry> entries, boolean truncated) {
    }

    /**
     * Lists a directory beneath the workspace, {@code depth} levels deep (1 is the directory's own
     * entries), sorted by name, at most {@code maxEntries} entries. Symbolic links are listed with
     * their target text and not descended into, so a listing never leaves the workspace.
     */
    public Listing list(String name, int depth, boolean includeHidden, int maxEntries) throws IOException {
        String path = name == null || name.isEmpty() ? "." : name;
        try (Walk walk = walk(path); Directory dir = walk.openDirectory(path)) {
            List<Entry> entries = new ArrayList<>();
            boolean complete = listInto(dir, "", depth, includeHidden, maxEntries, entries);
            return new Listing(List.copyOf(entries), !complete);
        } catch (FileSystemException e) {
            throw translate(path, e);
        }
    }

    /** Adds entries of {@code dir}; false when the cap was reached. */
    private static boolean listInto(Directory dir, String prefix, int depth, boolean includeHidden, int maxEntries,
            List<Entry> entries) throws IOException {
        List<String> names = new ArrayList<>();
        for (Path child : dir.stream()) {
            String childName = child.getFileName().toString();
            if (includeHidden || !childName.startsWith(".")) {
                names.add(childName);
            }
        }
        names.sort(null);
        for (String childName : names) {
            if (entries.size() >= maxEntries) {
                return false;
            }
            Optional<BasicFileAttributes> attrs = lstat(dir, childName);
            if (attrs.isEmpty()) {
                continue; // removed while we listed
            }
            BasicFileAttributes a = attrs.get();
            String path = prefix + childName;
            if (a.isSymbolicLink()) {
                String target;
                try {
                    target = dir.readLink(childName);
                } catch (IOException e) {
                    target = "?";
                }
                entries.add(new Entry(path, Entry.Kind.SYMLINK, a.size(), target));
            } else if (a.isDirectory()) {
                entries.add(new Entry(path, Entry.Kind.DIRECTORY, 0, null));
                if (depth > 1) {
                    try (Directory sub = Directory.open(dir.fd(), childName, Access.DIRECTORY)) {
                        if (!listInto(sub, path + "/", depth - 1, includeHidden, maxEntries, entries)) {
                            return false;
                        }
                    } catch (FileSystemException replacedOrUnreadable) {
                        // swapped for a link or a FIFO, or not readable: listed, not descended into
                    }
                }
            } else {
                entries.add(new Entry(path, a.isRegularFile() ? Entry.Kind.FILE : Entry.Kind.OTHER, a.size(), null));
            }
        }
        return true;
    }

    /**
     * Replaces the file's content atomically: the bytes go to a temporary file in the same
     * directory and are synced, the temporary file is renamed over the target, and the directory
     * is synced. A reader sees the old content or the new, never a mix; an existing file keeps
     * its permission bits.
     */
    public void writeFile(String name, byte[] content) throws IOException {
        writeFile(name, content, null);
    }

    /**
     * As {@link #writeFile(String, byte[])}, but only while the file still holds {@code expected}
     * (what the caller read and changed): just before the rename its content is compared again,
     * and a file that changed in between is left as it is, with
     * {@link WorkspaceException.Reason#CHANGED}. A writer that slips into the microseconds between
     * that check and the rename is not caught.
     */
    public void replaceIfUnchanged(String name, byte[] expected, byte[] content) throws IOException {
        writeFile(name, content, expected);
    }

    private void writeFile(String name, byte[] content, byte[] expected) throws IOException {
        try (Walk walk = walk(name)) {
            Target target = walk.requireFinalName(name);
            walk.refuseProtected();
            Optional<BasicFileAttributes> existing = target.attributes();
            if (existing.isPresent()) {
                requireRegularFile(name, existing.get());
            }
            Set<PosixFilePermission> mode = existing.isPresent()
                    ? permissions(target.dir(), target.name()).orElse(null)
                    : null;
            replace(target, name, content, mode, expected);
        } catch (FileSystemException e) {
            throw translate(name, e);
        }
    }

    /** Appends to the file, creating it when it does not exist. */
    public void appendFile(String name, byte[] content) throws IOException {
        try (Walk walk = walk(name)) {
            Target target = walk.requireFinalName(name);
            walk.refuseProtected();
            Optional<BasicFileAttributes> existing = target.attributes();
            if (existing.isPresent()) {
                requireRegularFile(name, existing.get());
            }
            try (FileChannel channel = target.open(name, Access.APPEND)) {
                writeFully(channel, content);
                channel.force(true);
            }
            if (existing.isEmpty()) {
                syncDirectory(target.dir(), name);
            }
        } catch (FileSystemException e) {
            throw translate(name, e);
        }
    }

    /**
     * Resolves {@code name} to a directory inside the workspace and returns its real path, for
     * use as a working directory. An empty name or {@code .} is the root itself.
     */
    public Path resolveDirectory(String name) throws IOException {
        if (name.isEmpty() || name.equals(".")) {
            return rootPath;
        }
        try (Walk walk = walk(name)) {
            return walk.realPath().resolve(walk.requireDirectory(name)).normalize();
        }
    }

    @Override
    public void close() throws IOException {
        root.close();
    }

    private void replace(Target target, String name, byte[] content, Set<PosixFilePermission> mode, byte[] expected)
            throws IOException {
        Directory dir = target.dir();
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
                    writeFully(channel, content);
                    channel.force(true);
                }
            } finally {
                OpenAt.close(fd);
            }
            if (expected != null && !holds(target, expected)) {
                throw new WorkspaceException(CHANGED, Names.quoted(name) + " changed while it was being edited (a command "
                        + "or another call wrote it); nothing was written. Read it again and repeat the edit.");
            }
            dir.stream().move(Path.of(temp), dir.stream(), Path.of(target.name()));
            renamed = true;
        } catch (WorkspaceException e) {
            throw e;
        } catch (IOException e) {
            String detail = e instanceof FileSystemException fse && fse.getReason() != null ? fse.getReason() : e.toString();
            throw new WorkspaceException(IO_ERROR,
                    "could not write " + Names.quoted(name) + ": " + detail + "; the file was left unchanged", e);
        } finally {
            if (created && !renamed) {
                try {
                    dir.stream().deleteFile(Path.of(temp));
                } catch (IOException ignored) {
                    // already gone
                }
            }
        }
        syncDirectory(dir, name);
    }

    /** Whether the target is still a regular file with exactly {@code expected} as its content. */
    private static boolean holds(Target target, byte[] expected) throws IOException {
        Optional<BasicFileAttributes> now = target.attributes();
        if (now.isEmpty() || !now.get().isRegularFile() || now.get().size() != expected.length) {
            return false;
        }
        try (FileChannel channel = target.open(target.name(), Access.READ)) {
            return Arrays.equals(readAtMost(channel, target.name(), expected.length), expected);
        } catch (WorkspaceException | OpenAt.Failure swappedRemovedOrGrown) {
            return false;
        }
    }

    /** Makes a rename or a new name in {@code dir} survive a power loss, not only the bytes. */
    private static void syncDirectory(Directory dir, String name) throws WorkspaceException {
        try (SeekableByteChannel channel = dir.stream().newByteChannel(Path.of("."), Set.of(StandardOpenOption.READ))) {
            if (channel instanceof FileChannel directory) {
                directory.force(true);
            }
        } catch (IOException e) {
            throw new WorkspaceException(IO_ERROR, "wrote " + Names.quoted(name)
                    + ", but its directory could not be synced to disk, so the change may not survive a crash: " + e, e);
        }
    }

    private Walk walk(String name) throws WorkspaceException {
        List<String> parts = validate(name);
        Walk walk = new Walk(name);
        try {
            walk.resolve(parts);
            return walk;
        } catch (IOException | RuntimeException e) {
            walk.close();
            if (e instanceof WorkspaceException we) {
                throw we;
            }
            if (e instanceof FileSystemException fse) {
                throw translate(name, fse);
            }
            throw new WorkspaceException(IO_ERROR, "could not resolve " + Names.quoted(name) + ": " + e.getMessage(), e);
        }
    }

    private static List<String> validate(String name) throws WorkspaceException {
        if (name == null || name.isEmpty()) {
            throw new WorkspaceException(INVALID_PATH, "path is empty; give a path relative to the workspace, e.g. 'src/Main.java'");
        }
        if (name.indexOf('\0') >= 0) {
            throw new WorkspaceException(INVALID_PATH, "path contains a NUL byte");
        }
        if (name.startsWith("/")) {
            throw new WorkspaceException(INVALID_PATH, "absolute paths are not accepted: " + Names.quoted(name)
                    + "; give a path relative to the workspace root");
        }
        return splitComponents(name);
    }

    private static List<String> splitComponents(String path) {
        List<String> parts = new ArrayList<>();
        for (String part : path.split("/")) {
            if (!part.isEmpty() && !part.equals(".")) {
                parts.add(part);
            }
        }
        return parts;
    }

    private static void requireRegularFile(String name, BasicFileAttributes attrs) throws WorkspaceException {
        if (attrs.isDirectory()) {
            throw new WorkspaceException(IS_DIRECTORY, Names.quoted(name) + " is a directory, not a file");
        }
        if (!attrs.isRegularFile()) {
            throw new WorkspaceException(NOT_A_REGULAR_FILE,
                    Names.quoted(name) + " is not a regular file (a device, socket or FIFO)");
        }
    }

    private static Optional<Set<PosixFilePermission>> permissions(Directory dir, String name) {
        try {
            return Optional.of(dir.stream().getFileAttributeView(Path.of(name), PosixFileAttributeView.class, NOFOLLOW)
                    .readAttributes().permissions());
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    private static byte[] readAtMost(SeekableByteChannel channel, String name, int maxBytes) throws IOException {
        // Read one byte past the limit so a file that grew after the size check is still refused.
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min((long) maxBytes + 1, Math.max(channel.size() + 1, 8192)));
        while (true) {
            if (!buffer.hasRemaining()) {
                if (buffer.capacity() > maxBytes) {
                    throw tooLarge(name, -1, maxBytes);
                }
                buffer = grow(buffer, (int) Math.min((long) maxBytes + 1, (long) buffer.capacity() * 2));
            }
            if (channel.read(buffer) < 0) {
                break;
            }
        }
        byte[] bytes = new byte[buffer.position()];
        buffer.flip().get(bytes);
        return bytes;
    }

    private static ByteBuffer grow(ByteBuffer buffer, int capacity) {
        ByteBuffer bigger = ByteBuffer.allocate(capacity);
        buffer.flip();
        bigger.put(buffer);
        return bigger;
    }

    private static void writeFully(SeekableByteChannel channel, byte[] content) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(content);
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    private static WorkspaceException tooLarge(String name, long size, int maxBytes) {
        String measured = size > maxBytes ? size + " bytes" : "more than " + maxBytes + " bytes";
        return new WorkspaceException(TOO_LARGE, Names.quoted(name) + " is " + measured + ", over the limit of " + maxBytes
                + " bytes; read part of it with run_command instead (head -c, tail, sed -n)");
    }

    private static WorkspaceException translate(String name, FileSystemException e) {
        String shown = Names.quoted(name);
        if (e instanceof OpenAt.Failure failure) {
            return switch (failure.errno) {
                case OpenAt.ENOENT -> new WorkspaceException(NOT_FOUND, "no such file: " + shown, e);
                case OpenAt.ELOOP -> swappedForLink(shown, e);
                case OpenAt.ENOTDIR -> new WorkspaceException(CHANGED, shown
                        + " changed during the operation (a directory on the way was replaced); try again", e);
                case OpenAt.ENXIO -> new WorkspaceException(NOT_A_REGULAR_FILE,
                        shown + " is not a regular file (a device, socket or FIFO)", e);
                case OpenAt.EISDIR -> new WorkspaceException(IS_DIRECTORY, shown + " is a directory, not a file", e);
                case OpenAt.EACCES, OpenAt.EPERM -> permissionDenied(shown, e);
                case OpenAt.EEXIST -> changedWhileWritten(shown, e);
                default -> new WorkspaceException(IO_ERROR, shown + ": " + e.getReason(), e);
            };
        }
        if (e instanceof NoSuchFileException) {
            return new WorkspaceException(NOT_FOUND, "no such file: " + shown, e);
        }
        if (e instanceof FileAlreadyExistsException) {
            return changedWhileWritten(shown, e);
        }
        if (e instanceof AccessDeniedException) {
            return permissionDenied(shown, e);
        }
        String reason = e.getReason() == null ? e.getClass().getSimpleName() : e.getReason();
        if (reason.contains("Too many levels of symbolic links")) {
            return swappedForLink(shown, e);
        }
        return new WorkspaceException(IO_ERROR, shown + ": " + reason, e);
    }

    private static WorkspaceException swappedForLink(String shown, FileSystemException e) {
        return new WorkspaceException(ESCAPES_WORKSPACE,
                shown + " was replaced by a symbolic link during the operation; try again", e);
    }

    private static WorkspaceException changedWhileWritten(String shown, FileSystemException e) {
        return new WorkspaceException(IO_ERROR, shown + " changed while it was being written; try again", e);
    }

    private static WorkspaceException permissionDenied(String shown, FileSystemException e) {
        return new WorkspaceException(PERMISSION_DENIED, shown + ": permission denied", e);
    }

    /**
     * An open directory, held twice over the same inode: the descriptor that {@link OpenAt} opens
     * relative to, and a {@link SecureDirectoryStream} for everything {@code java.nio} does
     * without waiting (lstat, list, rename, delete).
     */
    private record Directory(int fd, SecureDirectoryStream<Path> stream) implements AutoCloseable {

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

        /** The text of the link {@code name} in this directory, read relative to it. */
        String readLink(String name) throws IOException {
            return Files.readSymbolicLink(OpenAt.path(fd).resolve(name)).toString();
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

    /** The directory that holds the final component, and that component's name. */
    private record Target(Directory dir, String name) {
        Optional<BasicFileAttributes> attributes() throws IOException {
            return lstat(dir, name);
        }

        /**
         * Opens the target, which must be a regular file, without waiting: its type is checked on
         * the descriptor before Java opens that same inode for a channel.
         */
        FileChannel open(String shownName, Access access) throws IOException {
            int fd = OpenAt.open(dir.fd(), name, access);
            try {
                requireRegularFile(shownName, Files.readAttributes(OpenAt.path(fd), BasicFileAttributes.class));
                return FileChannel.open(OpenAt.path(fd), access.reopen);
            } finally {
                OpenAt.close(fd);
            }
        }

        /** Opens the target for reading like {@link #open}, with what its descriptor says it is. */
        OpenedFile openVersion(String shownName) throws IOException {
            int fd = OpenAt.open(dir.fd(), name, Access.READ);
            try {
                BasicFileAttributes attrs = Files.readAttributes(OpenAt.path(fd), BasicFileAttributes.class);
                requireRegularFile(shownName, attrs);
                return new OpenedFile(FileChannel.open(OpenAt.path(fd), Access.READ.reopen), attrs.fileKey(), attrs.size(),
                        attrs.lastModifiedTime());
            } finally {
                OpenAt.close(fd);
            }
        }
    }

    private static boolean isGitDirectory(Directory dir) {
        return ProtectedPaths.looksLikeGitDirectory(entry -> lstatQuietly(dir, entry).isPresent(),
                entry -> lstatQuietly(dir, entry).map(BasicFileAttributes::isDirectory).orElse(false));
    }

    private static Optional<BasicFileAttributes> lstatQuietly(Directory dir, String name) {
        try {
            return lstat(dir, name);
        } catch (IOException unreadable) {
            return Optional.empty();
        }
    }

    private static Optional<BasicFileAttributes> lstat(Directory dir, String name) throws IOException {
        try {
            return Optional.of(dir.stream().getFileAttributeView(Path.of(name), BasicFileAttributeView.class, NOFOLLOW)
                    .readAttributes());
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /**
     * One resolution: a stack of open directories from the root down, and the final component
     * (not a symlink; it may not exist). Closing it closes every directory it opened.
     */
    private final class Walk implements AutoCloseable {
        private final String requested;
        private final Deque<Directory> dirs = new ArrayDeque<>();
        private final Deque<String> dirNames = new ArrayDeque<>();
        private String finalName;
        private Optional<BasicFileAttributes> finalAttributes = Optional.empty();

        Walk(String requested) {
            this.requested = requested;
            dirs.push(root);
        }

        void resolve(List<String> parts) throws IOException {
            Deque<String> pending = new ArrayDeque<>(parts);
            int linksFollowed = 0;
            while (!pending.isEmpty()) {
                String part = pending.pop();
                if (part.equals("..")) {
                    finalName = null;
                    up();
                    continue;
                }
                Optional<BasicFileAttributes> attrs = lstat(dirs.peek(), part);
                if (attrs.isPresent() && attrs.get().isSymbolicLink()) {
                    if (++linksFollowed > MAX_LINKS_FOLLOWED) {
                        throw new WorkspaceException(TOO_MANY_LINKS, Names.quoted(requested) + ": more than "
                                + MAX_LINKS_FOLLOWED + " symbolic links (a loop?)");
                    }
                    followLink(part, pending);
                    finalName = null;
                    continue;
                }
                if (pending.isEmpty()) {
                    finalName = part;
                    finalAttributes = attrs;
                    return;
                }
                if (attrs.isEmpty()) {
                    throw new WorkspaceException(PARENT_MISSING, Names.quoted(requested) + ": directory "
                            + displayPath(part) + " does not exist; create it first (run_command mkdir -p)");
                }
                if (!attrs.get().isDirectory()) {
                    throw new WorkspaceException(NOT_A_DIRECTORY,
                            Names.quoted(requested) + ": " + displayPath(part) + " is not a directory");
                }
                dirs.push(Directory.open(dirs.peek().fd(), part, Access.DIRECTORY));
                dirNames.addLast(part);
            }
        }

        private void up() throws IOException {
            if (dirs.size() == 1) {
                throw new WorkspaceException(ESCAPES_WORKSPACE, Names.quoted(requested)
                        + " leads outside the workspace; only paths beneath the workspace root are allowed");
            }
            dirs.pop().close();
            dirNames.removeLast();
        }

        private void followLink(String part, Deque<String> pending) throws IOException {
            String target = dirs.peek().readLink(part);
            if (target.startsWith("/")) {
                throw new WorkspaceException(ESCAPES_WORKSPACE, Names.quoted(requested) + ": symbolic link "
                        + displayPath(part) + " points to the absolute path " + Names.quoted(target)
                        + ", outside the workspace; only links that stay inside are followed");
            }
            List<String> targetParts = splitComponents(target);
            for (int i = targetParts.size() - 1; i >= 0; i--) {
                pending.push(targetParts.get(i));
            }
        }

        /** The component, with the directories walked so far, quoted for a message. */
        private String displayPath(String part) {
            return Names.quoted(dirNames.isEmpty() ? part : String.join("/", dirNames) + "/" + part);
        }

        Path realPath() {
            Path path = rootPath;
            for (String name : dirNames) {
                path = path.resolve(name);
            }
            return path;
        }

        /** The directory the walk ended on, relative to the last one it opened: "." or the final name. */
        Path requireDirectory(String name) throws WorkspaceException {
            if (finalName == null) {
                return Path.of(".");
            }
            if (finalAttributes.isEmpty()) {
                throw new WorkspaceException(NOT_FOUND, "no such directory: " + Names.quoted(name));
            }
            if (!finalAttributes.get().isDirectory()) {
                throw new WorkspaceException(NOT_A_DIRECTORY, Names.quoted(name) + " is not a directory");
            }
            return Path.of(finalName);
        }

        /** Opens the directory the walk ended on, afresh; the caller closes it. */
        Directory openDirectory(String name) throws IOException {
            return Directory.open(dirs.peek().fd(), requireDirectory(name).toString(), Access.DIRECTORY);
        }

        /** Refuses a write to a file the host runs by itself ({@link ProtectedPaths}), wherever the walk led. */
        void refuseProtected() throws WorkspaceException {
            List<String> names = new ArrayList<>(dirNames);
            names.add(finalName);
            List<Directory> fromRoot = new ArrayList<>(dirs);
            Collections.reverse(fromRoot);
            Optional<ProtectedPaths.Kind> kind = ProtectedPaths.classify(names,
                    depth -> isGitDirectory(fromRoot.get(depth)));
            if (kind.isPresent()) {
                throw new WorkspaceException(kind.get(), String.join("/", names));
            }
        }

        Target requireFinalName(String name) throws WorkspaceException {
            if (finalName == null) {
                throw new WorkspaceException(IS_DIRECTORY, Names.quoted(name) + " is a directory, not a file");
            }
            return new Target(dirs.peek(), finalName);
        }

        @Override
        public void close() {
            while (dirs.size() > 1) {
                dirs.pop().close();
            }
        }
    }
}
