package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.OpenedFile;
import dev.sandboxmcp.workspace.WorkspaceException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Changes git does not see: a file whose content is not the object its index entry names, while
 * its size and modification time are those the entry records. git takes such an entry as
 * unchanged without reading the file (read-cache.c, {@code ie_match_stat}), so {@code git
 * status}, {@code git diff} and {@code git commit -a} leave the change out; a command that changed
 * a file can write the file's new stat data into the index to hide it.
 *
 * <p>An entry is compared when its size and modification time (whole seconds, git's default) match
 * the file; git also compares the change time, inode, owner and mode, so this catches every entry
 * git trusts, and seldom one it reads again. The file is hashed as git hashes a blob
 * ({@code blob <size>\0} and the bytes; SHA-1 or SHA-256, as the repository's objects), and with
 * CRLF taken as LF too (a checkout by {@code core.autocrlf} or {@code eol=crlf}). Content a filter
 * gives the file (git-lfs, {@code ident}, {@code working-tree-encoding}) is not its object either:
 * such files are named as well, to be accepted once.
 *
 * <p>The watcher audits every 2 seconds, so hashes are kept for the process, per file, identity,
 * size, modification and change time. Every write moves the change time, which no process of the
 * sandbox can set; but within one tick of the kernel's clock it may not move, so a hash taken less
 * than a second after the change time is not kept (what git calls a racy entry, for the same reason).
 */
final class UnseenEdits {

    static final String UNSEEN = "changed, though the index records its size and time (git status, git diff and "
            + "git commit -a take it as unchanged and do not show the change)";
    static final String UNREAD = "(not audited)";
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final Duration SETTLED = Duration.ofSeconds(1);
    /** Bounds what the process keeps: more files than any work tree the watcher looks at holds. */
    private static final int MAX_KEPT = 2_000_000;
    private static final Map<Seen, Hashes> KEPT = new ConcurrentHashMap<>();

    /** A file as its stat data says it is; any write gives it another. */
    private record Seen(Path file, Object key, long size, FileTime modified, FileTime changed, String algorithm) {
    }

    /** The blob's object name, and the one with each CRLF taken as LF (null when it holds no CRLF). */
    private record Hashes(byte[] plain, byte[] lf) {
        boolean names(byte[] objectName) {
            return Arrays.equals(plain, objectName) || lf != null && Arrays.equals(lf, objectName);
        }
    }

    private final AuditedTree tree;
    private final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
    private final byte[] out = new byte[buffer.capacity() + 1];

    UnseenEdits(AuditedTree tree) {
        this.tree = tree;
    }

    /**
     * Compares the {@code entries} of {@code index} with the files of {@code workTree} and reports,
     * as one finding each, the files changed behind their entries and those it could not read.
     */
    void audit(Path index, Path workTree, List<GitIndex.Entry> entries, boolean sha256) {
        GitIndex.Collector unseen = new GitIndex.Collector(UNSEEN);
        GitIndex.Collector unread = new GitIndex.Collector("cannot be compared with the object its index entry names");
        String algorithm = sha256 ? "SHA-256" : "SHA-1";
        for (GitIndex.Entry entry : entries) {
            try {
                Hashes hashes = hashesIfStatMatches(workTree, entry, algorithm);
                if (hashes != null && !hashes.names(entry.objectName())) {
                    unseen.add(entry.path(), hashes.plain());
                }
            } catch (IOException | InvalidPathException e) {
                unread.add(entry.path(), String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8));
            }
        }
        report(index, unseen, UNSEEN);
        report(index, unread, UNREAD);
    }

    private void report(Path index, GitIndex.Collector collector, String key) {
        if (collector.count == 0) {
            return;
        }
        GitIndex.Flagged files = collector.flagged();
        String shown = String.join(", ", files.first()) + (files.count() > files.first().size() ? ", ..." : "");
        String what = key.equals(UNREAD) ? " whose content the audit cannot compare with its entry: " : ": ";
        tree.add(index, key, files.count() + (files.count() == 1 ? " file" : " files") + what + shown + "; "
                + files.digest());
    }

    /**
     * The hashes of the file {@code entry} names when its size and modification time are those
     * recorded (git then takes it as unchanged); null when they are not, or it is of another type
     * or gone (git then reads it, or shows it as changed or deleted), or it changed while read.
     */
    private Hashes hashesIfStatMatches(Path workTree, GitIndex.Entry entry, String algorithm) throws IOException {
        Path file = workTree.resolve(utf8(entry.path()));
        if (!file.normalize().startsWith(tree.root)) {
            throw new IOException("outside the audited tree");
        }
        Map<String, Object> stat;
        try {
            stat = Files.readAttributes(file, "unix:fileKey,size,lastModifiedTime,ctime,isRegularFile,isSymbolicLink",
                    NOFOLLOW);
        } catch (java.nio.file.NoSuchFileException | java.nio.file.NotDirectoryException gone) {
            return null;
        }
        boolean regular = (Boolean) stat.get("isRegularFile");
        boolean link = (Boolean) stat.get("isSymbolicLink");
        long size = (Long) stat.get("size");
        FileTime modified = (FileTime) stat.get("lastModifiedTime");
        if ((entry.symbolicLink() ? !link : !regular) || (size & 0xFFFFFFFFL) != entry.size()
                || (modified.to(java.util.concurrent.TimeUnit.SECONDS) & 0xFFFFFFFFL) != entry.mtimeSeconds()) {
            return null;
        }
        Seen seen = new Seen(file, stat.get("fileKey"), size, modified, (FileTime) stat.get("ctime"), algorithm);
        Hashes kept = KEPT.get(seen);
        if (kept != null) {
            return kept;
        }
        Instant hashedAt = Instant.now();
        Hashes hashes = entry.symbolicLink() ? linkHashes(file, algorithm) : fileHashes(seen, algorithm);
        if (hashes != null && Duration.between(seen.changed().toInstant(), hashedAt).compareTo(SETTLED) >= 0) {
            if (KEPT.size() >= MAX_KEPT) {
                KEPT.clear();
            }
            KEPT.put(seen, hashes);
        }
        return hashes;
    }

    /** git's path bytes as a name; one that is not UTF-8 cannot be named here. */
    private static String utf8(byte[] path) throws IOException {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(path)).toString();
        } catch (CharacterCodingException e) {
            throw new IOException("a path that is not UTF-8");
        }
    }

    /** A link's blob is its target. */
    private static Hashes linkHashes(Path file, String algorithm) throws IOException {
        byte[] target = Files.readSymbolicLink(file).toString().getBytes(StandardCharsets.UTF_8);
        MessageDigest digest = digest(algorithm, target.length);
        digest.update(target);
        return new Hashes(digest.digest(), null);
    }

    /** Read through the tree's confined opening; null when what was opened is not the file {@code seen} describes. */
    private Hashes fileHashes(Seen seen, String algorithm) throws IOException {
        byte[] plain;
        long crlf;
        try (OpenedFile opened = tree.files.openFileVersion(tree.relative(seen.file()))) {
            if (!same(seen, opened)) {
                return null;
            }
            MessageDigest digest = digest(algorithm, seen.size());
            crlf = hash(opened.channel(), seen.size(), digest, false);
            if (crlf < 0) {
                return null;
            }
            plain = digest.digest();
        } catch (WorkspaceException e) {
            if (e.reason() == WorkspaceException.Reason.NOT_FOUND) {
                return null;
            }
            throw e;
        }
        if (crlf == 0) {
            return new Hashes(plain, null);
        }
        try (OpenedFile opened = tree.files.openFileVersion(tree.relative(seen.file()))) {
            if (!same(seen, opened)) {
                return null;
            }
            MessageDigest digest = digest(algorithm, seen.size() - crlf);
            return hash(opened.channel(), seen.size(), digest, true) < 0 ? null
                    : new Hashes(plain, digest.digest());
        }
    }

    private static boolean same(Seen seen, OpenedFile opened) {
        return opened.size() == seen.size() && opened.modified().equals(seen.modified())
                && opened.changed().equals(seen.changed()) && opened.fileKey().equals(seen.key());
    }

    /**
     * Feeds the file's {@code size} bytes from {@code channel} into {@code digest}, each CRLF as LF
     * when {@code lf}; returns how many CRLF it held, or -1 when it did not hold {@code size} bytes.
     */
    private long hash(java.nio.channels.FileChannel channel, long size, MessageDigest digest, boolean lf)
            throws IOException {
        buffer.clear();
        long read = 0;
        long crlf = 0;
        boolean carriageReturn = false;
        boolean held = false; // with lf: a CR not yet fed, until what follows it is known
        for (int n = channel.read(buffer, 0); n > 0; n = channel.read(buffer, read)) {
            read += n;
            if (read > size) {
                return -1;
            }
            byte[] bytes = buffer.array();
            if (!lf) {
                for (int i = 0; i < n; i++) {
                    crlf += carriageReturn && bytes[i] == '\n' ? 1 : 0;
                    carriageReturn = bytes[i] == '\r';
                }
                digest.update(bytes, 0, n);
                buffer.clear();
                continue;
            }
            int length = 0;
            for (int i = 0; i < n; i++) {
                byte b = bytes[i];
                if (held && b != '\n') {
                    out[length++] = '\r';
                }
                held = false;
                if (b == '\n' && carriageReturn) {
                    crlf++;
                }
                carriageReturn = b == '\r';
                if (carriageReturn) {
                    held = true;
                } else {
                    out[length++] = b;
                }
            }
            digest.update(out, 0, length);
            buffer.clear();
        }
        if (held) {
            digest.update((byte) '\r');
        }
        return read == size ? crlf : -1;
    }

    /** A digest with git's blob header already in it. */
    private static MessageDigest digest(String algorithm, long size) {
        try {
            MessageDigest digest = MessageDigest.getInstance(algorithm);
            digest.update(("blob " + size + "\0").getBytes(StandardCharsets.US_ASCII));
            return digest;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
