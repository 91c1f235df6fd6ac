package dev.sandboxmcp.hostaudit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The part of the audit that looks, in each git directory, for what hides a change from your
 * review without running anything ({@link #audit}).
 */
final class HiddenChanges {

    /** Whether the git directory's object names are SHA-256 (as git takes it: from its common directory's config). */
    interface ObjectNames {
        boolean sha256() throws IOException;
    }

    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    /** An attribute after a pattern that converts line ends: {@code text}, {@code text=auto}, {@code eol=crlf} (not {@code -text}). */
    private static final java.util.regex.Pattern LINE_END_ATTRIBUTE = java.util.regex.Pattern.compile(
            "\\s(text(=\\S+)?|eol=\\S+)(?=\\s|$)", java.util.regex.Pattern.MULTILINE);
    private static final String PACKED_REFS = "packed-refs";
    private static final String REPLACE_REF = "replace ref (git shows the object it names wherever the replaced one is "
            + "named: git status, git diff and git log show the replacement)";
    /** The files of lines in a git directory that change what git shows, and how. */
    private static final Map<String, String> VIEW_FILES = Map.of(
            "info/exclude", "exclude patterns (git status does not show new files they match)",
            "info/attributes", "attributes (they change how git diff shows and compares files)",
            "info/grafts", "grafts (git log and git diff show these commits with other parents)",
            "shallow", "shallow commits (git log stops at these commits and shows none before them)");
    /** Where git takes every byte of every line (no comment, no blank line, no space trimmed), and what it does with them. */
    private static final String ALTERNATES = "objects/info/alternates";
    private static final String ALTERNATES_EFFECT = "alternates (git reads the objects it does not hold from these "
            + "directories, which the audit does not check; a line of one space names objects/ /)";

    /**
     * The work trees whose files are compared with the index ({@link UnseenEdits}), as its configs
     * say git compares them: its own and each a core.worktree moves it to, whichever git takes
     * (a decoy there must not stand in for the files git reads).
     */
    record WorkTree(List<Path> paths, UnseenEdits.Settings settings) {
    }

    private final AuditedTree tree;
    private final UnseenEdits unseenEdits;

    HiddenChanges(AuditedTree tree) {
        this.tree = tree;
        this.unseenEdits = new UnseenEdits(tree);
    }

    /**
     * What runs nothing but hides a change from your review ({@code git status}, {@code git diff},
     * {@code git log}): the index's skip-worktree and assume-unchanged flags (in a split index's
     * shared part too), replace refs (loose or packed: git then shows another object wherever the
     * replaced one is named, so a forged tree of HEAD hides a staged change), the lines of
     * {@code info/exclude}, {@code info/attributes}, {@code info/grafts} and {@code shallow}, and, when the
     * {@code workTree} is known (null: bare, or outside the tree), the files changed behind an
     * entry that records their size and time ({@link UnseenEdits}): those of the index, and of the
     * shared part it links to (not of any other {@code sharedindex.*}, which git does not read).
     */
    void audit(Path dir, WorkTree workTree, ObjectNames names) {
        tree.audited(dir, () -> {
            boolean sha256 = names.sha256();
            int hashBytes = sha256 ? GitIndex.SHA256_BYTES : GitIndex.SHA1_BYTES;
            Path main = dir.resolve("index");
            long indexSeconds = Files.isRegularFile(main, NOFOLLOW)
                    ? Files.getLastModifiedTime(main, NOFOLLOW).toInstant().getEpochSecond() : 0;
            List<UnseenEdits.Check> checks = new ArrayList<>();
            if (workTree != null) {
                for (Path path : workTree.paths()) {
                    checks.add(unseenEdits.check(main, path, sha256, settings(dir, path, workTree.settings()),
                            indexSeconds));
                }
            }
            try {
                GitIndex.Link[] link = {null};
                tree.audited(main, () -> link[0] = index(main, hashBytes, entry -> checks.forEach(check -> check.take(entry))));
                List<Path> shared = new ArrayList<>();
                try (DirectoryStream<Path> found = Files.newDirectoryStream(dir, "sharedindex.*")) {
                    found.forEach(shared::add);
                }
                for (Path index : shared) {
                    boolean linked = link[0] != null
                            && index.getFileName().toString().equals("sharedindex." + link[0].sharedIndex());
                    List<GitIndex.Entries> merged = linked ? checks.stream().map(check -> check.shared(link[0])).toList()
                            : List.of();
                    tree.audited(index, () -> index(index, hashBytes, entry -> merged.forEach(each -> each.take(entry))));
                }
            } finally {
                checks.forEach(UnseenEdits.Check::close);
            }
        });
        Path replace = dir.resolve("refs/replace");
        tree.audited(replace, () -> looseReplaceRefs(replace));
        tree.audited(dir.resolve(PACKED_REFS), () -> packedReplaceRefs(dir.resolve(PACKED_REFS)));
        VIEW_FILES.forEach((name, effect) -> tree.audited(dir.resolve(name), () -> viewFile(dir.resolve(name),
                effect)));
        tree.audited(dir.resolve(ALTERNATES), () -> alternates(dir.resolve(ALTERNATES)));
    }

    /** Reports the flags of {@code index}, handing its entries to {@code entries}; returns its link (null: none, or not read). */
    private GitIndex.Link index(Path index, int hashBytes, GitIndex.Entries entries) throws IOException {
        if (!Files.exists(index, NOFOLLOW)) {
            return null;
        }
        if (!Files.isRegularFile(index, NOFOLLOW)) {
            tree.add(index, "(not a regular file)", "git reads it, the audit does not: " + AuditedTree.kind(index)
                    + contentDigest(index));
            return null;
        }
        try {
            long size = Files.size(index);
            GitIndex.Contents contents = GitIndex.read(() -> tree.files.openFile(tree.relative(index)), size, hashBytes,
                    entries);
            for (GitIndex.Flagged flagged : contents.flagged()) {
                tree.add(index, flagged.flag() + " (git status and git diff do not show changes to these files)",
                        flagged.described(": "));
            }
            return contents.link();
        } catch (GitIndex.Unreadable e) {
            tree.add(index, "(not audited)", "the audit cannot read this index: " + e.getMessage() + contentDigest(index));
            return null;
        }
    }

    /**
     * The digest of what git reads there (through a link in the tree too), so that a finding
     * accepted once does not cover the next index written in its place; or why there is none.
     */
    private String contentDigest(Path index) {
        try {
            return "; " + tree.digest(index);
        } catch (IOException e) {
            return "; its content cannot be read either";
        }
    }

    /**
     * The work tree's settings, with line ends converted also where an attributes file git reads
     * first ({@code .gitattributes} at the top of the work tree, {@code info/attributes}) names
     * {@code text} or {@code eol}: a change to either file, or a new one in a subdirectory, is
     * itself in your review, or compared here.
     */
    private UnseenEdits.Settings settings(Path dir, Path workTree, UnseenEdits.Settings settings) {
        if (settings.crlfAsLf()) {
            return settings;
        }
        for (Path attributes : List.of(workTree.resolve(".gitattributes"), dir.resolve("info/attributes"))) {
            byte[] content = Files.isRegularFile(attributes, NOFOLLOW) ? quietly(attributes) : null;
            if (content != null && LINE_END_ATTRIBUTE.matcher(new String(content, StandardCharsets.UTF_8)).find()) {
                return new UnseenEdits.Settings(true, settings.trustCtime(), settings.fullStat());
            }
        }
        return settings;
    }

    private byte[] quietly(Path file) {
        try {
            return tree.readSmall(file);
        } catch (IOException e) {
            return null;
        }
    }

    private void looseReplaceRefs(Path replace) throws IOException {
        if (Files.isSymbolicLink(replace)) {
            tree.add(replace, "replace refs, a symbolic link", Files.readSymbolicLink(replace).toString());
            return;
        }
        if (!Files.isDirectory(replace, NOFOLLOW)) {
            return;
        }
        try (DirectoryStream<Path> refs = Files.newDirectoryStream(replace)) {
            for (Path ref : refs) {
                if (Files.isDirectory(ref, NOFOLLOW)) {
                    tree.audited(ref, () -> looseReplaceRefs(ref));
                    continue;
                }
                byte[] content = Files.isSymbolicLink(ref) ? null : tree.readSmall(ref);
                String target = content == null ? "symbolic link or unreadable"
                        : new String(content, StandardCharsets.UTF_8).strip();
                tree.add(ref, REPLACE_REF, target);
            }
        }
    }

    private void packedReplaceRefs(Path packed) throws IOException {
        if (!Files.exists(packed, NOFOLLOW)) {
            return;
        }
        if (!Files.isRegularFile(packed, NOFOLLOW)) {
            tree.add(packed, "(not a regular file)", "git may read it, the audit cannot: " + AuditedTree.kind(packed));
            return;
        }
        try (var lines = new BufferedReader(new InputStreamReader(tree.files.openFile(tree.relative(packed)),
                StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                int space = line.indexOf(' ');
                if (space > 0 && line.startsWith("refs/replace/", space + 1)) {
                    tree.add(packed, REPLACE_REF + ": " + line.substring(space + 1),
                            line.substring(0, space));
                }
            }
        }
    }

    /** A file of lines that changes what git shows: a finding, with its digest, when any line is more than a comment. */
    /** Any byte at all: git takes each line whole as a directory to read objects from. */
    private void alternates(Path file) throws IOException {
        if (Files.isSymbolicLink(file)) {
            tree.add(file, ALTERNATES_EFFECT + ", a symbolic link", Files.readSymbolicLink(file).toString());
            return;
        }
        byte[] content = Files.exists(file, NOFOLLOW) ? tree.readSmall(file) : null;
        if (content != null && content.length > 0) {
            List<String> lines = new String(content, StandardCharsets.UTF_8).lines().map(line -> "'" + line + "'").toList();
            String shown = String.join(", ", lines.subList(0, Math.min(GitIndex.SHOWN, lines.size())))
                    + (lines.size() > GitIndex.SHOWN ? ", ..." : "");
            tree.add(file, ALTERNATES_EFFECT, shown + "; " + AuditedTree.sha256(content));
        }
    }

    private void viewFile(Path file, String effect) throws IOException {
        if (!Files.exists(file, NOFOLLOW)) {
            return;
        }
        if (Files.isSymbolicLink(file)) {
            tree.add(file, effect + ", a symbolic link", Files.readSymbolicLink(file).toString());
            return;
        }
        byte[] content = tree.readSmall(file);
        if (content == null) {
            return;
        }
        List<String> patterns = new String(content, StandardCharsets.UTF_8).lines().map(String::strip)
                .filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
        if (!patterns.isEmpty()) {
            String shown = String.join(", ", patterns.subList(0, Math.min(GitIndex.SHOWN, patterns.size())))
                    + (patterns.size() > GitIndex.SHOWN ? ", ..." : "");
            tree.add(file, effect, shown + "; " + AuditedTree.sha256(content));
        }
    }
}
