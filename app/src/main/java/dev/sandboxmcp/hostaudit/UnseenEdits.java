package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.OpenedFile;
import dev.sandboxmcp.workspace.Workspace;
import dev.sandboxmcp.workspace.WorkspaceException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
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
import java.util.Arrays;
import java.util.Map;

/**
 * Changes git does not see: a file whose content is not the object its index entry names, while
 * its size and modification time are those the entry records. git takes such an entry as
 * unchanged without reading the file (read-cache.c, {@code ie_match_stat}), so {@code git
 * status}, {@code git diff} and {@code git commit -a} leave the change out; a command that changed
 * a file can write the file's new stat data into the index to hide it.
 *
 * <p>An entry is compared when git would take the file as it by stat data ({@link Settings}:
 * size, modification time in whole seconds, as git's default build has no {@code USE_NSEC}, and
 * change time, inode and owner as core.trustctime and core.checkStat say), a split index's merged
 * with its shared part as git merges them. One git takes as racy (dated no earlier than the index)
 * git reads again and shows, but the sandbox can date the index later again: such a change is
 * named apart ({@link #RACY}). The file is hashed as git hashes a blob ({@code blob <size>\0} and
 * the bytes; SHA-1 or SHA-256, as the repository's objects), and where git converts line ends
 * also with CRLF taken as LF. Content a filter gives the file (git-lfs, {@code ident},
 * {@code working-tree-encoding}) is not its object either: such files are named as well, to be
 * accepted once.
 *
 * <p>The watcher audits every 2 seconds, so a hash is kept for a minute, per file, identity, size,
 * modification and change time: a write moves the change time, which no process of the sandbox
 * can set. Not always at once, though: within one tick of the kernel's clock it may not move (so a
 * hash taken less than a second after the change time is not kept), and a write through a shared
 * mapping to a page already written moves it only once the page has gone to disk, or never on
 * tmpfs (so no hash is kept longer than a minute).
 */
final class UnseenEdits {

    static final String UNSEEN = "changed, though the index records its size and time (git status, git diff and "
            + "git commit -a take it as unchanged and do not show the change)";
    static final String RACY = "changed behind an index entry dated no earlier than the index (git shows the "
            + "change while that is so, and no longer once the index is dated later)";
    static final String UNREAD = "(not audited)";
    /** A file larger than this is not read (it is named as not audited): a sparse file can claim terabytes. */
    static final long MAX_FILE_BYTES = 1L << 30;
    /** What one audit reads at most; the watcher's later rounds read the rest, as kept hashes cost nothing. */
    static final long MAX_AUDIT_BYTES = 4L << 30;
    private static final int ATTEMPTS = 3;
    /** The most entries of a split index kept until its link is read: more than any index holds, bounded for a forged one. */
    private static final int MAX_REPLACEMENTS = 1 << 18;
    private static final long MASK_32 = 0xFFFFFFFFL;
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    /**
     * Hashes kept between the watcher's rounds, bounded (about 250 bytes each); each for a minute
     * at most, as a write through a shared mapping to a page still dirty moves no time.
     */
    private static final KeptResults<Seen, Hashes> KEPT = new KeptResults<>(200_000);

    /**
     * A file (by its identity, not its path: a path can be 4 KiB, and links share content) and how
     * it was hashed.
     */
    private record Seen(FileIdentity file, boolean sha256, boolean crlfAsLf) {
    }

    /**
     * How git compares a work tree's files with its index: {@code crlfAsLf}, whether it may check
     * text out with CRLF or take CRLF in as LF (core.autocrlf true or input, a text or eol
     * attribute); {@code trustCtime} (core.trustctime) and {@code fullStat} (core.checkStat not
     * minimal), which change time, inode and owner it compares besides size and modification time.
     */
    record Settings(boolean crlfAsLf, boolean trustCtime, boolean fullStat) {
        static final Settings DEFAULT = new Settings(false, true, true);
    }

    /**
     * The blob's object name, and with each CRLF taken as LF (null when the file holds no CRLF, or
     * when that is not asked).
     */
    private record Hashes(byte[] plain, byte[] lf) {
        boolean names(byte[] objectName) {
            return Arrays.equals(plain, objectName) || lf != null && Arrays.equals(lf, objectName);
        }
    }

    /** What was opened is not the file its stat data described: it changed while it was read. */
    private static final class Changed extends IOException {
        Changed() {
            super("changed while it was read");
        }
    }

