package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The part of the audit that reads each direnv {@code .envrc} for what it hands your shell to ({@link #audit}). */
final class EnvrcAudit {

    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    /** How deep the audit follows shell files an .envrc loads, which load others. */
    private static final int ENVRC_DEPTH = 4;

    private final AuditedTree tree;

    EnvrcAudit(AuditedTree tree) {
        this.tree = tree;
    }

    /**
     * What an {@code .envrc} loads or puts on your PATH ({@link Envrc}): each file it loads with its
     * digest (direnv does not ask you to allow it again when it changes), and what a loaded shell
     * file loads in turn, up to {@link #ENVRC_DEPTH} deep; each directory or code it runs from
     * named. An {@code .envrc} that is a link is read through it, when it leads to a file in the tree.
     */
    void audit(Path file) throws IOException {
        if (!file.getFileName().toString().equals(".envrc")) {
            return;
        }
        Path real = Files.isSymbolicLink(file) ? tree.quietlyInTree(file) : file;
        if (real != null && Files.isRegularFile(real, NOFOLLOW)) {
            envrcScript(file, real, real.getParent(), "direnv: ", 0, new HashSet<>());
        }
    }

    /**
     * One shell file that {@code named} (an .envrc, where findings are filed) runs: {@code script},
     * its relative paths taken from {@code base}.
     */
    private void envrcScript(Path named, Path script, Path base, String prefix, int depth,
            Set<Path> read) throws IOException {
        if (!read.add(script)) {
            return;
        }
        byte[] content = tree.readSmall(script);
        if (content == null) {
            return;
        }
        for (Envrc.Statement statement : Envrc.statements(new String(content, StandardCharsets.UTF_8))) {
            String key = prefix + statement.text();
            if (statement.computed()) {
                tree.add(named, key, "a path built when it runs (not audited)");
                continue;
            }
            List<Path> loaded = new ArrayList<>();
            switch (statement.kind()) {
                case LOADS -> {
                    for (String path : statement.paths()) {
                        loaded.add(loadedByEnvrc(named, key, base, path, statement.optional().contains(path)));
                    }
                }
                case LOADS_FROM_ABOVE -> {
                    for (Path dir = script.getParent().getParent(); dir != null
                            && dir.startsWith(tree.root); dir = dir.getParent()) {
                        if (Files.exists(dir.resolve(statement.paths().getFirst()), NOFOLLOW)) {
                            loaded.add(loadedByEnvrc(named, key, dir, statement.paths().getFirst(), false));
                        }
                    }
                }
                case RUNS -> {
                    Path program = tree.resolve(base, statement.paths().getFirst(), named, key);
                    if (program != null && program.normalize().startsWith(tree.root)) {
                        loadedByEnvrc(named, key, base, statement.paths().getFirst(), false);
                    }
                }
                case RUNS_FROM -> tree.add(named, key, "runs programs or code from the tree, "
                        + "which the sandbox can write; direnv does not ask again when they change");
            }
            if (statement.shell() && depth < ENVRC_DEPTH) {
                for (Path next : loaded) {
                    if (next != null) {
                        envrcScript(named, next, statement.fromItsDirectory() ? next.getParent() : base,
                                "direnv (through " + tree.relative(next) + "): ", depth + 1, read);
                    }
                }
            }
        }
    }

    /**
     * A file an {@code .envrc} loads: a finding with its digest, or why it has none ({@code optional}:
     * none when it is missing). Its real path when it lies in the tree and could be read, else null.
     */
    private Path loadedByEnvrc(Path envrc, String key, Path base, String path, boolean optional) throws IOException {
        Path target = tree.resolve(base, path.startsWith("~/") && tree.home != null
                ? tree.home.resolve(path.substring(2)).toString() : path,
                envrc, key);
        if (target == null) {
            return null;
        }
        Path real = tree.quietlyInTree(target);
        if (real != null && Files.isDirectory(real, NOFOLLOW)) {
            target = target.resolve(".envrc"); // source_env of a directory loads its .envrc
            real = tree.quietlyInTree(target);
        }
        if (real != null && Files.isRegularFile(real, NOFOLLOW)) {
            tree.add(envrc, key, tree.relative(real) + ", " + tree.digest(real));
            return real;
        } else if (real != null) {
            tree.add(envrc, key, tree.relative(real) + " (not a regular file: " + AuditedTree.kind(real) + ")");
        } else if (Files.exists(target)) {
            tree.add(envrc, key, AuditedTree.display(target) + " (outside the audited tree: not audited)");
        } else if (!optional) {
            tree.add(envrc, key, AuditedTree.display(target) + " (does not exist: whoever creates it "
                    + "decides what runs)");
        }
        return null;
    }
}
