package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.OpenedFile;
import dev.sandboxmcp.workspace.Workspace;
import dev.sandboxmcp.workspace.WorkspaceException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * The part of the audit that checks that a git directory's objects are what their names say.
 * git trusts a name: it does not hash what it reads under it. A command that rewrites an object
 * in place, or the index of a pack, or the multi-pack-index (which sends names to packs), or the
 * commit-graph (which gives commits their trees and parents) changes what {@code git checkout},
 * {@code git reset --hard}, {@code git show}, {@code git log} or {@code git status} take from the
 * object store, while the index and the refs still name the objects you reviewed.
 *
 * <pre>
 *   what git reads            where                                     checked by
 *   loose objects             objects/xx/yyyy...                        inflated and hashed here
 *   packs                     objects/pack/*.idx and .pack              git index-pack --verify
 *   multi-pack-index          objects/pack/multi-pack-index             git multi-pack-index verify
 *   commit-graph              objects/info/commit-graph, commit-graphs/ git commit-graph verify
 * </pre>
 *
 * The host's git runs sealed: from an empty repository of the audit's own ({@link Sealed}), whose
 * only alternate is the object directory, with neither the system's nor the user's configuration:
 * it reads objects and nothing else of the audited repository (no config, no hook). What was
 * checked is kept under the files' identities ({@link KeptResults}), so the watcher checks a pack
 * again only when it changes.
 */
final class ForgedObjects {

    static final String FORGED = "objects whose content does not hash to their names (git show, git checkout and git "
            + "reset --hard give this content for them, and git status and git diff do not show it; git fsck reports it)";
    static final String FORGED_PACK = "pack whose objects are not what its index names (git reads other content for "
            + "those names; git verify-pack reports it)";
    static final String FORGED_MULTI_PACK_INDEX = "multi-pack-index that does not match its packs (git reads other "
            + "objects for the names it sends astray; git multi-pack-index verify reports it)";
    static final String FORGED_COMMIT_GRAPH = "commit-graph that does not match the commits (git status and git log "
            + "take trees and parents from it; git commit-graph verify reports it)";
    static final String UNREAD = "(not audited)";

    /** What one audit inflates of loose objects at most; later audits check the rest. */
    static final long MAX_INFLATED_BYTES = 4L << 30;
    /**
     * What one audit hands git to check at most (about a minute on two cores: git's own history,
     * a 496 MB pack, takes 30 s); later audits check the rest, as what was checked is kept.
     */
    static final long MAX_GIT_CHECKED_BYTES = 1L << 30;
    /** git's own time to verify, on top of its reading at the slowest rate expected ({@link #BYTES_PER_SECOND}). */
    private static final long BASE_TIMEOUT_MILLIS = 30_000;
    private static final long BYTES_PER_SECOND = 8L << 20;
    private static final int MAX_GIT_OUTPUT = 1 << 20;
    /** The lines of git's complaint a finding shows. */
    private static final int SHOWN_LINES = 3;
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final HexFormat HEX = HexFormat.of();

    /** A file as its stat data says it is, the key under which what was checked of it is kept. */
    record Identity(String fileKey, long size, long modifiedNanos, long changedNanos) {
        static Identity of(Path file) throws IOException {
            Map<String, Object> stat = Files.readAttributes(file, "unix:fileKey,size,lastModifiedTime,ctime");
            return new Identity(String.valueOf(stat.get("fileKey")), (Long) stat.get("size"),
                    ((FileTime) stat.get("lastModifiedTime")).to(TimeUnit.NANOSECONDS),
                    ((FileTime) stat.get("ctime")).to(TimeUnit.NANOSECONDS));
        }

        static Identity of(OpenedFile opened) {
            return new Identity(String.valueOf(opened.fileKey()), opened.size(), opened.modified().to(TimeUnit.NANOSECONDS),
                    opened.changed().to(TimeUnit.NANOSECONDS));
        }

        /** As {@link #parse} reads it: {@code (dev=...,ino=...)/size/modified/changed}. */
        @Override
        public String toString() {
            return fileKey + "/" + size + "/" + modifiedNanos + "/" + changedNanos;
        }

        static Identity parse(String text) {
            String[] fields = text.split("/");
            if (fields.length != 4 || !fields[0].startsWith("(dev=")) {
                throw new IllegalArgumentException("not an identity: " + text);
            }
            return new Identity(fields[0], Long.parseLong(fields[1]), Long.parseLong(fields[2]), Long.parseLong(fields[3]));
        }
    }

