package dev.sandboxmcp.workspace;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.IntPredicate;
import java.util.function.Predicate;

/**
 * Files that programs on the host run without being asked, so that writing one from the sandbox
 * would run a command on the host, as the user, outside every limit of the container: git's
 * configuration (core.fsmonitor, aliases, filters, ...) and hooks, direnv's {@code .envrc}, and VS
 * Code's {@code .vscode/tasks.json} (tasks that run when the folder opens), and what points git
 * at a git directory ({@code .git} files, {@code commondir}). The file tools refuse
 * to write them; this is the one place that says which they are.
 *
 * <p>The rule is applied to the path as resolved (after {@code ..} and symbolic links), one name
 * per directory from the workspace root, and names are compared ignoring case (a case-insensitive
 * file system would take {@code .GIT/CONFIG} for {@code .git/config}). A git directory is a
 * directory named {@code .git}, or one that holds what git looks for in one (what a {@code .git}
 * file's {@code gitdir:} line may point to: a bare repository, {@code .git/modules/x},
 * {@code .git/worktrees/x}, a separate git directory).
 */
public final class ProtectedPaths {

    /** What a protected file is; each is a fact the caller words for its reader. */
    public enum Kind {
        /** {@code config} or {@code config.worktree} of a git directory. */
        GIT_CONFIG,
        /** Anything under a git directory's {@code hooks}. */
        GIT_HOOK,
        /**
         * What says where a repository's git directory is: a {@code .git} file, or a git
         * directory's {@code commondir} or {@code gitdir} (pointed elsewhere, they bring in a config).
         */
        GIT_POINTER,
        /** direnv's {@code .envrc}. */
        DIRENV,
        /** {@code .vscode/tasks.json}. */
        VSCODE_TASKS
    }

    private ProtectedPaths() {
    }

    /**
     * Whether writing the file at {@code names} (resolved, from the workspace root; the last is
     * the file) is refused, and why. {@code isGitDirectory.test(i)} says whether the directory
     * made of the first {@code i} names is a git directory by its contents.
     */
    public static Optional<Kind> classify(List<String> names, IntPredicate isGitDirectory) {
        if (names.isEmpty()) {
            return Optional.empty();
        }
        int last = names.size() - 1;
        String file = lower(names.get(last));
        if (file.equals(".envrc")) {
            return Optional.of(Kind.DIRENV);
        }
        if (file.equals("tasks.json") && last > 0 && lower(names.get(last - 1)).equals(".vscode")) {
            return Optional.of(Kind.VSCODE_TASKS);
        }
        for (int i = 0; i < last; i++) {
            if (lower(names.get(i)).equals("hooks") && inGitDirectory(names, i, isGitDirectory)) {
                return Optional.of(Kind.GIT_HOOK);
            }
        }
        if ((file.equals("config") || file.equals("config.worktree")) && inGitDirectory(names, last, isGitDirectory)) {
            return Optional.of(Kind.GIT_CONFIG);
        }
        if (file.equals(".git")
                || (file.equals("commondir") || file.equals("gitdir")) && inGitDirectory(names, last, isGitDirectory)) {
            return Optional.of(Kind.GIT_POINTER);
        }
        return Optional.empty();
    }

    /** Whether the directory holding {@code names[index]} is, or lies beneath, a git directory. */
    private static boolean inGitDirectory(List<String> names, int index, IntPredicate isGitDirectory) {
        for (int i = 0; i < index; i++) {
            if (lower(names.get(i)).equals(".git")) {
                return true;
            }
        }
        return isGitDirectory.test(index);
    }

    /**
     * Whether a directory's entries may make it a git directory: a {@code HEAD}, and an
     * {@code objects} or a {@code commondir} (a worktree's), each of any kind. Git takes
     * {@code objects} as a link or even an executable file too (it only checks that it can
     * search it), so the kind is not asked: a link to another repository's objects makes any
     * directory one git reads settings from. {@code exists} looks at an entry without following links.
     */
    public static boolean looksLikeGitDirectory(Predicate<String> exists) {
        return exists.test("HEAD") && (exists.test("objects") || exists.test("commondir"));
    }

    private static String lower(String name) {
        return name.toLowerCase(Locale.ROOT);
    }
}
