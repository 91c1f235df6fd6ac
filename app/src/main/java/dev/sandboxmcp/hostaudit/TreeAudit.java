package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.ProtectedPaths;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Everything under a directory tree that a program on the host would run by itself: in every git
 * directory (a {@code .git}, a bare or separate one, what a {@code .git} file or link points to
 * inside the tree, submodules under {@code modules/}, worktrees under {@code worktrees/}) the
 * settings of its config files that run commands ({@link CommandSettings}), its executable
 * hooks, and what hides a change from your review ({@link HiddenChanges}); {@code .envrc} files
 * and what they load ({@link EnvrcAudit}); VS Code tasks that run when the folder opens.
 *
 * <p>The walk never follows a symbolic link: a link is reported for what it says, and a
 * {@code .git} file or link, a {@code commondir} or a {@code core.hooksPath} that leads outside the
 * tree is reported as not audited. Files are read through {@link AuditedTree}, which cannot leave
 * the tree and never waits on a FIFO swapped in while it reads.
 */
public final class TreeAudit {

    /** What the walk found (what it could not look at included, as "not audited") and how many entries it saw. */
    public record Result(List<Finding> findings, long entries) {
    }

    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    /** Where a stopped rebase and a stopped cherry-pick or revert keep the merge strategy they go on with. */
    private static final String REBASE_STRATEGY = "rebase-merge/strategy";
    private static final String SEQUENCER_OPTIONS = "sequencer/opts";
    /** git's own merge strategies: any other is a program, {@code git-merge-<name>}. */
    private static final Set<String> GIT_STRATEGIES = Set.of("ort", "recursive", "resolve", "octopus", "ours",
            "subtree");
    private static final int MAX_INCLUDE_DEPTH = GitConfigFile.MAX_INCLUDE_DEPTH;
    private final AuditedTree tree;
    private final GitConfigFile git;
    private final HiddenChanges hiddenChanges;
    private final ForgedObjects forgedObjects;
    private final EnvrcAudit envrcs;
    /**
     * Every core.hooksPath your own git configuration may give a repository (an includeIf's
     * counted as if its condition held). Relative, one is taken from the top of each work tree,
     * which a command may create with its hooks in it. Each is audited in every repository, even
     * one that sets its own: that setting may sit in an includeIf whose condition never holds.
     */
    private List<String> usersHooksPaths = List.of();
    /** The keys that decide how git compares files with the index ({@link UnseenEdits.Settings}). */
    private static final List<String> COMPARE_KEYS = List.of("core.autocrlf", "core.trustctime", "core.checkstat");
    /** Their values in your own git configuration (the last one read, includes too). */
    private final Map<String, String> usersCompareKeys = new HashMap<>();
    /**
     * Git directories and config files read, each with the work tree it was reached from (relative
     * paths in it depend on that).
     */
    private final Set<List<Path>> gitDirectoriesSeen = new HashSet<>();
    /** The git directories make up protected; null: not known, and not checked. */
    private Set<Path> protectedGitDirectories;
    /** Each git directory's configs, whose hooks paths are audited once the walk has seen every work tree. */
    private final List<DirectoryConfig> directoryConfigs = new ArrayList<>();
    private long entries;

    private TreeAudit(Workspace files, GitConfigFile git, Path home) {
        this.tree = new AuditedTree(files, home);
        this.git = git;
        this.hiddenChanges = new HiddenChanges(tree);
        this.forgedObjects = new ForgedObjects(tree, git.host());
        this.envrcs = new EnvrcAudit(tree);
    }

    /** Audits the tree at {@code tree}, reading git configuration with the program {@code git}. */
    public static Result run(Path tree, String git) throws IOException {
        return run(tree, new GitConfigFile(git), null);
    }

    /** As {@link #run(Path, String)}, with the host user's {@code home} for {@code ~/} in paths git expands. */
    public static Result run(Path tree, String git, Path home) throws IOException {
        return run(tree, new GitConfigFile(git), home, null);
    }

    /**
     * As {@link #run(Path, String, Path)}; with {@code override} (the file protect-git.sh wrote for
     * {@code make up}; null: not checked), each git directory it does not list as protected is a
     * finding: a command can rewrite its config and hooks, and swap them only while your git reads
     * them, which no audit can see.
     */
    public static Result run(Path tree, String git, Path home, Path override) throws IOException {
        return run(tree, new GitConfigFile(git), home, override);
    }

