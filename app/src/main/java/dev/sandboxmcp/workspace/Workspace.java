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
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.TOO_LARGE;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.TOO_MANY_LINKS;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
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
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A directory tree that file operations cannot leave: the {@code os.Root} of this project.
 *
 * <p>Names are relative paths beneath the root. They are resolved one component at a time
 * from open directory handles ({@link SecureDirectoryStream}, {@code openat} with
 * {@code O_NOFOLLOW}), never by handing a whole path string to the operating system. {@code ..}
 * and symbolic links are followed while they stay inside the root; a {@code ..} above the root,
 * an absolute link target, or a link whose target leaves the root is refused. Because each step
 * opens the next directory relative to the one before without following links, a directory
 * swapped for a symlink during an operation cannot redirect it outside.
 *
 * <p>Limits, as with {@code os.Root}: bind mounts and hard links inside the root that point
 * elsewhere are not detected, and {@code /proc}-style magic links are not special. The text of
 * a symbolic link is read by path, so a concurrent swap can at worst make a lookup read another
 * link's target text; the walk that uses it stays confined all the same.
 */
public final class Workspace implements Closeable {

    private static final int MAX_LINKS_FOLLOWED = 40;
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path rootPath;
    private final SecureDirectoryStream<Path> root;

    private Workspace(Path rootPath, SecureDirectoryStream<Path> root) {
        this.rootPath = rootPath;
        this.root = root;
    }