    private final AuditedTree tree;
    private final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
    private final byte[] out = new byte[buffer.capacity() + 1];
    private long bytesRead;

    UnseenEdits(AuditedTree tree) {
        this.tree = tree;
    }

    /**
     * One index's entries compared with the files of {@code workTree} as git compares them
     * ({@code settings}); closing it reports, as one finding each, the files changed behind their
     * entries and those it could not compare. {@code indexSeconds}: the modification time of the
     * index git reads (a split index's own, not its shared part's), which tells the entries git
     * reads again anyway.
     */
    Check check(Path index, Path workTree, boolean sha256, Settings settings, long indexSeconds) {
        return new Check(index, workTree, sha256, settings, indexSeconds & MASK_32);
    }

    /**
     * Takes the index's entries ({@link #take}), and for a split index those of the shared part
     * its link names ({@link #shared}), each merged as git merges them.
     */
    final class Check implements GitIndex.Entries, AutoCloseable {
        private final Path index;
        private final Path workTree;
        private final boolean sha256;
        private final Settings settings;
        private final long indexSeconds;
        private final GitIndex.Collector unseen = new GitIndex.Collector(UNSEEN);
        private final GitIndex.Collector racy = new GitIndex.Collector(RACY);
        private final GitIndex.Collector unread = new GitIndex.Collector(UNREAD);
        private final OpenDirectory directory = new OpenDirectory();
        /** A split index's entries without a path, in order: each replaces the shared entry at the next position its link names. */
        private final java.util.List<GitIndex.Entry> replacements = new java.util.ArrayList<>();

        private Check(Path index, Path workTree, boolean sha256, Settings settings, long indexSeconds) {
            this.index = index;
            this.workTree = workTree;
            this.sha256 = sha256;
            this.settings = settings;
            this.indexSeconds = indexSeconds;
        }

        @Override
        public void take(GitIndex.Entry entry) {
            if (entry.path().length == 0) {
                if (replacements.size() < MAX_REPLACEMENTS) {
                    replacements.add(entry);
                } else {
                    unread.add(GitIndex.SPLIT_REPLACEMENT.getBytes(StandardCharsets.UTF_8), entry.stat());
                }
            } else {
                compare(entry);
            }
        }

        /** What takes the entries of the shared index {@code link} names, as git merges them (split-index.c). */
        GitIndex.Entries shared(GitIndex.Link link) {
            int[] next = {0};
            return entry -> {
                int position = (int) entry.position();
                boolean deleted = link.deleted().get(position);
                if (link.replaced().get(position)) {
                    // git replaces first, each taking the next nameless entry, and deletes after
                    if (next[0] < replacements.size()) {
                        GitIndex.Entry replacement = replacements.get(next[0]++).named(entry.path());
                        if (!deleted) {
                            compare(replacement);
                        }
                    }
                    return; // git refuses an index whose link names more replacements than it holds
                }
                if (!deleted) {
                    compare(entry);
                }
            };
        }

        private void compare(GitIndex.Entry entry) {
            if (!entry.comparedByStat()) {
                return;
            }
            boolean racyEntry = indexSeconds != 0 && entry.mtimeSeconds() >= indexSeconds;
            try {
                for (int attempt = 1; ; attempt++) {
                    try {
                        Hashes hashes = hashesIfStatMatches(entry);
                        if (hashes != null && !hashes.names(entry.objectName())) {
                            (racyEntry ? racy : unseen).add(entry.path(), hashes.plain());
                        }
                        return;
                    } catch (Changed e) {
                        directory.close(); // the directory may have been replaced, not only the file
                        if (attempt == ATTEMPTS) {
                            throw new IOException("changed each of the " + ATTEMPTS + " times it was read");
                        }
                    }
                }
            } catch (IOException | InvalidPathException e) {
                // the entry's stat data and the file's in the digest: a later write moves one or the other
                unread.add(entry.path(), concat(entry.stat(), entry.objectName(), currentStat(entry),
                        String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8)));
            }
        }

