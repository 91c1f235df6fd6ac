package dev.sandboxmcp.workspace;

import dev.sandboxmcp.workspace.OpenAt.Access;
import dev.sandboxmcp.workspace.WorkspaceException.NotADirectory;
import dev.sandboxmcp.workspace.WorkspaceException.NotFound;
import dev.sandboxmcp.workspace.WorkspaceException.Op;
import dev.sandboxmcp.workspace.WorkspaceException.TooLarge;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
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
 * cannot redirect it outside. {@link Walk} works one name through, step by step.
 *
 * <p>No operation waits on what it finds: every open is made so that it returns at once whatever
 * the name has become by then (see {@link OpenAt}), and a file's type is checked on the open
 * descriptor, so a FIFO or device swapped in after a check is refused instead of blocking the
 * server.
 *
 * <p>Limits, as with {@code os.Root}: bind mounts and hard links inside the root that point
 * elsewhere are not detected, and {@code /proc}-style magic links are not special. Linux only
 * (the opens go through {@code /proc/self/fd}).
 *
 * <p>A refusal or failure is a {@link WorkspaceException}: facts (operation, path, what went wrong
 * and its sizes or names), as Go's {@code PathError}; the caller words them and says what to do next.
 */
public final class Workspace implements Closeable {

    private final Path rootPath;
    private final Directory root;
    /** A subtree opened for reading: what protects files from writes ({@link ProtectedPaths}) is known only from the real root. */
    private final boolean readOnly;

    private Workspace(Path rootPath, Directory root, boolean readOnly) {
        this.rootPath = rootPath;
        this.root = root;
        this.readOnly = readOnly;
    }

    /** Opens the directory at {@code rootPath}; it must exist and be a directory. */
    public static Workspace open(Path rootPath) throws IOException {
        Path absolute = rootPath.toAbsolutePath().normalize();
        if (!Files.isDirectory(absolute)) {
            throw new WorkspaceException(Op.OPEN, absolute.toString(), new NotADirectory(null));
        }
        return new Workspace(absolute.toRealPath(), Directory.open(OpenAt.AT_FDCWD, absolute.toString(), Access.ROOT),
                false);
    }

    /** The real path of the root directory. */
    public Path root() {
        return rootPath;
    }

