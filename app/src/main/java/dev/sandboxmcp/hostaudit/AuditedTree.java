package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.OpenedFile;
import dev.sandboxmcp.workspace.Workspace;
import dev.sandboxmcp.workspace.WorkspaceException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;

/**
 * What the parts of an audit share: the tree (its real path, read only through {@link Workspace},
 * which cannot leave it and never waits on a FIFO), the host user's home, the findings, and how a
 * finding names a path. What cannot be read is a finding, "not audited", never a silent gap.
 */
final class AuditedTree {

    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final int MAX_SMALL_FILE = 1024 * 1024;
    /** The most of a file a digest reads. */
    static final long MAX_DIGESTED = 256L << 20;

    final Path root;
    final Workspace files;
    /** The host user's home, for {@code ~/} in paths git and direnv expand; null when unknown. */
    final Path home;
    final Set<Finding> findings = new HashSet<>();

    AuditedTree(Workspace files, Path home) {
        this.root = files.root();
        this.files = files;
        this.home = home;
    }

    /** A part of the audit that reads the file system. */
    interface Part {
        void run() throws IOException;
    }

    /** Runs {@code part}; what it cannot read is reported as {@code path} not audited. */
    void audited(Path path, Part part) {
        try {
            part.run();
        } catch (IOException e) {
            notAudited(path, e);
        } catch (java.nio.file.DirectoryIteratorException e) {
            notAudited(path, e.getCause());
        } catch (InvalidPathException e) {
            notAudited(path, new IOException("a name this system's encoding cannot hold: " + e.getMessage()));
        }
    }

    /**
     * What could not be looked at is a finding too: a directory made unreadable from the sandbox
     * must not hide what is in it.
     */
    void notAudited(Path path, IOException e) {
        String why = e instanceof java.nio.file.AccessDeniedException ? "permission denied"
                : e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null ? fse.getReason()
                : e.getMessage();
        add(path, "(not audited)", why);
    }

    /**
     * The whole file, read through a descriptor that cannot wait and is checked to be a regular
     * file (a FIFO swapped in opens at once and is reported); null, with a finding, when it is not
     * a regular file or cannot be read.
     */
    byte[] readSmall(Path file) throws IOException {
        try {
            return files.readFile(relative(file), MAX_SMALL_FILE);
        } catch (WorkspaceException e) {
            switch (e.reason()) {
                case NOT_A_REGULAR_FILE, IS_DIRECTORY -> add(file, "(not a regular file)",
                        "git may read it, the audit cannot: " + kind(file));
                case NOT_FOUND -> { } // gone since the walk saw it
                default -> notAudited(file, e);
            }
            return null;
        }
    }

    static String kind(Path file) {
        try {
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class, NOFOLLOW);
            if (attrs.isDirectory()) {
                return "a directory";
            }
            if (attrs.isRegularFile()) {
                return "a regular file again (it changed while it was read)";
            }
            return attrs.isSymbolicLink() ? "a symbolic link" : "a FIFO, socket or device";
        } catch (IOException e) {
            return "gone";
        }
    }

    static String display(Path path) {
        return path.normalize().toString();
    }

    /**
     * The content's SHA-256 (its first 16 hex digits), so that any change makes a new finding. Of
     * a file larger than {@link #MAX_DIGESTED} (a sparse one can claim terabytes), of that much,
     * with its size and change time, which any write moves.
     */
    String digest(Path file) throws IOException {
        MessageDigest sha256 = sha256();
        try (OpenedFile opened = files.openFileVersion(relative(file))) {
            java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(64 * 1024);
            long read = 0;
            while (read < MAX_DIGESTED) {
                buffer.clear().limit((int) Math.min(buffer.capacity(), MAX_DIGESTED - read));
                int n = opened.channel().read(buffer, read);
                if (n <= 0) {
                    break;
                }
                sha256.update(buffer.array(), 0, n);
                read += n;
            }
            if (read == MAX_DIGESTED && opened.size() > MAX_DIGESTED) {
                return shown(sha256) + " of its first " + (MAX_DIGESTED >> 20) + " MiB of " + opened.size()
                        + " bytes, changed " + opened.changed();
            }
        }
        return shown(sha256);
    }

    /** As {@link #digest(Path)}, of bytes already read. */
    static String sha256(byte[] bytes) {
        MessageDigest sha256 = sha256();
        sha256.update(bytes);
        return shown(sha256);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String shown(MessageDigest sha256) {
        return "sha256 " + HexFormat.of().formatHex(sha256.digest()).substring(0, 16);
    }

    /** The real path of {@code target} when it exists inside the tree, else null. */
    Path quietlyInTree(Path target) {
        try {
            Path real = target.toRealPath();
            return real.startsWith(root) ? real : null;
        } catch (IOException missing) {
            return null;
        }
    }

    /** {@code path} resolved against {@code base} as git does; null (and a finding) when no file system can hold it. */
    Path resolve(Path base, String path, Path from, String key) {
        try {
            return base.resolve(path);
        } catch (InvalidPathException e) {
            add(from, key, path + " (not a path here: " + e.getReason() + ")");
            return null;
        }
    }

    /**
     * The real path {@code value} names, resolved against {@code base}, when it exists inside the
     * tree; null otherwise (what lies outside is named by the finding, not read).
     */
    Path inTree(Path base, String value) {
        if (value.isEmpty() || value.startsWith("~")) {
            return null;
        }
        try {
            return quietlyInTree(base.resolve(value));
        } catch (InvalidPathException e) {
            return null;
        }
    }

    /** A finding about {@code file}, named relative to the tree. */
    void add(Path file, String key, String command) {
        findings.add(new Finding(relative(file), key, command));
    }

    String relative(Path path) {
        Path relative = root.relativize(path);
        return relative.toString().isEmpty() ? "." : relative.toString();
    }
}