        /** The file's identity, size and times now, as bytes; none when it cannot be looked at. */
        private byte[] currentStat(GitIndex.Entry entry) {
            try {
                Map<String, Object> stat = Files.readAttributes(workTree.resolve(utf8(entry.path())),
                        "unix:ino,size,lastModifiedTime,ctime", NOFOLLOW);
                return String.valueOf(stat.get("ino") + " " + stat.get("size") + " " + stat.get("lastModifiedTime") + " "
                        + stat.get("ctime")).getBytes(StandardCharsets.UTF_8);
            } catch (IOException | InvalidPathException | UnsupportedOperationException e) {
                return new byte[0];
            }
        }

        @Override
        public void close() {
            directory.close();
            report(unseen, UNSEEN, ": ");
            report(racy, RACY, ": ");
            report(unread, UNREAD, " whose content the audit cannot compare with its entry: ");
        }

        private void report(GitIndex.Collector collector, String key, String what) {
            if (collector.count == 0) {
                return;
            }
            tree.add(index, key, collector.flagged().described(what));
        }

        /**
         * The hashes of the file {@code entry} names when its size and modification time are those
         * recorded (git then takes it as unchanged); null when they are not, or it is of another
         * type or gone (git then reads it, or shows it as changed or deleted).
         */
        private Hashes hashesIfStatMatches(GitIndex.Entry entry) throws IOException {
            Path file = workTree.resolve(utf8(entry.path())).normalize();
            if (!file.startsWith(tree.root) || file.equals(tree.root)) {
                throw new IOException("outside the audited tree");
            }
            Map<String, Object> stat;
            try {
                stat = Files.readAttributes(file, FileIdentity.ATTRIBUTES + ",ino,uid,gid,mode", NOFOLLOW);
            } catch (java.nio.file.NoSuchFileException | java.nio.file.NotDirectoryException gone) {
                return null;
            }
            int type = (Integer) stat.get("mode") & 0170000;
            boolean regular = type == 0100000;
            boolean link = type == 0120000;
            long size = (Long) stat.get("size");
            FileTime modified = (FileTime) stat.get("lastModifiedTime");
            FileTime changed = (FileTime) stat.get("ctime");
            if (!(regular || link && entry.symbolicLink()) || !gitTrusts(entry, stat, size, modified, changed)) {
                return null;
            }
            Seen seen = new Seen(FileIdentity.of(stat), sha256, settings.crlfAsLf());
            long now = KeptResults.now();
            Hashes kept = KEPT.get(seen, now);
            if (kept != null) {
                return kept;
            }
            // a regular file at a link's entry: git trusts it when core.symlinks is false
            Hashes hashes = link ? linkHashes(file) : fileHashes(file, seen.file());
            KEPT.keep(seen, hashes, seen.file().changedNanos(), now, false);
            return hashes;
        }

        /**
         * Whether git takes the file as its entry by stat data (read-cache.c, {@code match_stat_data}
         * without USE_NSEC and USE_STDEV, git's default build): the low 32 bits of the size and of
         * the whole seconds of the modification time (rounded down, before 1970 too), and unless
         * core.checkStat is minimal, the change time's (unless core.trustctime is false), inode,
         * owner and group.
         */
        private boolean gitTrusts(GitIndex.Entry entry, Map<String, Object> stat, long size, FileTime modified,
                FileTime changed) {
            if ((size & MASK_32) != entry.size() || seconds(modified) != entry.mtimeSeconds()) {
                return false;
            }
            if (!settings.fullStat()) {
                return true;
            }
            return (!settings.trustCtime() || seconds(changed) == entry.ctimeSeconds())
                    && ((Long) stat.get("ino") & MASK_32) == entry.inode()
                    && ((Integer) stat.get("uid") & MASK_32) == entry.uid()
                    && ((Integer) stat.get("gid") & MASK_32) == entry.gid();
        }

        /** A link's blob is its target. */
        private Hashes linkHashes(Path file) throws IOException {
            String target = Files.readSymbolicLink(file).toString();
            if (target.indexOf('\uFFFD') >= 0) {
                throw new IOException("a link whose target is not UTF-8");
            }
            byte[] bytes = target.getBytes(StandardCharsets.UTF_8);
            MessageDigest digest = digest(sha256, bytes.length);
            digest.update(bytes);
            return new Hashes(digest.digest(), null);
        }