    /** Reads a whole regular file of at most {@code maxBytes} bytes. */
    public byte[] readFile(String name, int maxBytes) throws IOException {
        try (SeekableByteChannel channel = openRegularFile(name)) {
            if (channel.size() > maxBytes) {
                throw new WorkspaceException(Op.READ, name, new TooLarge(channel.size(), maxBytes));
            }
            byte[] bytes = ChannelBytes.readAtMost(channel, maxBytes);
            if (bytes == null) {
                throw new WorkspaceException(Op.READ, name, new TooLarge(WorkspaceException.SIZE_UNKNOWN, maxBytes));
            }
            return bytes;
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
        return openRegular(name, Walk.Target::openVersion);
    }

    /**
     * Holds the regular file {@code name} open for another program of this user to read exactly
     * it ({@link PinnedFile}); the caller closes it.
     */
    public PinnedFile pinFile(String name) throws IOException {
        return openRegular(name, Walk.Target::pin);
    }

    private interface Opening<T> {
        T open(Walk.Target target) throws IOException;
    }

    /** Walks to the regular file {@code name} and opens it as {@code opening} says. */
    private <T> T openRegular(String name, Opening<T> opening) throws IOException {
        try (Walk walk = walk(Op.READ, name)) {
            Walk.Target target = walk.requireFinalName();
            BasicFileAttributes attrs = target.attributes()
                    .orElseThrow(() -> new WorkspaceException(Op.READ, name, new NotFound()));
            Walk.requireRegularFile(Op.READ, name, attrs);
            return opening.open(target);
        } catch (FileSystemException e) {
            throw WorkspaceException.of(Op.READ, name, e);
        }
    }

    private SeekableByteChannel openRegularFile(String name) throws IOException {
        return openFileVersion(name).channel();
    }

    /**
     * What a directory listing shows of one entry; links are reported, never followed.
     * {@code notUtf8}: its name's bytes are not UTF-8, and {@code path} shows them as U+FFFD (no
     * tool can name it, and a directory of such a name is not descended into).
     */
    public record Entry(String path, Kind kind, long size, String linkTarget, boolean notUtf8) {

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
        try (Walk walk = walk(Op.LIST, path); Directory dir = walk.openDirectory()) {
            List<Entry> entries = new ArrayList<>();
            boolean complete = listInto(dir, "", depth, includeHidden, maxEntries, entries);
            return new Listing(List.copyOf(entries), !complete);
        } catch (FileSystemException e) {
            throw WorkspaceException.of(Op.LIST, path, e);
        }
    }

    /** Adds entries of {@code dir}; false when the cap was reached. */
    private static boolean listInto(Directory dir, String prefix, int depth, boolean includeHidden, int maxEntries,
            List<Entry> entries) throws IOException {
        // Only the first names by order can be listed: one more than there is room for is kept
        // (to tell that more follow), so a directory of millions costs no more memory than that.
        int room = maxEntries - entries.size() + 1;
        Comparator<Child> byName = Comparator.comparing(Child::name);
        PriorityQueue<Child> first = new PriorityQueue<>(byName.reversed());
        boolean more = false;
        for (Path child : dir.stream()) {
            Child named = new Child(child.getFileName());
            if (includeHidden || !named.name().startsWith(".")) {
                first.add(named);
                if (first.size() > room) {
                    first.poll();
                    more = true;
                }
            }
        }
        List<Child> children = new ArrayList<>(first);
        children.sort(byName);
        for (Child child : children) {
            if (entries.size() >= maxEntries) {
                return false;
            }
            String childName = child.name();
            boolean notUtf8 = !child.utf8();
            Optional<BasicFileAttributes> attrs = dir.attributes(child.raw());
            if (attrs.isEmpty()) {
                continue; // removed while we listed
            }
            BasicFileAttributes a = attrs.get();
            String path = prefix + childName;
            if (a.isSymbolicLink()) {
                String target;
                try {
                    target = dir.readLink(child.raw());
                } catch (IOException e) {
                    target = "?";
                }
                entries.add(new Entry(path, Entry.Kind.SYMLINK, a.size(), target, notUtf8));
            } else if (a.isDirectory()) {
                entries.add(new Entry(path, Entry.Kind.DIRECTORY, 0, null, notUtf8));
                if (depth > 1 && !notUtf8) {
                    try (Directory sub = Directory.open(dir.fd(), childName, Access.DIRECTORY)) {
                        if (!listInto(sub, path + "/", depth - 1, includeHidden, maxEntries, entries)) {
                            return false;
                        }
                    } catch (FileSystemException replacedOrUnreadable) {
                        // swapped for a link or a FIFO, or not readable: listed, not descended into
                    }
                }
            } else {
                entries.add(new Entry(path, a.isRegularFile() ? Entry.Kind.FILE : Entry.Kind.OTHER, a.size(), null, notUtf8));
            }
        }
        return !more; // more names, though some kept ones were removed while we listed
    }

    /**
     * An entry as the directory's stream gave it: {@code raw} keeps its name's bytes, {@code name}
     * is them decoded (U+FFFD for what is not UTF-8).
     */
    private record Child(Path raw, String name) {

        Child(Path raw) {
            this(raw, raw.toString());
        }

        /** Whether the name's bytes are UTF-8: encoding the decoded name gives them back. */
        boolean utf8() {
            try {
                return Path.of(name).equals(raw);
            } catch (InvalidPathException e) {
                return false;
            }
        }
    }

    /**
     * Replaces the file's content atomically ({@link AtomicReplace}): a reader sees the old content
     * or the new, never a mix, and so does the disk after a crash; an existing file keeps its
     * permission bits.
     */
    public void writeFile(String name, byte[] content) throws IOException {
        writeFile(name, content, null);
    }

    /**
     * As {@link #writeFile(String, byte[])}, but only while the file still holds {@code expected}
     * (what the caller read and changed): just before the rename its content is compared again,
     * and a file that changed in between is left as it is, with
     * {@link WorkspaceException.Changed}. A writer that slips into the microseconds between
     * that check and the rename is not caught.
     */
    public void replaceIfUnchanged(String name, byte[] expected, byte[] content) throws IOException {
        writeFile(name, content, expected);
    }

    private void writeFile(String name, byte[] content, byte[] expected) throws IOException {
        Op op = expected == null ? Op.WRITE : Op.EDIT;
        try (Walk walk = walk(op, name)) {
            Walk.Target target = writableTarget(walk);
            Optional<BasicFileAttributes> existing = target.attributes();
            Set<PosixFilePermission> mode = existing.isPresent() ? target.dir().permissions(target.name()).orElse(null) : null;
            AtomicReplace.replace(target, content, mode, expected);
        } catch (FileSystemException e) {
            throw WorkspaceException.of(op, name, e);
        }
    }

    /** Appends to the file, creating it when it does not exist. */
    public void appendFile(String name, byte[] content) throws IOException {
        try (Walk walk = walk(Op.APPEND, name)) {
            Walk.Target target = writableTarget(walk);
            boolean existed = target.attributes().isPresent();
            try (FileChannel channel = target.open(Access.APPEND)) {
                ChannelBytes.writeFully(channel, content);
                channel.force(true);
            }
            if (!existed) {
                AtomicReplace.syncDirectory(target);
            }
        } catch (FileSystemException e) {
            throw WorkspaceException.of(Op.APPEND, name, e);
        }
    }

    /** The file a write goes to: a name, not protected, and a regular file if it exists. */
    private Walk.Target writableTarget(Walk walk) throws IOException {
        if (readOnly) {
            throw new IllegalStateException("a workspace opened for reading is written to");
        }
        Walk.Target target = walk.requireFinalName();
        walk.refuseProtected();
        Optional<BasicFileAttributes> existing = target.attributes();
        if (existing.isPresent()) {
            Walk.requireRegularFile(target.op(), target.requested(), existing.get());
        }
        return target;
    }

    /**
     * Resolves {@code name} to a directory inside the workspace and returns its real path, for
     * use as a working directory. An empty name or {@code .} is the root itself.
     */
    public Path resolveDirectory(String name) throws IOException {
        if (name.isEmpty() || name.equals(".")) {
            return rootPath;
        }
        try (Walk walk = walk(Op.RESOLVE, name)) {
            return walk.realPath().resolve(walk.requireDirectory()).normalize();
        }
    }

    /**
     * The directory {@code name} as a workspace of its own for reading, which reads cannot leave
     * either ({@code os.Root.OpenRoot}): many files of one directory are then opened without
     * walking to it again for each. It refuses writes: which paths are protected from them is
     * known only from the real root. The caller closes it.
     */
    public Workspace openSubtreeForReading(String name) throws IOException {
        try (Walk walk = walk(Op.RESOLVE, name)) {
            Path relative = walk.requireDirectory();
            return new Workspace(walk.realPath().resolve(relative).normalize(), walk.openDirectory(), true);
        }
    }

    @Override
    public void close() throws IOException {
        root.close();
    }

    private Walk walk(Op op, String name) throws WorkspaceException {
        return Walk.of(root, rootPath, op, name);
    }
}