    /** What a check found: the hash of a loose object's content, or git's complaint (empty: none). */
    private record Checked(byte[] hash, String complaint) {
    }

    /** Loose objects (one identity) and git's checks (the identities of every file it read), kept between rounds. */
    private static final KeptResults<List<Identity>, Checked> KEPT = new KeptResults<>(200_000);

    /** Where what was checked is saved for the tree whose baseline is {@code baselineFile}: beside it. */
    static Path checkedFile(Path baselineFile) {
        return baselineFile.resolveSibling(baselineFile.getFileName().toString().replace(".json", "-checked.tsv"));
    }

    /**
     * Keeps what an earlier audit of the same tree saved in {@code file} ({@link #saveChecked}),
     * so that a pack is verified once and not at every {@code make audit}. A line that cannot be
     * read is skipped (its files are checked again).
     */
    static void loadChecked(Path file) throws IOException {
        if (!Files.isRegularFile(file, NOFOLLOW)) {
            return;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String[] fields = line.split("\t", -1);
            try {
                if (fields.length != 3) {
                    continue;
                }
                List<Identity> read = Arrays.stream(fields[0].split(" ")).map(Identity::parse).toList();
                KEPT.keepLasting(read, new Checked(fields[1].equals("-") ? null : HEX.parseHex(fields[1]), fields[2]));
            } catch (IllegalArgumentException unreadable) {
                // checked again
            }
        }
    }

