package dev.sandboxmcp.workspace;

import dev.sandboxmcp.workspace.OpenAt.Access;
import dev.sandboxmcp.workspace.WorkspaceException.AboveRoot;
import dev.sandboxmcp.workspace.WorkspaceException.AbsoluteLink;
import dev.sandboxmcp.workspace.WorkspaceException.Err;
import dev.sandboxmcp.workspace.WorkspaceException.Failed;
import dev.sandboxmcp.workspace.WorkspaceException.Invalid;
import dev.sandboxmcp.workspace.WorkspaceException.InvalidPath;
import dev.sandboxmcp.workspace.WorkspaceException.IsDirectory;
import dev.sandboxmcp.workspace.WorkspaceException.NotADirectory;
import dev.sandboxmcp.workspace.WorkspaceException.NotARegularFile;
import dev.sandboxmcp.workspace.WorkspaceException.NotFound;
import dev.sandboxmcp.workspace.WorkspaceException.Op;
import dev.sandboxmcp.workspace.WorkspaceException.ParentMissing;
import dev.sandboxmcp.workspace.WorkspaceException.Protected;
import dev.sandboxmcp.workspace.WorkspaceException.TooManyLinks;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * One resolution of a name beneath the root (the walk of {@link Workspace}, as
 * {@code root_openat.go} is {@code os.Root}'s): a stack of open directories from the root down,
 * and the final component, which is not a symbolic link and may not exist. Closing it closes
 * every directory it opened.
 *
 * <p>The name {@code docs/../src/cur/App.java}, where {@code src/cur} is a link to {@code v2},
 * is walked so:
 * <ol>
 *   <li>it is checked to be relative and free of NUL bytes, and split into
 *       {@code docs .. src cur App.java} (empty and {@code .} components dropped);
 *   <li>{@code docs}: lstat in the root says directory, so it is opened relative to the root's
 *       descriptor ({@code O_PATH|O_DIRECTORY|O_NOFOLLOW}) and pushed: root, docs;
 *   <li>{@code ..}: docs is popped and closed. The root itself is never popped: a {@code ..}
 *       there leads outside, {@link WorkspaceException.Reason#ESCAPES_WORKSPACE};
 *   <li>{@code src}: opened and pushed: root, src;
 *   <li>{@code cur}: lstat says link. Its text, {@code v2}, read relative to src, is relative, so
 *       its components go in front of what remains: {@code v2 App.java}. An absolute link text
 *       is refused, and so is the 41st link of one walk (a loop);
 *   <li>{@code v2}: opened and pushed: root, src, v2;
 *   <li>{@code App.java}, the last component, is not opened: the walk ends on v2 with the final
 *       name {@code App.java} and its lstat (none: a write creates it). The operation opens it
 *       relative to v2's descriptor with {@code O_NOFOLLOW}, so a link swapped in meanwhile is
 *       refused rather than followed.
 * </ol>
 * Had a command replaced {@code src} by a link to {@code /etc} between steps, the open of step 4
 * would have failed ({@code O_NOFOLLOW}), not followed it.
 */
final class Walk implements AutoCloseable {

    private static final int MAX_LINKS_FOLLOWED = 40;

    private final Path rootPath;
    private final Op op;
    private final String requested;
    private final Deque<Directory> dirs = new ArrayDeque<>();
    private final Deque<String> dirNames = new ArrayDeque<>();
    private String finalName;
    private Optional<BasicFileAttributes> finalAttributes = Optional.empty();

    private Walk(Directory root, Path rootPath, Op op, String requested) {
        this.rootPath = rootPath;
        this.op = op;
        this.requested = requested;
        dirs.push(root);
    }

    /**
     * Walks {@code name} from {@code root} (whose real path is {@code rootPath}) for {@code op},
     * which its refusals name; the caller closes the walk.
     */
    static Walk of(Directory root, Path rootPath, Op op, String name) throws WorkspaceException {
        List<String> parts = validate(op, name);
        Walk walk = new Walk(root, rootPath, op, name);
        try {
            walk.resolve(parts);
            return walk;
        } catch (IOException | RuntimeException e) {
            walk.close();
            if (e instanceof WorkspaceException we) {
                throw we;
            }
            if (e instanceof FileSystemException fse) {
                throw WorkspaceException.of(op, name, fse);
            }
            throw new WorkspaceException(op, name, new Failed("could not resolve it: " + e.getMessage()), e);
        }
    }

    private static List<String> validate(Op op, String name) throws WorkspaceException {
        Invalid invalid = name == null || name.isEmpty() ? Invalid.EMPTY
                : name.indexOf('\0') >= 0 ? Invalid.NUL_BYTE
                : name.startsWith("/") ? Invalid.ABSOLUTE
                : null;
        if (invalid != null) {
            throw new WorkspaceException(op, name, new InvalidPath(invalid));
        }
        return splitComponents(name);
    }

    private WorkspaceException refused(Err err) {
        return new WorkspaceException(op, requested, err);
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

    private void resolve(List<String> parts) throws IOException {
        Deque<String> pending = new ArrayDeque<>(parts);
        int linksFollowed = 0;
        while (!pending.isEmpty()) {
            String part = pending.pop();
            if (part.equals("..")) {
                finalName = null;
                up();
                continue;
            }
            Optional<BasicFileAttributes> attrs = dirs.peek().attributes(part);
            if (attrs.isPresent() && attrs.get().isSymbolicLink()) {
                if (++linksFollowed > MAX_LINKS_FOLLOWED) {
                    throw refused(new TooManyLinks(MAX_LINKS_FOLLOWED));
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
                throw refused(new ParentMissing(walkedPath(part)));
            }
            if (!attrs.get().isDirectory()) {
                throw refused(new NotADirectory(walkedPath(part)));
            }
            dirs.push(Directory.open(dirs.peek().fd(), part, Access.DIRECTORY));
            dirNames.addLast(part);
        }
    }

    private void up() throws IOException {
        if (dirs.size() == 1) {
            throw refused(new AboveRoot());
        }
        dirs.pop().close();
        dirNames.removeLast();
    }

    private void followLink(String part, Deque<String> pending) throws IOException {
        String target = dirs.peek().readLink(part);
        if (target.startsWith("/")) {
            throw refused(new AbsoluteLink(walkedPath(part), target));
        }
        List<String> targetParts = splitComponents(target);
        for (int i = targetParts.size() - 1; i >= 0; i--) {
            pending.push(targetParts.get(i));
        }
    }

    /** The component with the directories walked so far: its path from the root. */
    private String walkedPath(String part) {
        return dirNames.isEmpty() ? part : String.join("/", dirNames) + "/" + part;
    }

    /** The real path of the directory the walk ended in (the last one it opened). */
    Path realPath() {
        Path path = rootPath;
        for (String name : dirNames) {
            path = path.resolve(name);
        }
        return path;
    }

    /** The directory the walk ended on, relative to the last one it opened: "." or the final name. */
    Path requireDirectory() throws WorkspaceException {
        if (finalName == null) {
            return Path.of(".");
        }
        if (finalAttributes.isEmpty()) {
            throw refused(new NotFound());
        }
        if (!finalAttributes.get().isDirectory()) {
            throw refused(new NotADirectory(null));
        }
        return Path.of(finalName);
    }

    /** Opens the directory the walk ended on, afresh; the caller closes it. */
    Directory openDirectory() throws IOException {
        return Directory.open(dirs.peek().fd(), requireDirectory().toString(), Access.DIRECTORY);
    }

    /** Refuses a write to a file the host runs by itself ({@link ProtectedPaths}), wherever the walk led. */
    void refuseProtected() throws WorkspaceException {
        List<String> names = new ArrayList<>(dirNames);
        names.add(finalName);
        List<Directory> fromRoot = new ArrayList<>(dirs);
        Collections.reverse(fromRoot);
        Optional<ProtectedPaths.Kind> kind = ProtectedPaths.classify(names, depth -> fromRoot.get(depth).isGitDirectory());
        if (kind.isPresent()) {
            throw refused(new Protected(kind.get(), String.join("/", names)));
        }
    }

    /** The final component, which must be a name, not the directory a {@code ..} or {@code .} ended on. */
    Target requireFinalName() throws WorkspaceException {
        if (finalName == null) {
            throw refused(new IsDirectory());
        }
        return new Target(dirs.peek(), finalName, op, requested);
    }

    @Override
    public void close() {
        while (dirs.size() > 1) {
            dirs.pop().close();
        }
    }

    /** Refuses what is not a regular file: a directory, a FIFO, a socket, a device. */
    static void requireRegularFile(Op op, String name, BasicFileAttributes attrs) throws WorkspaceException {
        if (attrs.isDirectory()) {
            throw new WorkspaceException(op, name, new IsDirectory());
        }
        if (!attrs.isRegularFile()) {
            throw new WorkspaceException(op, name, new NotARegularFile());
        }
    }

    /** The directory that holds the final component, that component's name, the operation and the name as asked for. */
    record Target(Directory dir, String name, Op op, String requested) {

        Optional<BasicFileAttributes> attributes() throws IOException {
            return dir.attributes(name);
        }

        /**
         * Opens the target, which must be a regular file, without waiting: its type is checked on
         * the descriptor before Java opens that same inode for a channel.
         */
        FileChannel open(Access access) throws IOException {
            int fd = OpenAt.open(dir.fd(), name, access);
            try {
                requireRegularFile(op, requested, Files.readAttributes(OpenAt.path(fd), BasicFileAttributes.class));
                return FileChannel.open(OpenAt.path(fd), access.reopen);
            } finally {
                OpenAt.close(fd);
            }
        }

        /** Opens the target for reading like {@link #open}, with what its descriptor says it is. */
        /** Holds the regular file open ({@link PinnedFile}); the caller closes it. */
        PinnedFile pin() throws IOException {
            int fd = OpenAt.open(dir.fd(), name, Access.READ);
            PinnedFile pinned = new PinnedFile(fd);
            try {
                requireRegularFile(op, requested, Files.readAttributes(OpenAt.path(fd), BasicFileAttributes.class));
                return pinned;
            } catch (IOException | RuntimeException e) {
                pinned.close();
                throw e;
            }
        }

        OpenedFile openVersion() throws IOException {
            int fd = OpenAt.open(dir.fd(), name, Access.READ);
            try {
                BasicFileAttributes attrs = Files.readAttributes(OpenAt.path(fd), BasicFileAttributes.class);
                requireRegularFile(op, requested, attrs);
                FileTime changed = (FileTime) Files.getAttribute(OpenAt.path(fd), "unix:ctime");
                return new OpenedFile(FileChannel.open(OpenAt.path(fd), Access.READ.reopen), attrs.fileKey(), attrs.size(),
                        attrs.lastModifiedTime(), changed);
            } finally {
                OpenAt.close(fd);
            }
        }
    }
}