    static Result run(Path tree, GitConfigFile git, Path home) throws IOException {
        return run(tree, git, home, null);
    }

    static Result run(Path tree, GitConfigFile git, Path home, Path override) throws IOException {
        try (Workspace files = Workspace.open(tree)) {
            TreeAudit audit = new TreeAudit(files, git, home);
            if (override != null) {
                try {
                    audit.protectedGitDirectories = ProtectedGitDirectories.read(override);
                } catch (IOException e) {
                    audit.tree.findings.add(new Finding("(make up's protected repositories)", "(not audited)",
                            override + ": " + e.getMessage()));
                }
            }
            List<String> keys = new ArrayList<>(COMPARE_KEYS);
            keys.add("core.hooksPath");
            try {
                Map<String, List<String>> values = git.usersValues(keys, home);
                audit.usersHooksPaths = values.get("core.hooksPath");
                for (String key : COMPARE_KEYS) {
                    if (!values.get(key).isEmpty()) {
                        audit.usersCompareKeys.put(key, values.get(key).getLast());
                    }
                }
            } catch (IOException e) {
                audit.tree.findings.add(new Finding("(your git config)", "(not audited)", String.join(", ", keys) + ": "
                        + e.getMessage()));
            }
            audit.walk();
            for (DirectoryConfig config : audit.directoryConfigs) {
                audit.tree.audited(config.gitDir, config::auditHooksPaths);
            }
            List<Finding> sorted = new ArrayList<>(audit.tree.findings);
            sorted.sort(null);
            return new Result(List.copyOf(sorted), audit.entries);
        }
    }