    /**
     * Saves to {@code file} (mode 0600, replaced whole) what this process checked and may keep for
     * as long as its files stay ({@link KeptResults}), of the files it saw since the last save.
     */
    static void saveChecked(Path file) throws IOException {
        StringBuilder text = new StringBuilder();
        KEPT.lastingInUse().forEach((read, checked) -> text
                .append(String.join(" ", read.stream().map(Identity::toString).toList())).append('\t')
                .append(checked.hash() == null ? "-" : HEX.formatHex(checked.hash())).append('\t')
                .append(checked.complaint()).append('\n'));
        if (text.isEmpty() && !Files.exists(file, NOFOLLOW)) {
            return;
        }
        Files.createDirectories(file.getParent());
        Path temp = Files.createTempFile(file.getParent(), ".checked-", ".tmp",
                java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(temp, text, StandardCharsets.UTF_8);
            Files.move(temp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    private final AuditedTree tree;
    private final HostGit git;
    private final byte[] in = new byte[64 * 1024];
    private final byte[] out = new byte[64 * 1024];
    private long bytesInflated;
    private long bytesChecked;

    ForgedObjects(AuditedTree tree, HostGit git) {
        this.tree = tree;
        this.git = git;
    }

    /** Checks the object directory {@code objects} (a git directory's own; none in a linked worktree's). */
    void audit(Path objects, boolean sha256) {
        if (Files.isSymbolicLink(objects)) {
            tree.audited(objects, () -> tree.add(objects, "symbolic link (git reads its objects there)",
                    Files.readSymbolicLink(objects).toString()));
            return;
        }
        if (!Files.isDirectory(objects, NOFOLLOW)) {
            return;
        }
        boolean writtenBack = KeptResults.writtenBack(objects);
        tree.audited(objects, () -> looseObjects(objects, sha256, writtenBack));
        Sealed.Lazy sealed = new Sealed.Lazy(objects, sha256);
        try {
            List<Path> packs = new ArrayList<>();
            tree.audited(objects.resolve("pack"), () -> packs.addAll(packs(objects.resolve("pack"), sha256, sealed, writtenBack)));
            tree.audited(objects.resolve("pack"), () -> multiPackIndex(objects, packs, sealed, writtenBack));
            tree.audited(objects.resolve("info"), () -> commitGraph(objects, sealed, writtenBack));
        } finally {
            tree.audited(objects, sealed::close);
        }
    }

    // Loose objects: objects/<2 hex>/<the rest>, each the zlib stream of "<type> <size>\0<content>".

    private void looseObjects(Path objects, boolean sha256, boolean writtenBack) throws IOException {
        int restLength = (sha256 ? GitIndex.SHA256_BYTES : GitIndex.SHA1_BYTES) * 2 - 2;
        GitIndex.Collector forged = new GitIndex.Collector(FORGED);
        GitIndex.Collector unread = new GitIndex.Collector(UNREAD);
        String firstReason = null;
        try (DirectoryStream<Path> fanout = Files.newDirectoryStream(objects, ForgedObjects::isFanout)) {
            for (Path directory : fanout) {
                if (!Files.isDirectory(directory, NOFOLLOW)) {
                    tree.add(directory, "(not a regular directory)", "git reads objects through it: " + AuditedTree.kind(directory));
                    continue;
                }
                try (Workspace files = tree.files.openSubtreeForReading(tree.relative(directory));
                        DirectoryStream<Path> names = Files.newDirectoryStream(directory,
                                name -> isHex(name.getFileName().toString(), restLength))) {
                    for (Path file : names) {
                        String name = directory.getFileName().toString() + file.getFileName();
                        byte[] objectName = HEX.parseHex(name);
                        try {
                            byte[] hash = looseObjectHash(files, file, sha256, writtenBack);
                            if (!Arrays.equals(hash, objectName)) {
                                forged.add(name.getBytes(StandardCharsets.US_ASCII), hash);
                            }
                        } catch (java.nio.file.NoSuchFileException gone) {
                            // removed since the listing (git gc, git prune): git no longer reads it either
                        } catch (IOException e) {
                            unread.add(name.getBytes(StandardCharsets.US_ASCII), reason(e).getBytes(StandardCharsets.UTF_8));
                            firstReason = firstReason == null ? reason(e) : firstReason;
                        }
                    }
                }
            }
        }
        if (forged.count > 0) {
            tree.add(objects, FORGED, forged.flagged().described(": "));
        }
        if (unread.count > 0) {
            tree.add(objects, UNREAD, unread.flagged().described(" not checked (" + firstReason + "): "));
        }
    }

    /** The hash of what the loose object {@code file} holds, kept for its identity. */
    private byte[] looseObjectHash(Workspace files, Path file, boolean sha256, boolean writtenBack) throws IOException {
        long now = KeptResults.now();
        List<Identity> key = List.of(Identity.of(file));
        Checked kept = KEPT.get(key, now);
        if (kept != null) {
            return kept.hash();
        }
        try (OpenedFile opened = files.openFileVersion(file.getFileName().toString())) {
            List<Identity> read = List.of(Identity.of(opened));
            byte[] hash = inflatedHash(opened, sha256);
            KEPT.keep(read, new Checked(hash, ""), read.getFirst().changedNanos(), now, writtenBack);
            return hash;
        } catch (WorkspaceException e) {
            throw switch (e.reason()) {
                case NOT_FOUND -> new java.nio.file.NoSuchFileException(file.toString());
                case NOT_A_REGULAR_FILE, IS_DIRECTORY -> new IOException("not a regular file", e);
                default -> e;
            };
        }
    }

    /**
     * The hash of the inflated stream, as git names the object. A stream that does not inflate
     * (git refuses to read it, so nothing forged comes of it) hashes to nothing: all zeros.
     */
    private byte[] inflatedHash(OpenedFile opened, boolean sha256) throws IOException {
        MessageDigest digest = digest(sha256);
        Inflater inflater = new Inflater();
        try {
            long position = 0;
            while (!inflater.finished()) {
                if (inflater.needsInput()) {
                    int n = opened.channel().read(ByteBuffer.wrap(in), position);
                    if (n <= 0) {
                        return new byte[digest.getDigestLength()];
                    }
                    position += n;
                    inflater.setInput(in, 0, n);
                }
                int n = inflater.inflate(out);
                if (n == 0 && inflater.needsDictionary()) {
                    return new byte[digest.getDigestLength()];
                }
                bytesInflated += n;
                if (bytesInflated > MAX_INFLATED_BYTES) {
                    throw new IOException("past the " + (MAX_INFLATED_BYTES >> 30) + " GiB of objects one audit inflates");
                }
                digest.update(out, 0, n);
            }
            return digest.digest();
        } catch (DataFormatException e) {
            return new byte[digest.getDigestLength()];
        } finally {
            inflater.end();
        }
    }

    // Packs, the multi-pack-index and the commit-graph: checked by git, sealed.

    /** Checks each pack git reads (one per {@code .idx} beside its {@code .pack}); returns all their files. */
    private List<Path> packs(Path pack, boolean sha256, Sealed.Lazy sealed, boolean writtenBack) throws IOException {
        List<Path> all = new ArrayList<>();
        if (!Files.isDirectory(pack, NOFOLLOW)) {
            return all;
        }
        Map<Path, Path> indexes = new TreeMap<>();
        try (DirectoryStream<Path> names = Files.newDirectoryStream(pack, "*.idx")) {
            for (Path index : names) {
                String name = index.getFileName().toString();
                indexes.put(index, pack.resolve(name.substring(0, name.length() - ".idx".length()) + ".pack"));
            }
        }
        for (Map.Entry<Path, Path> entry : indexes.entrySet()) {
            Path data = entry.getValue();
            if (!Files.exists(data, NOFOLLOW)) {
                continue; // git skips an index without its pack
            }
            List<Path> files = List.of(data, entry.getKey());
            all.addAll(files);
            List<String> args = new ArrayList<>(List.of("index-pack"));
            if (sha256) {
                args.add("--object-format=sha256");
            }
            args.addAll(List.of("--verify", data.toString()));
            tree.audited(data, () -> check(data, FORGED_PACK, files, args, sealed, writtenBack));
        }
        return all;
    }

    /** The multi-pack-index git reads: one file, or a chain of them (git 2.47 on). */
    private void multiPackIndex(Path objects, List<Path> packs, Sealed.Lazy sealed, boolean writtenBack) throws IOException {
        List<Path> indexes = oneOrAChain(objects.resolve("pack/multi-pack-index"), objects.resolve("pack/multi-pack-index.d"));
        if (indexes.isEmpty()) {
            return;
        }
        List<Path> files = new ArrayList<>(indexes);
        files.addAll(packs);
        tree.audited(indexes.getFirst(), () -> check(indexes.getFirst(), FORGED_MULTI_PACK_INDEX, files,
                List.of("multi-pack-index", "--object-dir=" + objects, "verify", "--no-progress"), sealed, writtenBack));
    }

    /** The commit-graph git reads: one file, or a chain of them. */
    private void commitGraph(Path objects, Sealed.Lazy sealed, boolean writtenBack) throws IOException {
        List<Path> graphs = oneOrAChain(objects.resolve("info/commit-graph"), objects.resolve("info/commit-graphs"));
        if (graphs.isEmpty()) {
            return;
        }
        check(graphs.getFirst(), FORGED_COMMIT_GRAPH, graphs,
                List.of("commit-graph", "verify", "--object-dir=" + objects, "--no-progress"), sealed, writtenBack);
    }

    /** {@code single} when it exists, then the files of the directory {@code chain}, sorted; the first is the one a finding names. */
    private static List<Path> oneOrAChain(Path single, Path chain) throws IOException {
        List<Path> files = new ArrayList<>();
        if (Files.exists(single, NOFOLLOW)) {
            files.add(single);
        }
        if (Files.isDirectory(chain, NOFOLLOW)) {
            try (var names = Files.list(chain)) {
                files.addAll(names.sorted().toList());
            }
        }
        return files;
    }

    /**
     * Runs git's check {@code args} of {@code files}; what it complains of is a finding about
     * {@code shown}. Kept for the files' identities, unless one changed while git read them (the
     * next round checks again; a complaint is reported all the same). A file gone meanwhile is
     * skipped, as git no longer reads it; one that is not a regular file is a finding instead:
     * git may follow a link, or wait on a FIFO, that the audit does not hand it.
     */
    private void check(Path shown, String key, List<Path> files, List<String> args, Sealed.Lazy sealed, boolean writtenBack)
            throws IOException {
        List<Identity> read = identities(files);
        if (read == null) {
            return;
        }
        long now = KeptResults.now();
        Checked checked = KEPT.get(read, now);
        if (checked == null) {
            long bytes = read.stream().mapToLong(Identity::size).sum();
            if (bytesChecked + bytes > MAX_GIT_CHECKED_BYTES) {
                throw new IOException("past the " + (MAX_GIT_CHECKED_BYTES >> 30) + " GiB one audit has git check; "
                        + "the next audit checks it");
            }
            bytesChecked += bytes;
            Sealed repository = sealed.get();
            HostGit.Result result = git.run(args, repository.directory(), repository.environment(), new byte[0],
                    BASE_TIMEOUT_MILLIS + bytes * 1000 / BYTES_PER_SECOND, MAX_GIT_OUTPUT);
            List<Identity> after = identities(files);
            if (after == null) {
                return;
            }
            checked = new Checked(null, result.exit() == 0 ? ""
                    : complaint(result).replace(repository.directory() + "/", "").replace(tree.root + "/", ""));
            if (read.equals(after)) {
                long latest = read.stream().mapToLong(Identity::changedNanos).max().orElse(now);
                KEPT.keep(read, checked, latest, now, writtenBack);
            }
        }
        if (!checked.complaint().isEmpty()) {
            tree.add(shown, key, checked.complaint());
        }
    }

    /**
     * The identities of {@code files}, each a regular file; null when one is gone, or is not a
     * regular file (a finding).
     */
    private List<Identity> identities(List<Path> files) throws IOException {
        List<Identity> identities = new ArrayList<>();
        for (Path file : files) {
            try {
                if (!Files.isRegularFile(file, NOFOLLOW)) {
                    if (Files.exists(file, NOFOLLOW)) {
                        tree.add(file, "(not a regular file)", "git may read it, the audit does not: " + AuditedTree.kind(file));
                    }
                    return null;
                }
                identities.add(Identity.of(file));
            } catch (java.nio.file.NoSuchFileException gone) {
                return null;
            }
        }
        return identities;
    }

    /** The first lines git printed, its progress left out. */
    private static String complaint(HostGit.Result result) {
        List<String> lines = new ArrayList<>();
        for (String line : (result.stderr() + "\n" + result.stdout()).split("\n")) {
            if (!line.isBlank() && lines.size() < SHOWN_LINES) {
                lines.add(line.strip());
            }
        }
        return lines.isEmpty() ? "git exited with " + result.exit() : String.join("; ", lines).replace('\t', ' ');
    }

    private static String reason(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    private static boolean isFanout(Path path) {
        return isHex(path.getFileName().toString(), 2);
    }

    /** Lower-case hex digits, {@code length} of them: the only names git reads objects under. */
    private static boolean isHex(String name, int length) {
        if (name.length() != length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char c = name.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    private static MessageDigest digest(boolean sha256) {
        try {
            return MessageDigest.getInstance(sha256 ? "SHA-256" : "SHA-1");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * An empty repository of the audit's own (its object format the audited one's), whose only
     * alternate is the audited object directory: git run in it reads those objects and nothing
     * else of the audited repository. Removed when closed.
     */
    record Sealed(Path directory, Path gitDirectory) implements AutoCloseable {

        static Sealed create(Path objects, boolean sha256) throws IOException {
            String alternate = objects.toRealPath().toString();
            if (alternate.contains("\n") || alternate.startsWith("\"")) {
                throw new IOException("a path git cannot take as an alternate");
            }
            Path directory = Files.createTempDirectory("sandbox-mcp-audit-");
            Path gitDirectory = directory.resolve("sealed.git");
            Files.createDirectories(gitDirectory.resolve("objects/info"));
            Files.createDirectories(gitDirectory.resolve("refs"));
            Files.writeString(gitDirectory.resolve("HEAD"), "ref: refs/heads/sealed\n");
            Files.writeString(gitDirectory.resolve("config"), "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
                    + "[extensions]\n\tobjectformat = " + (sha256 ? "sha256" : "sha1") + "\n");
            Files.writeString(gitDirectory.resolve("objects/info/alternates"), alternate + "\n");
            return new Sealed(directory, gitDirectory);
        }

        /** Made when first needed: most rounds check nothing with git. */
        static final class Lazy implements AutoCloseable {
            private final Path objects;
            private final boolean sha256;
            private Sealed made;

            Lazy(Path objects, boolean sha256) {
                this.objects = objects;
                this.sha256 = sha256;
            }

            Sealed get() throws IOException {
                if (made == null) {
                    made = create(objects, sha256);
                }
                return made;
            }

            @Override
            public void close() throws IOException {
                if (made != null) {
                    made.close();
                }
            }
        }

        Map<String, String> environment() {
            Map<String, String> environment = new java.util.HashMap<>(HostGit.ISOLATED);
            environment.put("GIT_DIR", gitDirectory.toString());
            environment.put("HOME", directory.toString());
            return environment;
        }

        @Override
        public void close() throws IOException {
            try (var walk = Files.walk(directory)) {
                for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }
}
