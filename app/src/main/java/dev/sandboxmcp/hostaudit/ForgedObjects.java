package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.OpenedFile;
import dev.sandboxmcp.workspace.PinnedFile;
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
import java.util.stream.Stream;
import java.util.function.Function;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.HashSet;
import java.util.Map;
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
 *   what git reads      where                                        checked by
 *   loose objects       objects/xx/yyyy...                           inflated and hashed here
 *   packs               objects/pack/*.idx and .pack                 git index-pack --verify
 *   multi-pack-index    objects/pack/multi-pack-index(.d/)           git multi-pack-index verify
 *   commit-graph        objects/info/commit-graph or commit-graphs/  git commit-graph verify, and
 *                                                                    any changed-path filter named
 * </pre>
 *
 * git runs sealed ({@link SealedGit}) on the files the audit holds open, so it reads what the
 * audit identified and nothing else of the repository. Each check is kept under the identities
 * of the files it read ({@link KeptResults}): the watcher checks a pack again only when it
 * changes, and what may be kept for good is saved for the next audit ({@link #saveChecked}).
 * One audit inflates, and hands git, a bounded amount, in a bounded time, with bounded memory
 * for git; the rest is named as not audited, and the next audit goes on from there.
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
    static final String CHANGED_PATHS = "commit-graph with changed-path filters, which git commit-graph verify does "
            + "not check (git log -- <path> and git blame may leave commits out; git commit-graph write --reachable "
            + "--no-changed-paths writes one without)";
    static final String UNREAD = "(not audited)";

    /** What one audit inflates of loose objects at most; later audits check the rest. */
    static final long MAX_INFLATED_BYTES = 4L << 30;
    /**
     * What one audit hands git to check at most (about a minute on two cores: git's own history,
     * a 496 MB pack, takes 30 s); later audits check the rest, as what was checked is kept.
     */
    static final long MAX_GIT_CHECKED_BYTES = 1L << 30;
    /** The most time one audit gives git; a check that would start past it waits for the next audit. */
    static final long MAX_GIT_NANOS = TimeUnit.MINUTES.toNanos(2);
    /** git's own time to verify, on top of its reading at the slowest rate expected ({@link #BYTES_PER_SECOND}). */
    private static final long BASE_TIMEOUT_MILLIS = 10_000;
    private static final long BYTES_PER_SECOND = 8L << 20;
    /** git's address space: this, and twice what it checks (a delta that expands to gigabytes fails instead). */
    private static final long BASE_GIT_MEMORY = 1L << 30;
    /** The most loose objects whose names are kept for a commit-graph's check; past it, its check names what it misses. */
    private static final int MAX_LOOSE_NAMES = 1 << 20;
    /** A loose object's header: {@code <type> <size>\0}, within this many bytes. */
    private static final int MAX_HEADER_BYTES = 32;
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

        static Identity of(PinnedFile.Stat stat) {
            return new Identity(stat.fileKey(), stat.size(), stat.modified().to(TimeUnit.NANOSECONDS),
                    stat.changed().to(TimeUnit.NANOSECONDS));
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
    private long gitNanos;

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
        Set<String> loose = new HashSet<>();
        tree.audited(objects, () -> looseObjects(objects, sha256, writtenBack, loose));
        try (SealedGit sealed = new SealedGit(git, sha256)) {
            Checks checks = new Checks(objects, sealed, writtenBack);
            List<String> packs = new ArrayList<>();
            tree.audited(objects.resolve("pack"), () -> packs.addAll(packs(objects.resolve("pack"))));
            for (String pack : packs) {
                List<String> args = new ArrayList<>(List.of("index-pack"));
                if (sha256) {
                    args.add("--object-format=sha256");
                }
                args.add("--verify");
                Path data = objects.resolve(pack + ".pack");
                tree.audited(data, () -> checks.run(data, FORGED_PACK, List.of(pack + ".pack", pack + ".idx"),
                        sealedObjects -> concat(args, sealedObjects.resolve(pack + ".pack").toString())));
            }
            List<String> packFiles = packs.stream().flatMap(pack -> Stream.of(pack + ".pack", pack + ".idx")).toList();
            tree.audited(objects.resolve("pack"), () -> multiPackIndex(checks, packFiles));
            tree.audited(objects.resolve("info"), () -> commitGraph(checks, packFiles, loose, sha256));
        } catch (IOException e) {
            tree.notAudited(objects, e);
        }
    }

    // Loose objects: objects/<2 hex>/<the rest>, each the zlib stream of "<type> <size>\0<content>".

    private void looseObjects(Path objects, boolean sha256, boolean writtenBack, Set<String> loose) throws IOException {
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
                        if (loose.size() < MAX_LOOSE_NAMES) {
                            loose.add(name);
                        }
                        try {
                            byte[] hash = looseObjectHash(files, file, sha256, writtenBack);
                            if (!Arrays.equals(hash, HEX.parseHex(name))) {
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
        Checked kept = KEPT.get(List.of(Identity.of(file)), now);
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
     * The hash of the inflated stream, as git names the object. What git refuses to read (no
     * {@code <type> <size>\0} header, a stream that does not inflate or ends early, more than its
     * header's size) hashes to nothing, all zeros: no name is that. What one audit inflates is
     * bounded, and a header's size is charged before anything is inflated.
     */
    private byte[] inflatedHash(OpenedFile opened, boolean sha256) throws IOException {
        MessageDigest digest = digest(sha256);
        byte[] refused = new byte[digest.getDigestLength()];
        Inflater inflater = new Inflater();
        try {
            long position = 0;
            long expected = -1; // the header's length and size, once read
            long inflated = 0;
            byte[] header = new byte[MAX_HEADER_BYTES];
            while (!inflater.finished()) {
                if (inflater.needsInput()) {
                    int n = opened.channel().read(ByteBuffer.wrap(in), position);
                    if (n <= 0) {
                        return refused;
                    }
                    position += n;
                    inflater.setInput(in, 0, n);
                }
                int n = inflater.inflate(out, 0, expected < 0 ? Math.min(out.length, MAX_HEADER_BYTES - (int) inflated) : out.length);
                if (n == 0 && inflater.needsDictionary()) {
                    return refused;
                }
                if (expected < 0) {
                    System.arraycopy(out, 0, header, (int) inflated, n);
                    expected = headerAndSize(header, (int) (inflated + n));
                    if (expected == -2) {
                        return refused;
                    }
                    if (expected >= 0) {
                        if (bytesInflated + expected > MAX_INFLATED_BYTES) {
                            throw new IOException("past the " + (MAX_INFLATED_BYTES >> 30) + " GiB of objects one audit inflates");
                        }
                        bytesInflated += expected;
                    }
                }
                inflated += n;
                if (expected >= 0 && inflated > expected) {
                    return refused;
                }
                digest.update(out, 0, n);
            }
            return inflated == expected ? digest.digest() : refused;
        } catch (DataFormatException e) {
            return refused;
        } finally {
            inflater.end();
        }
    }

    /**
     * The length of a loose object's header and content, from the first {@code length} bytes
     * inflated: -1 when more are needed, -2 when git would not take it ({@code object-file.c}).
     */
    static long headerAndSize(byte[] bytes, int length) {
        for (int i = 0; i < length; i++) {
            if (bytes[i] == 0) {
                String header = new String(bytes, 0, i, StandardCharsets.US_ASCII);
                int space = header.indexOf(' ');
                if (space < 0 || !Set.of("blob", "tree", "commit", "tag").contains(header.substring(0, space))) {
                    return -2;
                }
                String size = header.substring(space + 1);
                if (size.isEmpty() || size.length() > 18 || !size.chars().allMatch(c -> c >= '0' && c <= '9')
                        || size.length() > 1 && size.charAt(0) == '0') {
                    return -2;
                }
                return i + 1 + Long.parseLong(size);
            }
        }
        return length >= MAX_HEADER_BYTES ? -2 : -1;
    }

    // Packs, the multi-pack-index and the commit-graph: checked by git, sealed, on files held open.

    /** The packs git reads: one per {@code .idx} beside its {@code .pack}, as {@code pack/<name>} without suffix. */
    private List<String> packs(Path pack) throws IOException {
        List<String> packs = new ArrayList<>();
        if (!Files.isDirectory(pack, NOFOLLOW)) {
            return packs;
        }
        try (DirectoryStream<Path> names = Files.newDirectoryStream(pack, "*.idx")) {
            for (Path index : names) {
                String name = index.getFileName().toString();
                if (name.indexOf('\uFFFD') >= 0) {
                    tree.add(index, UNREAD, "a name that is not UTF-8: git reads it, the audit cannot");
                    continue;
                }
                String base = name.substring(0, name.length() - ".idx".length());
                if (Files.exists(pack.resolve(base + ".pack"), NOFOLLOW)) { // git skips an index without its pack
                    packs.add("pack/" + base);
                }
            }
        }
        packs.sort(null);
        return packs;
    }

    /** The multi-pack-index git reads, one file or a chain (git 2.47 on), checked against the packs it may name. */
    private void multiPackIndex(Checks checks, List<String> packFiles) throws IOException {
        List<String> indexes = oneOrAChain(checks.objects, "pack/multi-pack-index", "pack/multi-pack-index.d");
        if (!indexes.isEmpty()) {
            checks.run(checks.objects.resolve(indexes.getFirst()), FORGED_MULTI_PACK_INDEX, concat(indexes, packFiles),
                    sealedObjects -> List.of("multi-pack-index", "--object-dir=" + sealedObjects, "verify", "--no-progress"));
        }
    }

    /**
     * The commit-graph git reads (one file, or else a chain), checked against the commits in the
     * packs and the loose ones it names (read from the files as pinned); changed-path filters in
     * it are named as such.
     */
    private void commitGraph(Checks checks, List<String> packFiles, Set<String> loose, boolean sha256) throws IOException {
        List<String> graphs = oneOrAChain(checks.objects, "info/commit-graph", "info/commit-graphs");
        if (graphs.isEmpty()) {
            return;
        }
        checks.run(checks.objects.resolve(graphs.getFirst()), FORGED_COMMIT_GRAPH, graphs, pinned -> {
            List<String> more = new ArrayList<>(packFiles);
            for (Map.Entry<String, PinnedFile> graph : pinned.entrySet()) {
                CommitGraphFile read;
                try (var channel = java.nio.channels.FileChannel.open(graph.getValue().path())) {
                    read = CommitGraphFile.read(channel, sha256 ? GitIndex.SHA256_BYTES : GitIndex.SHA1_BYTES, loose);
                }
                if (read != null) {
                    read.commits().forEach(commit -> more.add(commit.substring(0, 2) + "/" + commit.substring(2)));
                    if (read.changedPaths()) {
                        Path file = checks.objects.resolve(graph.getKey());
                        tree.add(file, CHANGED_PATHS, "the file " + Identity.of(graph.getValue().stat()));
                    }
                }
            }
            return more;
        }, sealedObjects -> List.of("commit-graph", "verify", "--object-dir=" + sealedObjects, "--no-progress"));
    }

    /** {@code single} when it exists, then the files of the directory {@code chain}, sorted; names under {@code objects}. */
    private static List<String> oneOrAChain(Path objects, String single, String chain) throws IOException {
        List<String> files = new ArrayList<>();
        if (Files.exists(objects.resolve(single), NOFOLLOW)) {
            files.add(single);
        }
        if (Files.isDirectory(objects.resolve(chain), NOFOLLOW)) {
            try (var names = Files.list(objects.resolve(chain))) {
                names.map(name -> chain + "/" + name.getFileName()).sorted().forEach(files::add);
            }
        }
        return files;
    }

    /** More files to pin, read from those pinned so far. */
    private interface Pinned {
        List<String> names(Map<String, PinnedFile> pinned) throws IOException;
    }

    /** The checks git makes of one object directory, within this audit's bounds. */
    private final class Checks {
        final Path objects;
        final SealedGit sealed;
        final boolean writtenBack;

        Checks(Path objects, SealedGit sealed, boolean writtenBack) {
            this.objects = objects;
            this.sealed = sealed;
            this.writtenBack = writtenBack;
        }

        /**
         * Runs git's check {@code args} (made of the sealed object directory) on {@code files},
         * named under the object directory and held open while git reads them; what git
         * complains of is a finding about {@code shown}. Kept for the files' identities, unless
         * one changed while git read it (the next round checks again; a complaint is reported all
         * the same); a check that ran out of time is a complaint, kept the same way. A file gone
         * meanwhile is skipped, as git no longer reads it; one that is not a regular file is a
         * finding instead.
         */
        void run(Path shown, String key, List<String> files, Function<Path, List<String>> args) throws IOException {
            run(shown, key, files, pinned -> List.of(), args);
        }

        /** As above, with the files {@code more} names once {@code files} are pinned (read from them) pinned too. */
        void run(Path shown, String key, List<String> files, Pinned more, Function<Path, List<String>> args)
                throws IOException {
            Map<String, PinnedFile> pinned = new LinkedHashMap<>();
            try {
                if (!pinAll(files, pinned) || !pinAll(more.names(Map.copyOf(pinned)), pinned)) {
                    return;
                }
                List<Identity> read = identities(pinned);
                long now = KeptResults.now();
                Checked checked = KEPT.get(read, now);
                if (checked == null) {
                    long bytes = read.stream().mapToLong(Identity::size).sum();
                    if (bytesChecked + bytes > MAX_GIT_CHECKED_BYTES || gitNanos >= MAX_GIT_NANOS) {
                        throw new IOException("past the " + (MAX_GIT_CHECKED_BYTES >> 30) + " GiB or "
                                + TimeUnit.NANOSECONDS.toMinutes(MAX_GIT_NANOS) + " minutes one audit has git check; "
                                + "the next audit goes on");
                    }
                    bytesChecked += bytes;
                    long started = System.nanoTime();
                    String complaint;
                    try {
                        HostGit.Result result = sealed.run(pinned, args, BASE_TIMEOUT_MILLIS + bytes * 1000 / BYTES_PER_SECOND,
                                BASE_GIT_MEMORY + 2 * bytes);
                        complaint = result.exit() == 0 ? "" : complaint(result);
                    } catch (HostGit.TimedOut e) {
                        complaint = "not verified: " + e.getMessage();
                    } finally {
                        gitNanos += System.nanoTime() - started;
                    }
                    checked = new Checked(null, complaint.replace(sealed.objectsPrefix(), "").replace(tree.root + "/", ""));
                    if (read.equals(identities(pinned))) {
                        long latest = read.stream().mapToLong(Identity::changedNanos).max().orElse(now);
                        KEPT.keep(read, checked, latest, now, writtenBack);
                    }
                }
                if (!checked.complaint().isEmpty()) {
                    tree.add(shown, key, checked.complaint());
                }
            } finally {
                pinned.values().forEach(PinnedFile::close);
            }
        }

        /** Pins each of {@code names}; false when one is gone or not a regular file. */
        private boolean pinAll(List<String> names, Map<String, PinnedFile> pinned) throws IOException {
            for (String name : names) {
                PinnedFile pin = pin(objects.resolve(name));
                if (pin == null) {
                    return false;
                }
                pinned.put(name, pin);
            }
            return true;
        }

        /** The file held open; null when it is gone, or is not a regular file (a finding: git may wait on a FIFO). */
        private PinnedFile pin(Path file) throws IOException {
            try {
                return tree.files.pinFile(tree.relative(file));
            } catch (WorkspaceException e) {
                switch (e.reason()) {
                    case NOT_FOUND -> {
                        return null;
                    }
                    case NOT_A_REGULAR_FILE, IS_DIRECTORY -> {
                        tree.add(file, "(not a regular file)", "git may read it, the audit does not: " + AuditedTree.kind(file));
                        return null;
                    }
                    default -> throw e;
                }
            }
        }

        private static List<Identity> identities(Map<String, PinnedFile> pinned) throws IOException {
            List<Identity> identities = new ArrayList<>();
            for (PinnedFile pin : pinned.values()) {
                identities.add(Identity.of(pin.stat()));
            }
            return identities;
        }
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

    @SafeVarargs
    private static <T> List<T> concat(List<T>... lists) {
        List<T> all = new ArrayList<>();
        for (List<T> list : lists) {
            all.addAll(list);
        }
        return all;
    }

    private static List<String> concat(List<String> list, String last) {
        List<String> all = new ArrayList<>(list);
        all.add(last);
        return all;
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
}