        /** The file's blob names, read through the tree's confined opening. */
        private Hashes fileHashes(Path file, FileIdentity seen) throws IOException {
            if (seen.size() > MAX_FILE_BYTES) {
                throw new IOException("larger than " + (MAX_FILE_BYTES >> 20) + " MiB, not read");
            }
            if (bytesRead + seen.size() > MAX_AUDIT_BYTES) {
                throw new IOException("past the " + (MAX_AUDIT_BYTES >> 30) + " GiB one audit reads");
            }
            Workspace files = directory.of(file.getParent().equals(tree.root) ? "." : tree.relative(file.getParent()));
            String name = file.getFileName().toString();
            try (OpenedFile opened = files.openFileVersion(name)) {
                requireSame(seen, opened);
                MessageDigest plain = digest(sha256, seen.size());
                CrlfAsLf counted = new CrlfAsLf(null);
                read(opened.channel(), seen.size(), (bytes, length) -> {
                    plain.update(bytes, 0, length);
                    if (settings.crlfAsLf()) {
                        counted.take(bytes, length);
                    }
                });
                if (counted.crlf == 0) {
                    return new Hashes(plain.digest(), null);
                }
                CrlfAsLf converted = new CrlfAsLf(digest(sha256, seen.size() - counted.crlf));
                read(opened.channel(), seen.size(), converted);
                return new Hashes(plain.digest(), converted.finish());
            } catch (WorkspaceException e) {
                if (e.reason() == WorkspaceException.Reason.NOT_FOUND) {
                    throw new Changed();
                }
                throw e;
            }
        }

        private void requireSame(FileIdentity seen, OpenedFile opened) throws Changed {
            if (!FileIdentity.of(opened).equals(seen)) {
                throw new Changed();
            }
        }
    }

    private static long seconds(FileTime time) {
        return time.toInstant().getEpochSecond() & MASK_32;
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream joined = new java.io.ByteArrayOutputStream();
        for (byte[] part : parts) {
            joined.writeBytes(part);
        }
        return joined.toByteArray();
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

    /**
     * The directory of the file last opened, kept open: an index lists its entries sorted by path,
     * so the files of one directory come one after the other, and each is opened from it.
     */
    private final class OpenDirectory implements AutoCloseable {
        private String name;
        private Workspace opened;

        Workspace of(String directory) throws IOException {
            if (!directory.equals(name)) {
                close();
                opened = tree.files.openSubtreeForReading(directory);
                name = directory;
            }
            return opened;
        }

        @Override
        public void close() {
            if (opened != null) {
                try {
                    opened.close();
                } catch (IOException ignored) {
                    // a directory handle opened for reading; nothing to recover
                }
            }
            opened = null;
            name = null;
        }
    }

    /** Takes what {@link #read} reads, a buffer at a time. */
    private interface Sink {
        void take(byte[] bytes, int length);
    }

    /** Hands the file's {@code size} bytes to {@code sink}, counted against the audit's budget. */
    private void read(FileChannel channel, long size, Sink sink) throws IOException {
        buffer.clear();
        long read = 0;
        for (int n = channel.read(buffer, 0); n > 0; n = channel.read(buffer, read)) {
            read += n;
            bytesRead += n;
            if (read > size) {
                throw new Changed();
            }
            sink.take(buffer.array(), n);
            buffer.clear();
        }
        if (read != size) {
            throw new Changed();
        }
    }

    /** Counts the CRLF in what it takes and, given a digest, feeds it each as LF. */
    private final class CrlfAsLf implements Sink {
        private final MessageDigest digest;
        long crlf;
        private boolean carriageReturn;

        CrlfAsLf(MessageDigest digest) {
            this.digest = digest;
        }

        @Override
        public void take(byte[] bytes, int length) {
            int kept = 0;
            for (int i = 0; i < length; i++) {
                byte b = bytes[i];
                if (carriageReturn && b == '\n') {
                    crlf++;
                } else if (carriageReturn) {
                    out[kept++] = '\r'; // held back: not followed by LF, so it stays
                }
                carriageReturn = b == '\r';
                if (!carriageReturn) {
                    out[kept++] = b;
                }
            }
            if (digest != null) {
                digest.update(out, 0, kept);
            }
        }

        byte[] finish() {
            if (carriageReturn) {
                digest.update((byte) '\r');
            }
            return digest.digest();
        }
    }

    /** A digest with git's blob header already in it. */
    private static MessageDigest digest(boolean sha256, long size) {
        try {
            MessageDigest digest = MessageDigest.getInstance(sha256 ? "SHA-256" : "SHA-1");
            digest.update(("blob " + size + "\0").getBytes(StandardCharsets.US_ASCII));
            return digest;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
