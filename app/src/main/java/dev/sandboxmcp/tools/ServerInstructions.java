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
                - run_command: /bin/sh -lc in the workspace root (or cwd, a directory inside it). stdin is closed. \
                Default timeout %d s, at most %d s; at the deadline the command and everything it started are killed, \
                and so is anything it leaves in the background. A call returns within %d s: a command still running \
                then goes on as a job (still_running, job_id; read it with job_output, end it with stop_job). A result \
                shows %d KiB of output, head and tail; a [...] line says what was left out and the job_output call \
                that reads it (output_id, stream, offset). At most %d commands run at once.
                - start_job / job_output / stop_job / list_jobs: background work with no deadline (servers, watchers). \
                Jobs survive reconnects and are killed when the server stops. job_output pages by byte offset, %d KiB \
                a page.
                - read_file: UTF-8 text in pages of %d lines within %d KiB (offset, limit), with the total line count \
                and the next offset; tail=N reads the last N lines of a log.
                - write_file: writes UTF-8 text, at most %d KiB per call; replacing is atomic, append=true appends. \
                The parent directory must exist (run_command mkdir -p).
                - edit_file: replaces exact text (old_text must match expected_replacements times, default 1) and \
                returns a unified diff; prefer it to rewriting whole files.
                - list_directory: names, kinds and sizes, 1 to 3 levels deep; links are shown, not followed.

                Paths are relative to the workspace root; .. and symbolic links are followed only while they stay \
                inside it. The rest of the container is read-only apart from /tmp (small, not executable, lost on \
                restart) and $HOME; there is no Docker, and no network unless the user allowed some hosts (then \
                HTTPS_PROXY is set and other hosts get a 403 from the proxy).

                Files that the user's own machine runs by itself are off limits, because a change there would run \
                commands outside this sandbox: each git repository's configuration and hooks are mounted read-only \
                (git config, git remote add, recording a branch's upstream or writing .git/hooks/* fail with \
                "Read-only file system" or "Device or resource busy"), and write_file and edit_file refuse any \
                .git/config, .git/hooks/*, .git file, .envrc and .vscode/tasks.json. Commits, branches, fetches and \
                diffs work as usual. Do not work around this (no moving .git, no core.hooksPath, no new hooks \
                elsewhere): if such a change is needed, tell the user what to change and why, and ask them to make it.
                """.formatted(limits.defaultTimeout().toSeconds(), limits.maxTimeout().toSeconds(),
                limits.callBudget().toSeconds(), limits.outputViewBytes() / 1024, limits.maxConcurrentCommands(),
                limits.pageBytes() / 1024, limits.pageLines(), limits.pageBytes() / 1024, limits.fileMaxBytes() / 1024);
    }

    private static String toolchainsLine(String toolchains) {
        if (toolchains.isEmpty()) {
            return "";
        }
        return "Toolchains: " + toolchains + "; plus git, ripgrep, jq, curl, sqlite3. $HOME persists (caches, "
                + "~/go, ~/.npm, ~/.m2); /tmp does not and cannot run programs: build in the workspace or $HOME.\n\n";
    }
}
