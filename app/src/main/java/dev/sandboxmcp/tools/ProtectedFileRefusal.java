package dev.sandboxmcp.tools;

import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.ProtectedPaths;

/** The words for a write the workspace refused because the host runs that file by itself. */
final class ProtectedFileRefusal {

    private ProtectedFileRefusal() {
    }

    static String text(String requested, ProtectedPaths.Kind kind, String resolved) {
        String where = requested.equals(resolved) ? Names.quoted(requested)
                : Names.quoted(requested) + " (that is " + Names.quoted(resolved) + ")";
        return "refused: " + where + " is " + what(kind) + ". A change there could run commands on the user's "
                + "machine outside this sandbox, so the file tools never write it; nothing was written. If the change "
                + "is needed, tell the user what to change and why, and ask them to make it themselves.";
    }

    private static String what(ProtectedPaths.Kind kind) {
        return switch (kind) {
            case GIT_CONFIG -> "a git repository's configuration, from which git on the user's machine runs commands "
                    + "(core.fsmonitor, core.pager, aliases, filters, credential helpers)";
            case GIT_HOOK -> "in a git repository's hooks, which git on the user's machine runs by itself (on commit, "
                    + "checkout, merge)";
            case GIT_POINTER -> "what tells git where a repository's git directory, and so its configuration, is (a .git "
                    + "file, commondir or gitdir)";
            case DIRENV -> "direnv's .envrc, which the user's shell runs on entering the directory";
            case VSCODE_TASKS -> "VS Code's task list, whose tasks can run by themselves when the folder is opened";
        };
    }
}
