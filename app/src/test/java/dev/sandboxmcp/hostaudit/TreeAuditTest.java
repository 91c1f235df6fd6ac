package dev.sandboxmcp.hostaudit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The audit from the attacker's side: every place a planting can hide is found, and nothing leads it outside. */
class TreeAuditTest {

    @TempDir
    Path temp;

    Path tree() throws IOException {
        return Files.createDirectories(temp.resolve("tree"));
    }

    static void git(Path dir, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("git", "-c", "init.defaultBranch=main"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(String.join(" ", command) + ":\n" + output).isZero();
    }

    static List<Finding> audit(Path tree) throws IOException {
        return TreeAudit.run(tree, "git").findings();
    }

    @Test
    void findsSettingsHooksEnvrcAndTasksInNestedRepositories() throws Exception {
        Path tree = tree();
        Path outer = Files.createDirectories(tree.resolve("outer"));
        git(outer, "init", "-q");
        git(outer, "config", "core.fsmonitor", "touch /tmp/marker");
        Path nested = Files.createDirectories(outer.resolve("vendor/deep/nested"));
        git(nested, "init", "-q");
        git(nested, "config", "alias.co", "!sh -c 'id'");
        Path hook = nested.resolve(".git/hooks/post-checkout");
        Files.writeString(hook, "#!/bin/sh\nid\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(nested.resolve(".git/hooks/pre-push"), "not executable, git ignores it\n");
        Files.writeString(outer.resolve(".envrc"), "export A=1\n");
        Files.createDirectories(outer.resolve(".vscode"));
        Files.writeString(outer.resolve(".vscode/tasks.json"), """
                {
                  // comments and trailing commas, as VS Code allows
                  "version": "2.0.0",
                  "tasks": [
                    {"label": "setup", "type": "shell", "command": "./setup.sh", "args": ["--fast"],
                     "runOptions": {"runOn": "folderOpen"},},
                    {"label": "build", "command": "make"},
                  ],
                }
                """);

        assertThat(audit(tree)).containsExactly(
                new Finding("outer/.envrc", "direnv .envrc (runs in the shell that enters the directory)",
                        "sha256 " + sha256Prefix("export A=1\n")),
                new Finding("outer/.git/config", "core.fsmonitor", "touch /tmp/marker"),
                new Finding("outer/.vscode/tasks.json", "task 'setup' runs on folder open", "./setup.sh --fast"),
                new Finding("outer/vendor/deep/nested/.git/config", "alias.co", "!sh -c 'id'"),
                new Finding("outer/vendor/deep/nested/.git/hooks/post-checkout", "hook",
                        "executable, sha256 " + sha256Prefix("#!/bin/sh\nid\n")));
    }

    @Test
    void readsConfigExactlyAsGitDoes() throws Exception {
        Path repo = Files.createDirectories(tree().resolve("repo"));
        git(repo, "init", "-q");
        // What a hand-written parser might miss: a key on the header's line, case, quotes,
        // continuation lines, comments, a subsection in quotes, CRLF line ends.
        Files.writeString(repo.resolve(".git/config"), "[core] FSMonitor = \"touch \\\"/tmp/a b\\\"\" ; a comment\r\n"
                + "[ALIAS]\n\tx = !echo \\\n  continued # another\n[diff \"My Driver\"]\n\ttextconv = cat\n"
                + "[core]\n\trepositoryformatversion = 0\n");
        assertThat(audit(repo.getParent())).containsExactly(
                new Finding("repo/.git/config", "alias.x", "!echo   continued"),
                new Finding("repo/.git/config", "core.fsmonitor", "touch \"/tmp/a b\""),
                new Finding("repo/.git/config", "diff.My Driver.textconv", "cat"));
    }

    @Test
    void followsGitFilesSubmodulesWorktreesIncludesAndHooksPathInsideTheTree() throws Exception {
        Path tree = tree();
        Path main = Files.createDirectories(tree.resolve("main"));
        git(main, "init", "-q");
        git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first");
        git(main, "worktree", "add", "-q", "../wt");
        git(main, "config", "extensions.worktreeConfig", "true");
        git(tree.resolve("wt"), "config", "--worktree", "core.pager", "less; id");
        // A submodule's git directory, under modules/.
        Path module = Files.createDirectories(main.resolve(".git/modules/lib"));
        git(module, "init", "-q", "--bare");
        git(module, "config", "filter.x.smudge", "sh -c id");
        // A separate git directory that a .git file names, not called .git.
        Path separate = Files.createDirectories(tree.resolve("elsewhere/store"));
        git(separate, "init", "-q", "--bare");
        Files.writeString(separate.resolve("config"), "[include]\n\tpath = ../shared.inc\n[core]\n\thooksPath = hookdir\n",
                java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(tree.resolve("elsewhere/shared.inc"), "[credential]\n\thelper = !sh -c id\n");
        Path work = Files.createDirectories(tree.resolve("work"));
        Files.writeString(work.resolve(".git"), "gitdir: ../elsewhere/store\n");
        Path hookdir = Files.createDirectories(work.resolve("hookdir"));
        Files.writeString(hookdir.resolve("pre-commit"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(hookdir.resolve("pre-commit"), PosixFilePermissions.fromString("rwx------"));

        // A config that is a link to a file in the tree, and a hooksPath given as an absolute path into it.
        Path linked = Files.createDirectories(tree.resolve("linked"));
        git(linked, "init", "-q");
        Files.writeString(tree.resolve("linked/real.config"), "[core]\n\thooksPath = " + hookdir.toRealPath() + "\n");
        Files.delete(linked.resolve(".git/config"));
        Files.createSymbolicLink(linked.resolve(".git/config"), Path.of("../real.config"));

        List<Finding> findings = audit(tree);
        assertThat(findings).contains(
                new Finding("linked/.git/config", "symbolic link", "../real.config"),
                new Finding("linked/real.config", "core.hookspath", hookdir.toRealPath().toString()),
                new Finding("main/.git/worktrees/wt/config.worktree", "core.pager", "less; id"),
                new Finding("main/.git/modules/lib/config", "filter.x.smudge", "sh -c id"),
                new Finding("elsewhere/store/config", "include.path", "../shared.inc"),
                new Finding("elsewhere/shared.inc", "credential.helper", "!sh -c id"),
                new Finding("elsewhere/store/config", "core.hookspath", "hookdir"),
                new Finding("work/hookdir/pre-commit", "hook (core.hooksPath)", "executable, sha256 "
                        + sha256Prefix("#!/bin/sh\n")));
    }

    @Test
    void neverFollowsALinkOutOfTheTreeAndSaysWhatItCouldNotAudit() throws Exception {
        Path outside = Files.createDirectories(temp.resolve("outside/repo"));
        git(outside, "init", "-q");
        git(outside, "config", "core.fsmonitor", "outside-must-not-be-read");
        Files.writeString(temp.resolve("outside/.envrc"), "outside\n");
        Path tree = tree();
        Files.createSymbolicLink(tree.resolve("linked-dir"), temp.resolve("outside"));
        Files.createSymbolicLink(tree.resolve("relative-link"), Path.of("../outside"));
        Path linked = Files.createDirectories(tree.resolve("linked-repo"));
        Files.createSymbolicLink(linked.resolve(".git"), outside.resolve(".git"));
        Path pointer = Files.createDirectories(tree.resolve("pointer"));
        Files.writeString(pointer.resolve(".git"), "gitdir: ../../outside/repo/.git\n");
        Files.createSymbolicLink(tree.resolve(".envrc"), Path.of("../outside/.envrc"));

        List<Finding> findings = audit(tree);
        assertThat(findings).noneMatch(f -> f.command().contains("outside-must-not-be-read"));
        assertThat(findings).containsExactly(
                new Finding(".envrc", "direnv .envrc (runs in the shell that enters the directory)",
                        "symbolic link to ../outside/.envrc"),
                new Finding("linked-repo/.git", "symbolic link", outside.resolve(".git").toRealPath()
                        + " (outside the audited tree: not audited)"),
                new Finding("pointer/.git", "gitdir", outside.resolve(".git").toRealPath()
                        + " (outside the audited tree: not audited)"));
    }

    @Test
    void anUnreadableDirectoryIsAFindingNotASilentGap() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.isReadable(Path.of("/root")) && isRoot(),
                "runs as root, who reads a mode-000 directory anyway: this case cannot be set up");
        Path hidden = Files.createDirectories(tree().resolve("hidden"));
        Files.setPosixFilePermissions(hidden, PosixFilePermissions.fromString("---------"));
        try {
            assertThat(audit(hidden.getParent())).extracting(Finding::file, Finding::key).containsExactly(
                    org.assertj.core.groups.Tuple.tuple("hidden", "(not audited)"));
        } finally {
            Files.setPosixFilePermissions(hidden, PosixFilePermissions.fromString("rwx------"));
        }
    }

    static boolean isRoot() throws IOException {
        return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    }

    @Test
    void aConfigGitRefusesIsReportedWithGitsReason() throws Exception {
        Path repo = Files.createDirectories(tree().resolve("repo"));
        git(repo, "init", "-q");
        Files.writeString(repo.resolve(".git/config"), "[core\nfsmonitor = x\n");
        assertThat(audit(repo.getParent())).singleElement().satisfies(finding -> {
            assertThat(finding.key()).isEqualTo("(git cannot read it)");
            assertThat(finding.command()).contains("bad config line 1");
        });
    }

    @Test
    void aHundredThousandFilesInAFewSeconds() throws Exception {
        Path tree = tree();
        for (int d = 0; d < 1000; d++) {
            Path dir = Files.createDirectories(tree.resolve("pkg" + d / 100).resolve("dir" + d));
            for (int f = 0; f < 100; f++) {
                Files.createFile(dir.resolve("f" + f + ".txt"));
            }
        }
        Path repo = Files.createDirectories(tree.resolve("pkg5/dir512/repo"));
        git(repo, "init", "-q");
        git(repo, "config", "core.sshCommand", "ssh -o ProxyCommand=id");
        audit(tree); // warm the page cache and the JIT, as a second audit on the same disk would
        long started = System.nanoTime();
        TreeAudit.Result result = TreeAudit.run(tree, "git");
        long millis = (System.nanoTime() - started) / 1_000_000;
        System.out.println("audit of " + result.entries() + " entries: " + millis + " ms");
        assertThat(result.entries()).isGreaterThan(100_000);
        assertThat(result.findings()).containsExactly(
                new Finding("pkg5/dir512/repo/.git/config", "core.sshcommand", "ssh -o ProxyCommand=id"));
        assertThat(millis).isLessThan(5_000);
    }

    static String sha256Prefix(String content) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(content.getBytes(java.nio.charset.StandardCharsets.UTF_8))).substring(0, 16);
    }
}
