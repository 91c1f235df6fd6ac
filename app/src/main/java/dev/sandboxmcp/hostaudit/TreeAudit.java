package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.ProtectedPaths;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Everything under a directory tree that a program on the host would run by itself: in every git
 * directory (a {@code .git}, a bare or separate one, what a {@code .git} file or link points to
 * inside the tree, submodules under {@code modules/}, worktrees under {@code worktrees/}) the
 * settings of its config files that run commands ({@link CommandSettings}) and its executable
 * hooks; {@code .envrc} files; VS Code tasks that run when the folder opens.
 *
 * <p>The walk never follows a symbolic link: a link is reported for what it says, and a
 * {@code .git} file or link, a {@code commondir} or a {@code core.hooksPath} that leads outside the
 * tree is reported as not audited. Files are read through {@link Workspace}, which cannot leave
 * the tree and never waits on a FIFO swapped in while it reads.
 */
public final class TreeAudit {

    /** What the walk found (what it could not look at included, as "not audited") and how many entries it saw. */
    public record Result(List<Finding> findings, long entries) {
    }

    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final int MAX_SMALL_FILE = 1024 * 1024;

    private final Path root;
    private final Workspace files;
    private final GitConfigFile git;
    private final Set<Finding> findings = new HashSet<>();
    /**
     * Git directories and config files read, each with the work tree it was reached from (relative
     * paths in it depend on that).
     */
    private final Set<List<Path>> gitDirectoriesSeen = new HashSet<>();
    private final Set<List<Path>> configsSeen = new HashSet<>();
    private long entries;

    private TreeAudit(Path root, Workspace files, GitConfigFile git) {
        this.root = root;
        this.files = files;
        this.git = git;
    }

    /** Audits the tree at {@code tree}, reading git configuration with the program {@code git}. */
    public static Result run(Path tree, String git) throws IOException {
        try (Workspace files = Workspace.open(tree)) {
            TreeAudit audit = new TreeAudit(files.root(), files, new GitConfigFile(git));
            audit.walk();
            List<Finding> sorted = new ArrayList<>(audit.findings);
            sorted.sort(null);
            return new Result(List.copyOf(sorted), audit.entries);
        }
    }

