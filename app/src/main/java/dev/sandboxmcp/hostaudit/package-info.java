/**
 * The {@code audit} mode, run on the host ({@code make audit}, {@code make up}, {@code make down}
 * and the watcher): what in the workspace the host would run, or would show you other than it is,
 * when you later use git, direnv or your editor there. The sandbox can write every file of the
 * workspace; this reads them as the host's programs would and reports what changed since you
 * accepted it.
 *
 * <pre>
 *   entry        AuditCommand   one-shot audit, --accept, --watch; exit 0 / 1 (new) / 2 (did not run)
 *                AuditWatch     an audit every 2 s; each new finding printed once, and logged
 *                Baseline       the accepted findings, outside the workspace (mode 0600)
 *   walk         TreeAudit      every git directory (and what .git files, commondir, worktrees and
 *                               modules lead to), config files, hooks, .envrc, VS Code tasks
 *                AuditedTree    what the parts share: confined reads (never a FIFO), findings, digests
 *                Finding        file, key, command: one line of the report
 *   what runs    GitConfigFile  a config as the host's git reads it (git itself parses it, from stdin)
 *                CommandSettings which config keys run a program
 *                GitPointer     .git files and commondir, byte for byte as git reads them
 *                ProtectedGitDirectories the git directories make up mounted read-only
 *                EnvrcAudit, Envrc  what an .envrc loads and puts on PATH
 *                VsCodeTasks    tasks that run when a folder opens
 *   what hides   HiddenChanges  index flags, replace refs, info/ files, shallow, alternates
 *                GitIndex, Ewah the index as git reads it (versions 2 to 4, split index bitmaps)
 *                UnseenEdits    a file changed behind an index entry that records its new stat
 *                ForgedObjects  objects, packs, multi-pack-index, commit-graph not what their names say
 *                CommitGraphFile what the audit reads of a commit-graph itself
 *   running git  HostGit        the host's git with a deadline and bounded output and memory
 *                SealedGit      git on files the audit holds open, in a repository of its own
 *                KeptResults    results kept by file identity across rounds and audits
 * </pre>
 *
 * The reasons, limits and what is not detected are in {@code docs/security.md}.
 */
package dev.sandboxmcp.hostaudit;
