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
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
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
    /** git's address space: this, and twice what it checks, up to {@link #MAX_GIT_MEMORY} (a delta that expands further fails). */
    private static final long BASE_GIT_MEMORY = 4L << 30;
    /** A sparse file claims any size: neither git's memory nor its time grows past these. */
    private static final long MAX_GIT_MEMORY = 8L << 30;
    private static final long MAX_TIMEOUT_MILLIS = TimeUnit.MINUTES.toMillis(15);
    /** The most loose objects whose names are kept for a commit-graph's check; past it, its check names what it misses. */
    private static final int MAX_LOOSE_NAMES = 1 << 20;
    /** A loose object's header: {@code <type> <size>\0}, within this many bytes. */
    private static final int MAX_HEADER_BYTES = 32;
    private static final String LOOSE = "loose";
    /** The name a pack is checked under, whatever it is called (a name can say anything in git's messages). */
    static final String CHECKED_PACK = "pack/pack-checked";
    /** The most loose commits a commit-graph's check holds open at once. */
    private static final int MAX_LOOSE_COMMITS = 50_000;
    /** The lines of git's complaint a finding shows. */
    private static final int SHOWN_LINES = 3;
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final HexFormat HEX = HexFormat.of();

    /** What a check found: the hash of a loose object's content, or git's complaint (empty: none). */
    private record Checked(byte[] hash, String complaint) {
    }

    /** What was checked: the kind of check ({@code loose}, or git's command) and the files it read. */
    private record Key(String kind, List<FileIdentity> files) {
    }

    /** Loose objects (one identity) and git's checks (the identities of every file it read), kept between rounds. */
    private static final KeptResults<Key, Checked> KEPT = new KeptResults<>(200_000);

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
                if (fields.length != 4) {
                    continue;
                }
                List<FileIdentity> read = Arrays.stream(fields[1].split(" ")).map(FileIdentity::parse).toList();
                KEPT.keepLasting(new Key(fields[0], read),
                        new Checked(fields[2].equals("-") ? null : HEX.parseHex(fields[2]), fields[3]));
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
        KEPT.lastingInUse().forEach((key, checked) -> text.append(key.kind()).append('\t')
                .append(String.join(" ", key.files().stream().map(FileIdentity::toString).toList())).append('\t')
                .append(checked.hash() == null ? "-" : HEX.formatHex(checked.hash())).append('\t')
                .append(checked.complaint()).append('\n'));
        if (!text.isEmpty() || Files.exists(file, NOFOLLOW)) {
            Baseline.writePrivately(file, text.toString());
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
            Checks checks = new Checks(objects, sealed, writtenBack, sha256);
            List<String> changed = List.of();
            Set<Finding> kept = new HashSet<>(tree.findings);
            for (int attempt = 0; attempt < 2; attempt++) {
                tree.findings.retainAll(kept); // only the last attempt's findings stand
                checks.vanished.clear();
                Map<String, String> before = stamps(objects);
                gitChecks(checks, loose);
                Map<String, String> after = stamps(objects);
                changed = after.keySet().stream().filter(dir -> !after.get(dir).equals(before.get(dir))).toList();
                if (checks.vanished.isEmpty() && changed.isEmpty()) {
                    return;
                }
            }
            for (String dir : changed) {
                tree.add(objects.resolve(dir), UNREAD, "changed while the audit read it, twice: git may read packs or a "
                        + "graph the audit did not check; " + stamps(objects).get(dir));
            }
            for (Path file : checks.vanished) {
                tree.add(file, UNREAD, "gone while the audit checked what git reads with it, twice");
            }
        } catch (IOException e) {
            tree.notAudited(objects, e);
        }
    }

    /** The directories git finds packs and graphs in, each with its identity and change time (or how it is missing). */
    private static Map<String, String> stamps(Path objects) {
        Map<String, String> stamps = new TreeMap<>();
        for (String dir : List.of("pack", "info", "info/commit-graphs", "pack/multi-pack-index.d")) {
            try {
                Map<String, Object> stat = Files.readAttributes(objects.resolve(dir), "unix:fileKey,ctime", NOFOLLOW);
                stamps.put(dir, stat.get("fileKey") + " changed " + stat.get("ctime"));
            } catch (IOException e) {
                stamps.put(dir, e.getClass().getSimpleName());
            }
        }
        return stamps;
    }

    /**
     * git's checks of the packs, the multi-pack-index and the commit-graph; a file the
     * multi-pack-index or graph check was to read and was gone by then is in {@code checks.vanished}
     * (the caller lists again; a pack gone with its index is no longer read by git either).
     */
    private void gitChecks(Checks checks, Set<String> loose) {
        Path objects = checks.objects;
        List<String> packs = new ArrayList<>();
        tree.audited(objects.resolve("pack"), () -> packs.addAll(packs(objects)));
        int first = packs.isEmpty() ? 0 : java.util.concurrent.ThreadLocalRandom.current().nextInt(packs.size());
        for (int n = 0; n < packs.size(); n++) {
            String pack = packs.get((first + n) % packs.size());
            Path data = objects.resolve(pack + ".pack");
            tree.audited(data, () -> checks.run(data, FORGED_PACK, List.of(pack + ".pack", pack + ".idx"), List.of(),
                    sealedObjects -> checks.indexPack(sealedObjects.resolve(CHECKED_PACK + ".pack"))));
        }
        List<String> packFiles = packs.stream().flatMap(pack -> Stream.of(pack + ".pack", pack + ".idx")).toList();
        tree.audited(objects.resolve("pack"), () -> multiPackIndex(checks, packFiles));
        tree.audited(objects.resolve("info"), () -> commitGraph(checks, packFiles, loose));
    }

    // Loose objects: objects/<2 hex>/<the rest>, each the zlib stream of "<type> <size>\0<content>".

    /**
     * Every loose object, hashed and compared with its name. A fan-out directory that changed
     * while it was read (an object renamed away and back while the audit looks) is read again;
     * one that changed both times is named as not audited.
     */
    private void looseObjects(Path objects, boolean sha256, boolean writtenBack, Set<String> loose) throws IOException {
        int restLength = (sha256 ? GitIndex.SHA256_BYTES : GitIndex.SHA1_BYTES) * 2 - 2;
        GitIndex.Collector forged = new GitIndex.Collector(FORGED);
        GitIndex.Collector unread = new GitIndex.Collector(UNREAD);
        List<String> reasons = new ArrayList<>();
        try (DirectoryStream<Path> fanout = Files.newDirectoryStream(objects, ForgedObjects::isFanout)) {
            for (Path directory : fanout) {
                if (!Files.isDirectory(directory, NOFOLLOW)) {
                    tree.add(directory, "(not a regular directory)", "git reads objects through it: " + AuditedTree.kind(directory));
                    continue;
                }
                Map<String, Object> before = null;
                Map<String, Object> after = null;
                Map<String, Object> read = new TreeMap<>();
                for (int attempt = 0; attempt < 2 && (before == null || !before.equals(after)); attempt++) {
                    before = Files.readAttributes(directory, "unix:fileKey,ctime", NOFOLLOW);
                    read = fanOut(directory, restLength, sha256, writtenBack);
                    after = Files.readAttributes(directory, "unix:fileKey,ctime", NOFOLLOW);
                }
                if (!before.equals(after)) {
                    tree.add(directory, UNREAD, "changed while the audit read it, twice: git may read objects the audit "
                            + "did not; changed " + after.get("ctime"));
                }
                read.forEach((name, result) -> {
                    if (loose.size() < MAX_LOOSE_NAMES) {
                        loose.add(name);
                    }
                    byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
                    if (result instanceof byte[] hash && !Arrays.equals(hash, HEX.parseHex(name))) {
                        forged.add(bytes, hash);
                    } else if (result instanceof String reason) {
                        unread.add(bytes, reason.getBytes(StandardCharsets.UTF_8));
                        reasons.add(reason);
                    }
                });
            }
        }
        if (forged.count > 0) {
            tree.add(objects, FORGED, forged.flagged().described(": "));
        }
        if (unread.count > 0) {
            tree.add(objects, UNREAD, unread.flagged().described(" not checked (" + reasons.getFirst() + "): "));
        }
    }

    /** The loose objects of one fan-out directory, by name: each one's hash, or why it was not read. */
    private Map<String, Object> fanOut(Path directory, int restLength, boolean sha256, boolean writtenBack)
            throws IOException {
        Map<String, Object> read = new TreeMap<>();
        try (Workspace files = tree.files.openSubtreeForReading(tree.relative(directory));
                DirectoryStream<Path> names = Files.newDirectoryStream(directory,
                        name -> isHex(name.getFileName().toString(), restLength))) {
            for (Path file : names) {
                String name = directory.getFileName().toString() + file.getFileName();
                try {
                    read.put(name, looseObjectHash(files, file, sha256, writtenBack));
                } catch (java.nio.file.NoSuchFileException gone) {
                    // removed since the listing (git gc, git prune): git no longer reads it either
                } catch (IOException e) {
                    read.put(name, reason(e));
                }
            }
        }
        return read;
    }

    /** The hash of what the loose object {@code file} holds, kept for its identity. */
    private byte[] looseObjectHash(Workspace files, Path file, boolean sha256, boolean writtenBack) throws IOException {
        long now = KeptResults.now();
        Checked kept = KEPT.get(new Key(LOOSE, List.of(FileIdentity.of(file))), now);
        if (kept != null) {
            return kept.hash();
        }
        try (OpenedFile opened = files.openFileVersion(file.getFileName().toString())) {
            List<FileIdentity> read = List.of(FileIdentity.of(opened));
            byte[] hash = inflatedHash(opened, sha256);
            KEPT.keep(new Key(LOOSE, read), new Checked(hash, ""), read.getFirst().changedNanos(), now, writtenBack);
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
    private List<String> packs(Path objects) throws IOException {
        List<String> packs = new ArrayList<>();
        Path pack = objects.resolve("pack");
        if (!directory(pack, "packs")) {
            return packs;
        }
        try (DirectoryStream<Path> names = Files.newDirectoryStream(pack, "*.idx")) {
            for (Path index : names) {
                String name = index.getFileName().toString();
                if (name.indexOf('\uFFFD') >= 0) {
                    tree.add(index, UNREAD, "a name that is not UTF-8: git reads it, the audit cannot; the file "
                            + FileIdentity.of(index));
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

    /**
     * Whether {@code dir} is a directory git reads {@code what} from; a link or anything else in
     * its place is a finding (git follows a link there), and one that does not exist is not.
     */
    private boolean directory(Path dir, String what) throws IOException {
        if (Files.isSymbolicLink(dir)) {
            tree.add(dir, "symbolic link (git reads " + what + " there, which the audit does not check)",
                    Files.readSymbolicLink(dir).toString());
            return false;
        }
        if (Files.exists(dir, NOFOLLOW) && !Files.isDirectory(dir, NOFOLLOW)) {
            tree.add(dir, "(not a regular directory)", "git may read " + what + " through it: " + AuditedTree.kind(dir));
            return false;
        }
        return Files.isDirectory(dir, NOFOLLOW);
    }

    /** The multi-pack-index git reads: one file, or else a chain (git 2.47 on); checked against the packs it may name. */
    private void multiPackIndex(Checks checks, List<String> packFiles) throws IOException {
        String index = singleOrChain(checks.objects, "pack/multi-pack-index", "pack/multi-pack-index.d",
                "multi-pack-index-chain", "multi-pack-indexes");
        if (index != null) {
            checks.run(checks.objects.resolve(index), FORGED_MULTI_PACK_INDEX, List.of(index), pinned -> {
                List<String> more = new ArrayList<>(packFiles);
                more.addAll(layers(pinned, "pack/multi-pack-index.d", "multi-pack-index-chain", "multi-pack-index-", ".midx",
                        checks.sha256));
                return more;
            }, sealedObjects -> List.of("multi-pack-index", "--object-dir=" + sealedObjects, "verify", "--no-progress"));
        }
    }

    /**
     * The commit-graph git reads (one file, or else a chain), checked against the commits in the
     * packs and the loose ones it names (read from the files as pinned); changed-path filters in
     * it are named as such.
     */
    private void commitGraph(Checks checks, List<String> packFiles, Set<String> loose) throws IOException {
        if (!directory(checks.objects.resolve("info"), "the commit-graph")) {
            return;
        }
        String graph = singleOrChain(checks.objects, "info/commit-graph", "info/commit-graphs", "commit-graph-chain",
                "commit-graphs");
        if (graph == null) {
            return;
        }
        int hashBytes = checks.sha256 ? GitIndex.SHA256_BYTES : GitIndex.SHA1_BYTES;
        checks.run(checks.objects.resolve(graph), FORGED_COMMIT_GRAPH, List.of(graph), pinned -> {
            List<String> more = new ArrayList<>(packFiles);
            more.addAll(layers(pinned, "info/commit-graphs", "commit-graph-chain", "graph-", ".graph", checks.sha256));
            int looseCommits = 0;
            for (Map.Entry<String, PinnedFile> file : pinned.entrySet()) {
                if (!file.getKey().equals("info/commit-graph") && !file.getKey().endsWith(".graph")) {
                    continue;
                }
                CommitGraphFile read;
                try (var channel = java.nio.channels.FileChannel.open(file.getValue().path())) {
                    read = CommitGraphFile.read(channel, hashBytes, loose);
                }
                if (read == null) {
                    continue; // git does not read it either; its verify says why
                }
                for (String commit : read.commits()) {
                    more.add(commit.substring(0, 2) + "/" + commit.substring(2));
                    looseCommits++;
                }
                if (read.changedPaths()) {
                    tree.add(checks.objects.resolve(file.getKey()), CHANGED_PATHS,
                            "the file " + FileIdentity.of(file.getValue().stat()));
                }
            }
            if (looseCommits > MAX_LOOSE_COMMITS) {
                throw new IOException("it names more than " + MAX_LOOSE_COMMITS + " loose commits");
            }
            return more;
        }, sealedObjects -> List.of("commit-graph", "verify", "--object-dir=" + sealedObjects, "--no-progress"));
    }

    /**
     * Which file git starts from for one kind of metadata, named under {@code objects}:
     * {@code single} when it exists (git then reads no chain), else the chain file in
     * {@code chainDirectory}; null when neither is there.
     */
    private String singleOrChain(Path objects, String single, String chainDirectory, String chainFile, String what)
            throws IOException {
        if (Files.exists(objects.resolve(single), NOFOLLOW)) {
            return single;
        }
        if (!directory(objects.resolve(chainDirectory), what)) {
            return null;
        }
        String chain = chainDirectory + "/" + chainFile;
        return Files.exists(objects.resolve(chain), NOFOLLOW) ? chain : null;
    }

    /**
     * The files a pinned chain file names, as git reads it ({@code load_commit_graph_chain}): as
     * many lines as the file's size holds names, each a file {@code prefix}, the whole line,
     * {@code suffix}, until a line that does not start with a name in hex, of either case.
     */
    private static List<String> layers(Map<String, PinnedFile> pinned, String chainDirectory, String chainFile,
            String prefix, String suffix, boolean sha256) throws IOException {
        PinnedFile chain = pinned.get(chainDirectory + "/" + chainFile);
        if (chain == null) {
            return List.of();
        }
        int hexLength = (sha256 ? GitIndex.SHA256_BYTES : GitIndex.SHA1_BYTES) * 2;
        byte[] content = Files.readAllBytes(chain.path());
        String[] lines = new String(content, StandardCharsets.ISO_8859_1).split("\n", -1);
        List<String> layers = new ArrayList<>();
        for (int i = 0; i < content.length / (hexLength + 1) && i < lines.length; i++) {
            String line = lines[i];
            if (line.length() < hexLength || !isHex(line.substring(0, hexLength).toLowerCase(java.util.Locale.ROOT), hexLength)) {
                break;
            }
            layers.add(chainDirectory + "/" + prefix + new String(line.getBytes(StandardCharsets.ISO_8859_1),
                    StandardCharsets.UTF_8) + suffix);
        }
        return layers;
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
        final boolean sha256;
        /** Files a multi-pack-index or graph check was to read that were gone by then. */
        final List<Path> vanished = new ArrayList<>();
        /** The repository reads objects from alternates (named by HiddenChanges), which a graph may name. */
        final boolean borrowsObjects;

        Checks(Path objects, SealedGit sealed, boolean writtenBack, boolean sha256) {
            this.objects = objects;
            this.sealed = sealed;
            this.writtenBack = writtenBack;
            this.sha256 = sha256;
            Path alternates = objects.resolve("info/alternates");
            this.borrowsObjects = Files.exists(alternates, NOFOLLOW) && !(Files.isRegularFile(alternates, NOFOLLOW)
                    && alternates.toFile().length() == 0);
        }

        List<String> indexPack(Path pack) {
            List<String> args = new ArrayList<>(List.of("index-pack"));
            if (sha256) {
                args.add("--object-format=sha256");
            }
            args.addAll(List.of("--verify", pack.toString()));
            return args;
        }

        /** As below, with {@code more} files held open besides, which do not count towards the bounds. */
        void run(Path shown, String key, List<String> files, List<String> more, Function<Path, List<String>> args)
                throws IOException {
            run(shown, key, files, pinned -> more, args);
        }

        /**
         * Runs git's check {@code args} (made of the sealed object directory) on {@code files},
         * named under the object directory and held open while git reads them, with the files
         * {@code more} names once those are open; what git complains of is a finding about
         * {@code shown}, keyed {@code key}. It is kept for the files' identities, unless one
         * changed while git read it (a complaint is reported all the same). A check git could not
         * finish (out of time or of memory) is named as not verified and kept a minute. One that
         * is not a regular file is a finding instead. One gone is in {@link #vanished}, unless
         * it is a pack or its index: git no longer reads that pack either.
         */
        void run(Path shown, String key, List<String> files, Pinned more, Function<Path, List<String>> args)
                throws IOException {
            Map<String, PinnedFile> pinned = new LinkedHashMap<>();
            try {
                if (!pinAll(files, pinned, key)) {
                    return;
                }
                for (int round = 0; round < 3; round++) { // a chain's files, then the commits they name
                    List<String> next = more.names(Map.copyOf(pinned)).stream().filter(name -> !pinned.containsKey(name))
                            .distinct().toList();
                    if (next.isEmpty()) {
                        break;
                    }
                    if (!pinAll(next, pinned, key)) {
                        return;
                    }
                }
                List<FileIdentity> read = identities(pinned);
                long charged = 0; // what git works through: the files asked for, and of the rest all but packs' data
                int n = 0;
                for (String name : pinned.keySet()) {
                    charged += n < files.size() || !name.endsWith(".pack") ? read.get(n).size() : 0;
                    n++;
                }
                Key cached = new Key(args.apply(Path.of("/")).getFirst() + (sha256 ? " sha256" : ""), read);
                long now = KeptResults.now();
                Checked checked = KEPT.get(cached, now);
                if (checked == null) {
                    checked = check(cached, charged, pinned, args, now);
                }
                if (!checked.complaint().isEmpty()) {
                    tree.add(shown, checked.hash() == null ? key : UNREAD, checked.complaint());
                }
            } finally {
                pinned.values().forEach(PinnedFile::close);
            }
        }

        /**
         * git's check, within this audit's bounds: the first check of an audit runs whatever its
         * size (so none is put off for good), later ones while the audit has bytes and time left.
         * A result git could not reach is marked by an empty hash.
         */
        private Checked check(Key key, long charged, Map<String, PinnedFile> pinned, Function<Path, List<String>> args,
                long now) throws IOException {
            boolean first = bytesChecked == 0 && gitNanos == 0;
            if (!first && (bytesChecked + charged > MAX_GIT_CHECKED_BYTES || gitNanos >= MAX_GIT_NANOS)) {
                throw new IOException("past the " + (MAX_GIT_CHECKED_BYTES >> 30) + " GiB and "
                        + TimeUnit.NANOSECONDS.toMinutes(MAX_GIT_NANOS) + " minutes one audit has git check (an audit "
                        + "checks one such first, in turn); files " + AuditedTree.sha256(key.toString().getBytes(
                                StandardCharsets.UTF_8)));
            }
            bytesChecked += charged;
            long memory = Math.min(MAX_GIT_MEMORY, BASE_GIT_MEMORY + 2 * charged);
            long started = System.nanoTime();
            Checked checked;
            try {
                List<PinnedFile> files = List.copyOf(pinned.values());
                Map<String, PinnedFile> links = key.kind().startsWith("index-pack")
                        ? Map.of(CHECKED_PACK + ".pack", files.get(0), CHECKED_PACK + ".idx", files.get(1)) : pinned;
                HostGit.Result result = sealed.run(links, args,
                        Math.min(MAX_TIMEOUT_MILLIS, BASE_TIMEOUT_MILLIS + charged * 1000 / BYTES_PER_SECOND), memory);
                String complaint = result.exit() == 0 ? ""
                        : complaint(result).replace(sealed.objectsPrefix(), "").replace(tree.root + "/", "");
                if (result.exit() != 0 && outOfMemory(result)) {
                    checked = new Checked(new byte[0], "not verified: git needed more than the " + (memory >> 30)
                            + " GiB it may use; " + complaint);
                } else if (result.exit() != 0 && borrowsObjects && key.kind().startsWith("commit-graph")) {
                    checked = new Checked(new byte[0], "not verified: the repository borrows objects from its "
                            + "alternates, which the audit does not check; " + complaint);
                } else {
                    checked = new Checked(null, complaint);
                }
            } catch (HostGit.TimedOut e) {
                checked = new Checked(new byte[0], "not verified: " + e.getMessage());
            } finally {
                gitNanos += System.nanoTime() - started;
            }
            if (key.files().equals(identities(pinned))) {
                long latest = key.files().stream().mapToLong(FileIdentity::changedNanos).max().orElse(now);
                KEPT.keep(key, checked, latest, now, writtenBack && checked.hash() == null);
            }
            return checked;
        }

        /**
         * Pins each of {@code names}; false when one is gone (in {@link #vanished} unless the
         * check is a pack's) or is not a regular file (a finding: git may wait on a FIFO).
         */
        private boolean pinAll(List<String> names, Map<String, PinnedFile> pinned, String key) throws IOException {
            for (String name : names) {
                Path file = objects.resolve(name);
                PinnedFile pin = pin(file);
                if (pin == null) {
                    if (!key.equals(FORGED_PACK) && !Files.exists(file, NOFOLLOW)) {
                        vanished.add(file);
                    }
                    return false;
                }
                pinned.put(name, pin);
            }
            return true;
        }

        /** The file held open; null when it is gone, or is not a regular file (then a finding). */
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

        private static List<FileIdentity> identities(Map<String, PinnedFile> pinned) throws IOException {
            List<FileIdentity> identities = new ArrayList<>();
            for (PinnedFile pin : pinned.values()) {
                identities.add(FileIdentity.of(pin.stat()));
            }
            return identities;
        }
    }

    /**
     * Whether git stopped for want of memory, by its own words at the start of a line (a name in
     * a message, the pack's included, can say anything, but never starts one): {@code xmalloc}'s
     * "Out of memory", or a map that failed ({@code ENOMEM}, last on its line).
     */
    static boolean outOfMemory(HostGit.Result result) {
        for (String line : result.stderr().split("\n")) {
            if (line.startsWith("fatal: Out of memory") || line.startsWith("fatal: mmap failed")
                    || line.startsWith("fatal: packfile ") && line.strip().endsWith("Cannot allocate memory")) {
                return true;
            }
        }
        return false;
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
