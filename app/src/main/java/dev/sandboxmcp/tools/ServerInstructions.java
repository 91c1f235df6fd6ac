package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;

/** The {@code instructions} text shown to the assistant's model: what the workspace is and its limits. */
public final class ServerInstructions {

    private ServerInstructions() {
    }

    /** @param toolchains what the runner offers ("go 1.24.4, node 20.19.2"), or "" when not known */
    public static String text(Limits limits, String toolchains) {
        return toolchainsLine(toolchains) + """
                You are working in a sandbox: a locked-down container whose only writable, persistent directory is \
                the workspace, the user's real development directory (mounted at its root). Changes there are real \
                and immediate; there is no undo, so prefer small, reviewable edits and use git to see what changed.

                Tools:
                %s
                Paths are relative to the workspace root; .. and symbolic links are followed only while they stay \
                inside it. The rest of the container is read-only apart from /tmp (small, not executable, lost on \
                restart) and $HOME; there is no Docker, and no network unless the user allowed some hosts (then \
                HTTPS_PROXY is set and other hosts get a 403 from the proxy).

                Files that the user's own machine runs by itself are off limits, because a change there would run \
                commands outside this sandbox: each git repository's configuration, hooks and .git/info are mounted \
                read-only (git config, git remote add, recording a branch's upstream or writing .git/hooks/* or \
                .git/info/exclude fail with \
                "Read-only file system" or "Device or resource busy"), and write_file and edit_file refuse any \
                .git/config, .git/hooks/*, .git file, .envrc and .vscode/tasks.json. Commits, branches, fetches and \
                diffs work as usual. Do not work around this (no moving .git, no core.hooksPath, no new hooks \
                elsewhere), and do not hide changes from the user's review (no git update-index --skip-worktree or \
                --assume-unchanged, no git replace; the user's audit reports them): if such a change is needed, tell \
                the user what to change and why, and ask them to make it.
                """.formatted(ToolCatalog.definitions(limits).instructionLines());
    }

    private static String toolchainsLine(String toolchains) {
        if (toolchains.isEmpty()) {
            return "";
        }
        return "Toolchains: " + toolchains + "; plus git, ripgrep, jq, curl, sqlite3. $HOME persists (caches, "
                + "~/go, ~/.npm, ~/.m2); /tmp does not and cannot run programs: build in the workspace or $HOME.\n\n";
    }
}