    private void walk() throws IOException {
        Files.walkFileTree(tree.root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                entries++;
                boolean dotGit = !dir.equals(tree.root) && dir.getFileName().toString().equalsIgnoreCase(".git");
                if (!dotGit && !isGitDirectory(dir)) {
                    return FileVisitResult.CONTINUE;
                }
                try {
                    gitDirectory(dir, dotGit ? dir.getParent() : null);
                } catch (IOException e) {
                    tree.notAudited(dir, e);
                }
                // What lies under a .git is what gitDirectory audits. Any other directory may only
                // pose as one (a HEAD and an objects are two entries a command can write; git still
                // takes the nearest .git beneath): everything under it is walked as well.
                // A .GIT (another case) is git's only on a file system that ignores case: walked too.
                return dotGit && dir.getFileName().toString().equals(".git") ? FileVisitResult.SKIP_SUBTREE
                        : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                entries++;
                String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
                try {
                    switch (name) {
                        case ".git" -> gitPointer(file, attrs);
                        case ".envrc" -> {
                            wholeFile(file, attrs, "direnv .envrc (runs in the shell that enters the directory)");
                            envrcs.audit(file);
                        }
                        case "tasks.json" -> {
                            if (file.getParent().getFileName().toString().equalsIgnoreCase(".vscode")) {
                                vsCodeTasks(file, attrs);
                            }
                        }
                        default -> { }
                    }
                } catch (IOException e) {
                    tree.notAudited(file, e);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                tree.notAudited(file, e);
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
        byte[] content = tree.readSmall(file);
        if (content == null) {
            return;
        }
        Optional<String> gitdir = GitPointer.gitdir(content);
        if (gitdir.isEmpty()) {
            return; // git refuses such a .git file ("invalid gitfile format"); nothing runs
        }
        if (notUtf8(gitdir.get(), file, "gitdir")) {
            return;
        }
        Path target = tree.resolve(file.getParent(), gitdir.get(), file, "gitdir");
        if (target != null) {
            follow(file, "gitdir", target, file.getParent());
        }
    }

    /**
     * Audits the git directory {@code target} names when it lies inside the tree; reports it when it
     * lies outside, and when it does not exist (whoever creates it decides what git reads there).
     */
    private void follow(Path from, String key, Path target, Path workTree) throws IOException {
        Path real;
        try {
            real = target.toRealPath();
        } catch (IOException missing) {
            tree.add(from, key, AuditedTree.display(target) + " (does not resolve: whoever creates it "
                    + "decides what git reads there)");
            return;
        }
        if (!real.startsWith(tree.root)) {
            tree.add(from, key, real + " (outside the audited tree: not audited)");
        } else if (Files.isDirectory(real, NOFOLLOW)) {
            gitDirectory(real, workTree);
        } else {
            tree.add(from, key, tree.relative(real) + " (not a directory)");
        }
    }

    private void gitDirectory(Path dir, Path reachedFrom) throws IOException {
        // A .git reached from elsewhere (a worktree's commondir) still has its work tree around it.
        Path workTree = reachedFrom == null && dir.getFileName().toString().equals(".git")
                ? dir.getParent() : reachedFrom;
        if (!gitDirectoriesSeen.add(Arrays.asList(dir, workTree))) {
            return;
        }
        if (protectedGitDirectories != null && !protectedGitDirectories.contains(dir)) {
            tree.add(dir, "not protected by make up",
                    "its config and hooks are writable from the sandbox; make up protects it");
        }
        commondir(dir, workTree);
        DirectoryConfig directoryConfig = new DirectoryConfig(dir, workTree);
        for (String name : List.of("config", "config.worktree")) {
            Path config = dir.resolve(name);
            if (Files.isSymbolicLink(config)) {
                tree.add(config, "symbolic link", Files.readSymbolicLink(config).toString());
                Path target = tree.inTree(dir, Files.readSymbolicLink(config).toString());
                if (target != null) {
                    config(target, config, directoryConfig, 0);
                }
            } else if (Files.exists(config, NOFOLLOW)) {
                config(config, config, directoryConfig, 0);
            }
        }
        directoryConfigs.add(directoryConfig);
        // Each part on its own: one that cannot be read is reported and hides none of the others.
        hooks(dir.resolve("hooks"), "hook");
        for (String todo : List.of("rebase-merge/git-rebase-todo", "sequencer/todo")) {
            tree.audited(dir.resolve(todo), () -> execLines(dir.resolve(todo)));
        }
        tree.audited(dir.resolve(REBASE_STRATEGY), () -> rebaseStrategy(dir.resolve(REBASE_STRATEGY)));
        tree.audited(dir.resolve(SEQUENCER_OPTIONS), () -> sequencerStrategy(dir.resolve(SEQUENCER_OPTIONS)));
        for (String nested : List.of("modules", "worktrees")) {
            tree.audited(dir.resolve(nested), () -> nestedGitDirectories(dir.resolve(nested)));
        }
        List<Path> workTrees = directoryConfig.workTreesInTree();
        hiddenChanges.audit(dir, workTrees.isEmpty() ? null : new HiddenChanges.WorkTree(workTrees,
                directoryConfig.compareSettings()), () -> objectNamesSha256(dir));
        Path objects = dir.resolve("objects");
        if (Files.exists(objects, NOFOLLOW)) {
            tree.audited(objects, () -> forgedObjects.audit(objects, objectNamesSha256(dir)));
        }
    }

    /**
     * Whether the git directory's object names are SHA-256: as git reads it (setup.c), from
     * {@code extensions.objectFormat} in the config of its common directory (what its
     * {@code commondir} names, else itself), never a linked worktree's own. When that directory
     * is not known here, the index is not read.
     */
    private boolean objectNamesSha256(Path dir) throws IOException {
        Path common = dir;
        Path pointer = dir.resolve("commondir");
        if (Files.exists(pointer, NOFOLLOW)) {
            byte[] content = Files.isRegularFile(pointer, NOFOLLOW) ? tree.readSmall(pointer) : null;
            Optional<String> named = content == null ? Optional.empty() : GitPointer.commondir(content);
            common = named.isEmpty() ? null : tree.inTree(dir, named.get());
        }
        for (DirectoryConfig config : directoryConfigs) {
            if (config.gitDir.equals(common)) {
                return "sha256".equalsIgnoreCase(config.objectFormat);
            }
        }
        throw new GitIndex.Unreadable("the index is not read: the repository whose object names it holds (its commondir's) "
                + "is not one the audit read");
    }

    /**
     * A {@code commondir} makes git read the config and hooks of the directory it names. A
     * worktree's ({@code <G>/worktrees/<id>/commondir}) names {@code G}; one that names the git
     * directory itself changes nothing (what {@code make up} leaves in a protected {@code .git}).
     * Anything else is a finding, and what it names is audited.
     */
    private void commondir(Path dir, Path workTree) throws IOException {
        Path file = dir.resolve("commondir");
        if (!Files.exists(file, NOFOLLOW)) {
            return;
        }
        byte[] content = Files.isSymbolicLink(file) ? null : tree.readSmall(file);
        if (content == null) {
            if (Files.isSymbolicLink(file)) {
                tree.add(file, "commondir, a symbolic link", Files.readSymbolicLink(file).toString());
            }
            return;
        }
        Optional<String> common = GitPointer.commondir(content);
        if (common.isEmpty()) {
            return; // git stops: "failed to read .../commondir"
        }
        if (notUtf8(common.get(), file, "commondir")) {
            return;
        }
        Path target = tree.resolve(dir, common.get(), file, "commondir");
        if (target == null) {
            return;
        }
        Path real;
        try {
            real = target.toRealPath();
        } catch (IOException missing) {
            follow(file, "commondir", target, workTree);
            return;
        }
        Path parent = dir.getParent();
        boolean worktree = parent != null && parent.getFileName().toString().equals("worktrees")
                && real.equals(parent.getParent());
        if (real.equals(dir) || worktree) {
            if (worktree) {
                follow(file, "commondir", target, workTree);
            }
            return;
        }
        boolean main = dir.getFileName().toString().equalsIgnoreCase(".git");
        tree.add(file, main ? "commondir in a main .git directory" : "commondir",
                (real.startsWith(tree.root) ? tree.relative(real) : real.toString())
                        + " (git reads the config and hooks there)");
        follow(file, "commondir", target, workTree);
    }

    /**
     * The {@code exec} lines of a stopped rebase's, cherry-pick's or revert's list of what is left
     * to do: {@code git rebase --continue} (or {@code cherry-pick --continue}) on the host runs them.
     */
    private void execLines(Path todo) throws IOException {
        if (!Files.exists(todo, NOFOLLOW)) {
            return;
        }
        byte[] content = tree.readSmall(todo);
        if (content == null) {
            return;
        }
        for (String line : new String(content, StandardCharsets.UTF_8).split("\n")) {
            String[] words = line.strip().split("\\s+", 2);
            if (words.length == 2 && (words[0].equals("exec") || words[0].equals("x"))) {
                tree.add(todo, "exec (runs on --continue)", words[1]);
            }
        }
    }

    /**
     * The merge strategy a stopped rebase goes on with, one line: {@code git rebase --continue}
     * (or {@code --skip}) on the host runs {@code git-merge-<strategy>} for any but git's own,
     * a program a command wrote when the name holds a slash ({@code x/../.git/p}).
     */
    private void rebaseStrategy(Path file) throws IOException {
        if (!Files.exists(file, NOFOLLOW)) {
            return;
        }
        byte[] content = tree.readSmall(file);
        if (content != null) {
            String strategy = new String(content, StandardCharsets.UTF_8);
            strategy(file, "merge strategy (runs on --continue)",
                    strategy.endsWith("\n") ? strategy.substring(0, strategy.length() - 1) : strategy);
        }
    }

    /** The same for a stopped cherry-pick or revert: {@code options.strategy} in its options, a config file. */
    private void sequencerStrategy(Path file) throws IOException {
        if (!Files.exists(file, NOFOLLOW)) {
            return;
        }
        byte[] content = tree.readSmall(file);
        if (content == null) {
            return;
        }
        try {
            for (GitConfigFile.Entry entry : git.read(content)) {
                if (entry.key().equalsIgnoreCase("options.strategy")) {
                    strategy(file, "options.strategy (runs on --continue)", entry.value() == null
                            ? "true" : entry.value());
                }
            }
        } catch (GitConfigFile.Unreadable e) {
            tree.add(file, "(git cannot read it)", e.getMessage());
        }
    }

    private void strategy(Path file, String key, String strategy) {
        if (!GIT_STRATEGIES.contains(strategy)) {
            tree.add(file, key, strategy);
        }
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

    /**
     * What one git directory's configs say about hooks: its {@code core.hooksPath} settings, and
     * where a {@code core.worktree} moves its work tree (git reads that only from the directory's
     * own {@code config} and {@code config.worktree}, not from includes); and which configs were read,
     * which ends include cycles. A relative hooks path is taken from the directory git runs in:
     * the top of the work tree, wherever core.worktree moved it; and in a bare repository, or one
     * with core.worktree, some commands run from wherever the user is. Each value is audited once
     * the walk has seen every git directory, from every base it may have.
     */
    private final class DirectoryConfig {
        final Path gitDir;
        final Path workTree;
        final List<Finding> hooksPaths = new ArrayList<>();
        final List<Path> movedTo = new ArrayList<>();
        final Set<List<Path>> read = new HashSet<>();
        /** extensions.objectFormat of its own config; null: not set there (SHA-1, unless a commondir says otherwise). */
        String objectFormat;
        /** The last core.autocrlf, core.trustctime and core.checkstat its configs set (includes too); absent: yours count. */
        final Map<String, String> compareKeys = new HashMap<>();

        DirectoryConfig(Path gitDir, Path workTree) {
            this.gitDir = gitDir;
            this.workTree = workTree;
        }

        /** How git compares its work tree's files with the index: from its configs, else from yours. */
        UnseenEdits.Settings compareSettings() {
            String autocrlf = compareKeys.getOrDefault("core.autocrlf", usersCompareKeys.get("core.autocrlf"));
            String trustctime = compareKeys.getOrDefault("core.trustctime", usersCompareKeys.get("core.trustctime"));
            String checkstat = compareKeys.getOrDefault("core.checkstat", usersCompareKeys.get("core.checkstat"));
            return new UnseenEdits.Settings(autocrlf != null && (GitConfigFile.isTrue(autocrlf)
                    || autocrlf.equalsIgnoreCase("input")),
                    trustctime == null || GitConfigFile.isTrue(trustctime),
                    checkstat == null || !checkstat.equalsIgnoreCase("minimal"));
        }

        /** Its own work tree and each a core.worktree moves it to, those that lie in the tree. */
        List<Path> workTreesInTree() {
            List<Path> inTree = new ArrayList<>();
            if (workTree != null) {
                inTree.add(workTree);
            }
            for (Path moved : movedTo) {
                Path real = tree.quietlyInTree(moved);
                if (real != null && !inTree.contains(real)) {
                    inTree.add(real);
                }
            }
            return inTree;
        }

        void moveWorkTree(String value) {
            Path base = tree.resolve(gitDir, value, gitDir, "core.worktree");
            if (base != null) {
                movedTo.addFirst(base); // the last one set is the one git takes
            }
        }

        void auditHooksPaths() throws IOException {
            boolean runsFromAnywhere = workTree == null || !movedTo.isEmpty();
            List<Finding> settings = new ArrayList<>(hooksPaths);
            usersHooksPaths.forEach(path -> settings.add(new Finding(tree.relative(gitDir),
                    "core.hooksPath of your git config", path)));
            for (Finding setting : settings) {
                String value = setting.command();
                if (runsFromAnywhere && !value.startsWith("/") && !value.startsWith("~")) {
                    auditFromEveryDirectory(setting);
                } else {
                    auditFromEachBase(setting);
                }
            }
        }

        /**
         * From the top of the work tree (where core.worktree moves it, else its own), the git
         * directory, and every work tree a core.worktree in the tree moves to; a missing target is
         * reported from the one base git takes first.
         */
        private void auditFromEachBase(Finding setting) throws IOException {
            List<Path> bases = new ArrayList<>(movedTo);
            if (workTree != null) {
                bases.add(workTree);
            }
            bases.add(gitDir);
            bases.addAll(movedWorkTrees());
            Set<Path> audited = new HashSet<>();
            for (int i = 0; i < bases.size(); i++) {
                Path target = expanded(bases.get(i), setting.command());
                if (i == 0 && target != null
                        && existingInTree(target, tree.root.resolve(setting.file()), setting.key()
                                + " target") == null) {
                    continue;
                }
                auditHooksAt(target, audited);
            }
        }

        /**
         * git stays in the directory it was started in (in a bare repository, or with a work tree
         * that core.worktree moved away, for commands that need no work tree: {@code git hook
         * run}): any directory where it finds this git directory, which is any inside it or in the
         * work tree around it. The hooks path is audited from every one of those, so that a hook
         * planted deep inside is a finding (with its digest) like any other; and from the top of
         * every work tree core.worktree moves to.
         */
        private void auditFromEveryDirectory(Finding setting) throws IOException {
            tree.findings.add(new Finding(setting.file(), setting.key() + " target", setting.command()
                    + " (relative: git takes "
                    + "it from the directory it runs in, which here may be any; audited from every directory in the git "
                    + "directory and around it)"));
            Set<Path> audited = new HashSet<>();
            List<Path> walked = new ArrayList<>();
            for (Path top : workTree == null ? List.of(gitDir) : List.of(workTree, gitDir)) {
                Path real = tree.quietlyInTree(top);
                if (real == null || walked.stream().anyMatch(real::startsWith)) {
                    continue; // a .git inside its work tree is walked with it
                }
                walked.add(real);
                Files.walkFileTree(real, new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                        auditHooksAt(expanded(dir, setting.command()), audited);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e) {
                        return FileVisitResult.CONTINUE; // the tree's own walk reports what it cannot read
                    }
                });
            }
            List<Path> movedTops = new ArrayList<>(movedTo);
            movedTops.addAll(movedWorkTrees());
            for (Path top : movedTops) {
                auditHooksAt(expanded(top, setting.command()), audited);
            }
        }

        private void auditHooksAt(Path target, Set<Path> audited) throws IOException {
            Path hooks = target == null ? null : tree.quietlyInTree(target);
            if (hooks != null && audited.add(hooks)) {
                hooks(hooks, "hook (core.hooksPath)");
            }
        }
    }

    /**
     * Every work tree a {@code core.worktree} moves to, anywhere in the tree: a linked worktree's own
     * {@code config.worktree} may move the work tree whose hooks the common config's hooksPath names.
     */
    private List<Path> movedWorkTrees() {
        return directoryConfigs.stream().flatMap(config -> config.movedTo.stream()).toList();
    }

    /**
     * One config file: {@code file} is its real path (read and named in findings), {@code opened}
     * the path git opens it by, whose directory a relative include is taken from (a link's, not
     * its target's).
     */
    private void config(Path file, Path opened, DirectoryConfig directory, int depth) throws IOException {
        if (depth > MAX_INCLUDE_DEPTH) {
            tree.add(file, "include", "deeper than " + MAX_INCLUDE_DEPTH + " includes (git stops "
                    + "there: \"exceeded maximum include depth\")");
            return;
        }
        // The directory's real path: a cycle through ".." or a link to "." comes back to a key seen before.
        if (!directory.read.add(Arrays.asList(file, realOrAsIs(opened.getParent())))) {
            return;
        }
        byte[] content = tree.readSmall(file);
        if (content == null) {
            return;
        }
        List<GitConfigFile.Entry> entries;
        try {
            entries = git.read(content);
        } catch (GitConfigFile.Unreadable e) {
            tree.add(file, "(git cannot read it)", e.getMessage());
            return;
        } catch (IOException e) {
            tree.notAudited(file, e);
            return;
        }
        for (GitConfigFile.Entry entry : entries) {
            String key = entry.key().toLowerCase(Locale.ROOT);
            if (key.equals("core.worktree") && entry.value() != null && depth == 0) {
                directory.moveWorkTree(entry.value());
            }
            if (COMPARE_KEYS.contains(key)) {
                directory.compareKeys.put(key, entry.value() == null ? "true" : entry.value());
            }
            if (key.equals("extensions.objectformat") && entry.value() != null && depth == 0
                    && opened.getFileName().toString().equals("config")) { // git reads it there only, and no include
                directory.objectFormat = entry.value();
            }
            if (!CommandSettings.runsCommand(entry.key(), entry.value())) {
                continue;
            }
            String value = entry.value() == null ? "true" : entry.value();
            Finding finding = new Finding(tree.relative(file), entry.key(), value);
            tree.findings.add(finding);
            if (key.equals("core.hookspath")) {
                directory.hooksPaths.add(finding);
            } else if (key.equals("include.path") || key.startsWith("includeif.")) {
                Path included = expanded(opened.getParent(), value);
                Path real = included == null ? null : existingInTree(included, file, entry.key() + " target");
                if (real != null) {
                    config(real, included, directory, depth + 1);
                }
            }
        }
    }

    private static Path realOrAsIs(Path path) {
        try {
            return path.toRealPath();
        } catch (IOException e) {
            return path.normalize();
        }
    }

    /** {@link GitConfigFile#expanded} with this audit's tree.home. */
    private Path expanded(Path base, String value) {
        return GitConfigFile.expanded(base, value, tree.home);
    }

    /**
     * The real path of {@code target} when it exists inside the tree. Null otherwise: what lies
     * outside is named by the setting's own finding, not read; a missing target inside the tree
     * is a finding of its own.
     */
    private Path existingInTree(Path target, Path from, String key) {
        try {
            Path real = target.toRealPath();
            return real.startsWith(tree.root) ? real : null;
        } catch (IOException missing) {
            if (target.normalize().startsWith(tree.root)) {
                tree.add(from, key, tree.relative(target.normalize()) + " (does not exist: whoever "
                        + "creates it decides what git reads there)");
            }
            return null;
        }
    }

    /**
     * Whether a pointer's path is not UTF-8 (its bytes decoded with replacements), and so reported:
     * git follows the bytes, but no name this JVM can open stands for them.
     */
    private boolean notUtf8(String path, Path from, String key) {
        if (path.indexOf('\uFFFD') < 0) {
            return false;
        }
        tree.add(from, key, path + " (not UTF-8: git follows it, the audit cannot; not audited)");
        return true;
    }

    /** The hooks in {@code dir}; what cannot be read, the directory or a hook, is reported as not audited. */
    private void hooks(Path dir, String key) {
        tree.audited(dir, () -> {
            if (Files.isSymbolicLink(dir)) {
                tree.add(dir, key + " directory, a symbolic link", Files.readSymbolicLink(dir).toString());
                return;
            }
            if (!Files.isDirectory(dir, NOFOLLOW)) {
                return;
            }
            try (DirectoryStream<Path> children = Files.newDirectoryStream(dir)) {
                for (Path hook : children) {
                    if (!hook.getFileName().toString().endsWith(".sample")) {
                        tree.audited(hook, () -> hook(hook, key));
                    }
                }
            }
        });
    }

    private void hook(Path hook, String key) throws IOException {
        PosixFileAttributes attrs = Files.readAttributes(hook, PosixFileAttributes.class, NOFOLLOW);
        if (attrs.isSymbolicLink()) {
            tree.add(hook, key, "symbolic link to " + Files.readSymbolicLink(hook));
        } else if (attrs.isRegularFile() && isExecutable(attrs)) {
            tree.add(hook, key, "executable, " + tree.digest(hook));
        }
    }

    private void wholeFile(Path file, BasicFileAttributes attrs, String key) throws IOException {
        if (attrs.isSymbolicLink()) {
            tree.add(file, key, "symbolic link to " + Files.readSymbolicLink(file));
        } else if (attrs.isRegularFile()) {
            tree.add(file, key, tree.digest(file));
        }
    }

    private void vsCodeTasks(Path file, BasicFileAttributes attrs) throws IOException {
        if (!attrs.isRegularFile()) {
            wholeFile(file, attrs, "VS Code tasks");
            return;
        }
        byte[] bytes = tree.readSmall(file);
        if (bytes == null) {
            return;
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        try {
            // What the task runs, and the whole file's digest: its dependsOn, options (shell, env)
            // and inputs, the top-level options and the other tasks decide what runs as well.
            String whole = "; the file's " + AuditedTree.sha256(bytes);
            for (VsCodeTasks.AutoTask task : VsCodeTasks.folderOpenTasks(text)) {
                tree.add(file, "task '" + task.label() + "' runs on folder open",
                        task.command() + whole);
            }
        } catch (RuntimeException unparseable) {
            // VS Code may read what Jackson does not; what cannot be checked is reported whole.
            if (text.toLowerCase(Locale.ROOT).contains("folderopen")) {
                tree.add(file, "VS Code tasks (not parseable, mentions folderOpen)", tree.digest(file));
            }
        }
    }

    private boolean isGitDirectory(Path dir) {
        return ProtectedPaths.looksLikeGitDirectory(name -> Files.exists(dir.resolve(name), NOFOLLOW));
    }

    private static boolean isExecutable(PosixFileAttributes attrs) {
        Set<PosixFilePermission> mode = attrs.permissions();
        return mode.contains(PosixFilePermission.OWNER_EXECUTE) || mode.contains(PosixFilePermission.GROUP_EXECUTE)
                || mode.contains(PosixFilePermission.OTHERS_EXECUTE);
    }


}