    private void walk() throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                entries++;
                boolean dotGit = !dir.equals(root) && dir.getFileName().toString().equalsIgnoreCase(".git");
                if (!dotGit && !isGitDirectory(dir)) {
                    return FileVisitResult.CONTINUE;
                }
                try {
                    gitDirectory(dir, dotGit ? dir.getParent() : null);
                } catch (IOException e) {
                    notAudited(dir, e);
                }
                return FileVisitResult.SKIP_SUBTREE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                entries++;
                String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
                try {
                    switch (name) {
                        case ".git" -> gitPointer(file, attrs);
                        case ".envrc" -> wholeFile(file, attrs, "direnv .envrc (runs in the shell that enters the directory)");
                        case "tasks.json" -> {
                            if (file.getParent().getFileName().toString().equalsIgnoreCase(".vscode")) {
                                vsCodeTasks(file, attrs);
                            }
                        }
                        default -> { }
                    }
                } catch (IOException e) {
                    notAudited(file, e);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                notAudited(file, e);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** A {@code .git} that is not a directory: a file naming the git directory, or a link to one. */
    private void gitPointer(Path file, BasicFileAttributes attrs) throws IOException {
        if (attrs.isSymbolicLink()) {
            Path target = file.getParent().resolve(Files.readSymbolicLink(file));
            follow(file, "symbolic link", target, file.getParent());
            return;
        }
        if (!attrs.isRegularFile()) {
            return;
        }
        String first = readSmall(file).lines().findFirst().orElse("");
        if (!first.startsWith("gitdir: ")) {
            return; // git refuses such a .git file; nothing runs
        }
        follow(file, "gitdir", file.getParent().resolve(first.substring("gitdir: ".length()).strip()), file.getParent());
    }

    /** Audits the git directory {@code target} names when it lies inside the tree; reports it when it does not. */
    private void follow(Path from, String key, Path target, Path workTree) throws IOException {
        Path real;
        try {
            real = target.toRealPath();
        } catch (IOException missing) {
            return; // git finds no repository there either
        }
        if (real.startsWith(root)) {
            if (Files.isDirectory(real, NOFOLLOW)) {
                gitDirectory(real, workTree);
            }
        } else {
            findings.add(new Finding(relative(from), key, real + " (outside the audited tree: not audited)"));
        }
    }

    private void gitDirectory(Path dir, Path workTree) throws IOException {
        if (!gitDirectoriesSeen.add(Arrays.asList(dir, workTree))) {
            return;
        }
        Path commondir = dir.resolve("commondir");
        if (Files.isRegularFile(commondir, NOFOLLOW)) {
            String common = readSmall(commondir).lines().findFirst().orElse("").strip();
            if (!common.isEmpty()) {
                follow(commondir, "commondir", dir.resolve(common), workTree);
            }
        }
        for (String name : List.of("config", "config.worktree")) {
            Path config = dir.resolve(name);
            if (Files.isSymbolicLink(config)) {
                findings.add(new Finding(relative(config), "symbolic link", Files.readSymbolicLink(config).toString()));
                Path target = inTree(dir, Files.readSymbolicLink(config).toString());
                if (target != null && Files.isRegularFile(target)) {
                    config(target, workTree);
                }
            } else if (Files.isRegularFile(config, NOFOLLOW)) {
                config(config, workTree);
            }
        }
        hooks(dir.resolve("hooks"), "hook");
        nestedGitDirectories(dir.resolve("modules"));
        nestedGitDirectories(dir.resolve("worktrees"));
    }

    private void nestedGitDirectories(Path dir) throws IOException {
        if (!Files.isDirectory(dir, NOFOLLOW)) {
            return;
        }
        try (DirectoryStream<Path> children = Files.newDirectoryStream(dir)) {
            for (Path child : children) {
                if (!Files.isDirectory(child, NOFOLLOW)) {
                    continue;
                }
                if (isGitDirectory(child)) {
                    gitDirectory(child, null);
                } else {
                    nestedGitDirectories(child);
                }
            }
        }
    }

    private void config(Path file, Path workTree) throws IOException {
        if (!configsSeen.add(Arrays.asList(file, workTree))) {
            return;
        }
        List<GitConfigFile.Entry> entries;
        try {
            entries = git.read(file);
        } catch (GitConfigFile.Unreadable e) {
            findings.add(new Finding(relative(file), "(git cannot read it)", e.getMessage()));
            return;
        } catch (IOException e) {
            notAudited(file, e);
            return;
        }
        for (GitConfigFile.Entry entry : entries) {
            if (!CommandSettings.runsCommand(entry.key(), entry.value())) {
                continue;
            }
            String value = entry.value() == null ? "true" : entry.value();
            findings.add(new Finding(relative(file), entry.key(), value));
            String key = entry.key().toLowerCase(Locale.ROOT);
            Path base = workTree != null ? workTree : file.getParent();
            if (key.equals("core.hookspath")) {
                Path hooks = inTree(base, value);
                if (hooks != null) {
                    hooks(hooks, "hook (core.hooksPath)");
                }
            } else if (key.equals("include.path") || key.startsWith("includeif.")) {
                Path included = inTree(file.getParent(), value);
                if (included != null && Files.isRegularFile(included)) {
                    config(included, workTree);
                }
            }
        }
    }

    /**
     * The real path {@code value} names, resolved against {@code base} as git does, when it exists
     * inside the tree; null otherwise (what lies outside is named by the finding, not read).
     */
    private Path inTree(Path base, String value) {
        if (value.isEmpty() || value.startsWith("~")) {
            return null;
        }
        try {
            Path real = base.resolve(value).toRealPath();
            return real.startsWith(root) ? real : null;
        } catch (IOException | java.nio.file.InvalidPathException missing) {
            return null;
        }
    }

    private void hooks(Path dir, String key) throws IOException {
        if (Files.isSymbolicLink(dir)) {
            findings.add(new Finding(relative(dir), key + " directory, a symbolic link", Files.readSymbolicLink(dir).toString()));
            return;
        }
        if (!Files.isDirectory(dir, NOFOLLOW)) {
            return;
        }
        try (DirectoryStream<Path> children = Files.newDirectoryStream(dir)) {
            for (Path hook : children) {
                if (hook.getFileName().toString().endsWith(".sample")) {
                    continue;
                }
                PosixFileAttributes attrs = Files.readAttributes(hook, PosixFileAttributes.class, NOFOLLOW);
                if (attrs.isSymbolicLink()) {
                    findings.add(new Finding(relative(hook), key, "symbolic link to " + Files.readSymbolicLink(hook)));
                } else if (attrs.isRegularFile() && isExecutable(attrs)) {
                    findings.add(new Finding(relative(hook), key, "executable, " + digest(hook)));
                }
            }
        }
    }

    private void wholeFile(Path file, BasicFileAttributes attrs, String key) throws IOException {
        if (attrs.isSymbolicLink()) {
            findings.add(new Finding(relative(file), key, "symbolic link to " + Files.readSymbolicLink(file)));
        } else if (attrs.isRegularFile()) {
            findings.add(new Finding(relative(file), key, digest(file)));
        }
    }

    private void vsCodeTasks(Path file, BasicFileAttributes attrs) throws IOException {
        if (!attrs.isRegularFile()) {
            wholeFile(file, attrs, "VS Code tasks");
            return;
        }
        String text = readSmall(file);
        try {
            for (VsCodeTasks.AutoTask task : VsCodeTasks.folderOpenTasks(text)) {
                findings.add(new Finding(relative(file), "task '" + task.label() + "' runs on folder open", task.command()));
            }
        } catch (RuntimeException unparseable) {
            // VS Code may read what Jackson does not; what cannot be checked is reported whole.
            if (text.toLowerCase(Locale.ROOT).contains("folderopen")) {
                findings.add(new Finding(relative(file), "VS Code tasks (not parseable, mentions folderOpen)", digest(file)));
            }
        }
    }

    /**
     * What could not be looked at is a finding too: a directory made unreadable from the sandbox
     * must not hide what is in it.
     */
    private void notAudited(Path path, IOException e) {
        String why = e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null ? fse.getReason()
                : e.getMessage();
        findings.add(new Finding(relative(path), "(not audited)", why));
    }

    private boolean isGitDirectory(Path dir) {
        return ProtectedPaths.looksLikeGitDirectory(name -> Files.exists(dir.resolve(name), NOFOLLOW),
                name -> Files.isDirectory(dir.resolve(name), NOFOLLOW));
    }

    private static boolean isExecutable(PosixFileAttributes attrs) {
        Set<PosixFilePermission> mode = attrs.permissions();
        return mode.contains(PosixFilePermission.OWNER_EXECUTE) || mode.contains(PosixFilePermission.GROUP_EXECUTE)
                || mode.contains(PosixFilePermission.OTHERS_EXECUTE);
    }

    private String readSmall(Path file) throws IOException {
        return new String(files.readFile(relative(file), MAX_SMALL_FILE), StandardCharsets.UTF_8);
    }

    /** The content's SHA-256 (its first 16 hex digits), so that any change makes a new finding. */
    private String digest(Path file) throws IOException {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (InputStream in = new DigestInputStream(files.openFile(relative(file)), sha256)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return "sha256 " + HexFormat.of().formatHex(sha256.digest()).substring(0, 16);
    }

    private String relative(Path path) {
        Path relative = root.relativize(path);
        return relative.toString().isEmpty() ? "." : relative.toString();
    }
}