    /** Opens the directory at {@code rootPath}; it must exist and be a directory. */
    public static Workspace open(Path rootPath) throws IOException {
        Path absolute = rootPath.toAbsolutePath().normalize();
        if (!Files.isDirectory(absolute)) {
            throw new WorkspaceException(NOT_A_DIRECTORY, "workspace " + absolute + " is not a directory");
        }
        DirectoryStream<Path> stream = Files.newDirectoryStream(absolute);
        if (!(stream instanceof SecureDirectoryStream<Path> secure)) {
            stream.close();
            throw new IOException("this platform has no SecureDirectoryStream (openat); refusing to serve files");
        }
        return new Workspace(absolute.toRealPath(), secure);
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

    private SeekableByteChannel openRegularFile(String name) throws IOException {
        try (Walk walk = walk(name)) {
            Target target = walk.requireFinalName(name);
            BasicFileAttributes attrs = target.attributes()
                    .orElseThrow(() -> new WorkspaceException(NOT_FOUND, "no such file: '" + name + "'"));
            requireRegularFile(name, attrs);
            return target.dir().newByteChannel(Path.of(target.name()), Set.of(StandardOpenOption.READ, NOFOLLOW));
        } catch (FileSystemException e) {
            throw translate(name, e);
        }
    }

    /** What a directory listing shows of one entry; links are reported, never followed. */
    public record Entry(String path, String kind, long size, String linkTarget) {
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
        try (Walk walk = walk(path)) {
            Path directory = walk.requireDirectory(path);
            List<Entry> entries = new ArrayList<>();
            boolean complete;
            try (SecureDirectoryStream<Path> dir = walk.top().newDirectoryStream(directory, NOFOLLOW)) {
                Path realDir = walk.realPath().resolve(directory).normalize();
                complete = listInto(dir, realDir, "", depth, includeHidden, maxEntries, entries);
            }
            return new Listing(List.copyOf(entries), !complete);
        } catch (FileSystemException e) {
            throw translate(path, e);
        }
    }

    /** Adds entries of {@code dir}; false when the cap was reached. */
    private static boolean listInto(SecureDirectoryStream<Path> dir, Path realDir, String prefix, int depth,
            boolean includeHidden, int maxEntries, List<Entry> entries) throws IOException {
        List<String> names = new ArrayList<>();
        for (Path child : dir) {
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
                    target = Files.readSymbolicLink(realDir.resolve(childName)).toString();
                } catch (IOException e) {
                    target = "?";
                }
                entries.add(new Entry(path, "symlink", a.size(), target));
            } else if (a.isDirectory()) {
                entries.add(new Entry(path, "directory", 0, null));
                if (depth > 1) {
                    try (SecureDirectoryStream<Path> sub = dir.newDirectoryStream(Path.of(childName), NOFOLLOW)) {
                        if (!listInto(sub, realDir.resolve(childName), path + "/", depth - 1, includeHidden, maxEntries, entries)) {
                            return false;
                        }
                    } catch (FileSystemException replacedOrUnreadable) {
                        // swapped for a link or not readable: listed, not descended into
                    }
                }
            } else {
                entries.add(new Entry(path, a.isRegularFile() ? "file" : "other", a.size(), null));
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
            Optional<BasicFileAttributes> existing = target.attributes();
            if (existing.isPresent()) {
                requireRegularFile(name, existing.get());
            }
            Set<OpenOption> options = Set.of(StandardOpenOption.WRITE, StandardOpenOption.APPEND,
                    StandardOpenOption.CREATE, NOFOLLOW);
            try (SeekableByteChannel channel = target.dir().newByteChannel(Path.of(target.name()), options)) {
                writeFully(channel, content);
                if (channel instanceof FileChannel file) {
                    file.force(true);
                }
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
        SecureDirectoryStream<Path> dir = target.dir();
        Path temp = Path.of(".sandbox-mcp-" + HexFormat.of().toHexDigits(RANDOM.nextLong()) + ".tmp");
        Set<OpenOption> options = Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW, NOFOLLOW);
        boolean renamed = false;
        try {
            try (SeekableByteChannel channel = dir.newByteChannel(temp, options)) {
                writeFully(channel, content);
                if (channel instanceof FileChannel file) {
                    file.force(true);
                }
            }
            if (mode != null) {
                dir.getFileAttributeView(temp, PosixFileAttributeView.class, NOFOLLOW).setPermissions(mode);
            }
            if (expected != null && !holds(target, expected)) {
                throw new WorkspaceException(CHANGED, "'" + name + "' changed while it was being edited (a command or "
                        + "another call wrote it); nothing was written. Read it again and repeat the edit.");
            }
            dir.move(temp, dir, Path.of(target.name()));
            renamed = true;
        } catch (WorkspaceException e) {
            throw e;
        } catch (IOException e) {
            String detail = e instanceof FileSystemException fse && fse.getReason() != null ? fse.getReason() : e.toString();
            throw new WorkspaceException(IO_ERROR,
                    "could not write '" + name + "': " + detail + "; the file was left unchanged", e);
        } finally {
            if (!renamed) {
                try {
                    dir.deleteFile(temp);
                } catch (IOException ignored) {
                    // it was never created, or is already gone
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
        try (SeekableByteChannel channel = target.dir().newByteChannel(Path.of(target.name()),
                Set.of(StandardOpenOption.READ, NOFOLLOW))) {
            return Arrays.equals(readAtMost(channel, target.name(), expected.length), expected);
        } catch (WorkspaceException grewPastExpected) {
            return false;
        }
    }

    /** Makes a rename or a new name in {@code dir} survive a power loss, not only the bytes. */
    private static void syncDirectory(SecureDirectoryStream<Path> dir, String name) throws WorkspaceException {
        try (SeekableByteChannel channel = dir.newByteChannel(Path.of("."), Set.of(StandardOpenOption.READ))) {
            if (channel instanceof FileChannel directory) {
                directory.force(true);
            }
        } catch (IOException e) {
            throw new WorkspaceException(IO_ERROR, "wrote '" + name
                    + "', but its directory could not be synced to disk, so the change may not survive a crash: " + e, e);
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
            throw new WorkspaceException(IO_ERROR, "could not resolve '" + name + "': " + e.getMessage(), e);
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
            throw new WorkspaceException(INVALID_PATH,
                    "absolute paths are not accepted: '" + name + "'; give a path relative to the workspace root");
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
            throw new WorkspaceException(IS_DIRECTORY, "'" + name + "' is a directory, not a file");
        }
        if (!attrs.isRegularFile()) {
            throw new WorkspaceException(NOT_A_REGULAR_FILE,
                    "'" + name + "' is not a regular file (a device, socket or FIFO)");
        }
    }

    private static Optional<Set<PosixFilePermission>> permissions(SecureDirectoryStream<Path> dir, String name) {
        try {
            return Optional.of(dir.getFileAttributeView(Path.of(name), PosixFileAttributeView.class, NOFOLLOW)
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
        return new WorkspaceException(TOO_LARGE, "'" + name + "' is " + measured + ", over the limit of " + maxBytes
                + " bytes; read part of it with run_command instead (head -c, tail, sed -n)");
    }

    private static WorkspaceException translate(String name, FileSystemException e) {
        if (e instanceof NoSuchFileException) {
            return new WorkspaceException(NOT_FOUND, "no such file: '" + name + "'", e);
        }
        if (e instanceof FileAlreadyExistsException) {
            return new WorkspaceException(IO_ERROR, "'" + name + "' changed while it was being written; try again", e);
        }
        String reason = e.getReason() == null ? e.getClass().getSimpleName() : e.getReason();
        if (reason.contains("Too many levels of symbolic links")) {
            return new WorkspaceException(ESCAPES_WORKSPACE,
                    "'" + name + "' was replaced by a symbolic link during the operation; try again", e);
        }
        return new WorkspaceException(IO_ERROR, "'" + name + "': " + reason, e);
    }

    /** The directory that holds the final component, and that component's name. */
    private record Target(SecureDirectoryStream<Path> dir, String name) {
        Optional<BasicFileAttributes> attributes() throws IOException {
            return lstat(dir, name);
        }
    }

    private static Optional<BasicFileAttributes> lstat(SecureDirectoryStream<Path> dir, String name)
            throws IOException {
        try {
            return Optional.of(dir.getFileAttributeView(Path.of(name), BasicFileAttributeView.class, NOFOLLOW)
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
        private final Deque<SecureDirectoryStream<Path>> dirs = new ArrayDeque<>();
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
                        throw new WorkspaceException(TOO_MANY_LINKS,
                                "'" + requested + "': more than " + MAX_LINKS_FOLLOWED + " symbolic links (a loop?)");
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
                    throw new WorkspaceException(PARENT_MISSING, "'" + requested + "': directory '"
                            + displayPath(part) + "' does not exist; create it first (run_command mkdir -p)");
                }
                if (!attrs.get().isDirectory()) {
                    throw new WorkspaceException(NOT_A_DIRECTORY,
                            "'" + requested + "': '" + displayPath(part) + "' is not a directory");
                }
                dirs.push(dirs.peek().newDirectoryStream(Path.of(part), NOFOLLOW));
                dirNames.addLast(part);
            }
        }

        private void up() throws IOException {
            if (dirs.size() == 1) {
                throw new WorkspaceException(ESCAPES_WORKSPACE,
                        "'" + requested + "' leads outside the workspace; only paths beneath the workspace root are allowed");
            }
            dirs.pop().close();
            dirNames.removeLast();
        }

        private void followLink(String part, Deque<String> pending) throws IOException {
            Path linkPath = realPath().resolve(part);
            String target = Files.readSymbolicLink(linkPath).toString();
            if (target.startsWith("/")) {
                throw new WorkspaceException(ESCAPES_WORKSPACE, "'" + requested + "': symbolic link '"
                        + displayPath(part) + "' points to the absolute path '" + target
                        + "', outside the workspace; only links that stay inside are followed");
            }
            List<String> targetParts = splitComponents(target);
            for (int i = targetParts.size() - 1; i >= 0; i--) {
                pending.push(targetParts.get(i));
            }
        }

        private String displayPath(String part) {
            return dirNames.isEmpty() ? part : String.join("/", dirNames) + "/" + part;
        }

        Path realPath() {
            Path path = rootPath;
            for (String name : dirNames) {
                path = path.resolve(name);
            }
            return path;
        }

        String finalName() {
            return finalName;
        }

        SecureDirectoryStream<Path> top() {
            return dirs.peek();
        }

        Optional<BasicFileAttributes> finalAttributes() {
            return finalAttributes;
        }

        /** The directory the walk ended on, relative to {@link #top()}: "." or the final name. */
        Path requireDirectory(String name) throws WorkspaceException {
            if (finalName == null) {
                return Path.of(".");
            }
            if (finalAttributes.isEmpty()) {
                throw new WorkspaceException(NOT_FOUND, "no such directory: '" + name + "'");
            }
            if (!finalAttributes.get().isDirectory()) {
                throw new WorkspaceException(NOT_A_DIRECTORY, "'" + name + "' is not a directory");
            }
            return Path.of(finalName);
        }

        Target requireFinalName(String name) throws WorkspaceException {
            if (finalName == null) {
                throw new WorkspaceException(IS_DIRECTORY, "'" + name + "' is a directory, not a file");
            }
            return new Target(dirs.peek(), finalName);
        }

        @Override
        public void close() {
            while (dirs.size() > 1) {
                try {
                    dirs.pop().close();
                } catch (IOException ignored) {
                    // closing a directory handle we opened; nothing to recover
                }
            }
        }
    }
}
