package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * infra/compose/protect-git.sh on a workspace with every kind of git directory: which mounts the
 * override holds (as compose reads it), what it skips, and that it is safe for any path.
 */
class ProtectGitScriptTest {

    @TempDir
    Path temp;

    record Mount(String source, String target, boolean readOnly) {
    }

    /** What the script printed the last time {@link #generate} ran it. */
    String printed;

    static void git(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("git", "-c", "init.defaultBranch=main", "-c", "user.name=t",
                "-c", "user.email=t@t", "-c", "protocol.file.allow=always"));
        command.addAll(List.of(args));
        Commands.Result result = Commands.run(command, Map.of(), dir, 60);
        assertThat(result.exitCode()).as(String.join(" ", args) + ":\n" + result.output()).isZero();
    }

    @SuppressWarnings("unchecked")
    List<Mount> generate(Path workspace, Map<String, String> env) throws Exception {
        Path output = temp.resolve("override.yaml");
        Commands.Result result = Commands.run(List.of(Repo.path("infra/compose/protect-git.sh").toString(), workspace.toString(),
                output.toString()), env, Repo.root(), 60);
        assertThat(result.exitCode()).as(result.output()).isZero();
        printed = result.output();
        Map<String, Object> yaml = new Yaml().load(Files.readString(output));
        Map<String, Object> runner = (Map<String, Object>) ((Map<String, Object>) yaml.get("services")).get("runner");
        List<Mount> mounts = new ArrayList<>();
        for (Map<String, Object> volume : (List<Map<String, Object>>) runner.get("volumes")) {
            assertThat(volume.get("type")).isEqualTo("bind");
            mounts.add(new Mount((String) volume.get("source"), (String) volume.get("target"),
                    (Boolean) volume.get("read_only")));
        }
        return mounts;
    }

    static List<String> readOnlyTargets(List<Mount> mounts) {
        return mounts.stream().filter(Mount::readOnly).map(Mount::target).sorted().toList();
    }

    @Test
    void mountsConfigHooksAndGitFilesOfEveryKindOfRepository() throws Exception {
        Path ws = Files.createDirectories(temp.resolve("ws"));
        Path lib = Files.createDirectories(ws.resolve("group/lib"));
        git(lib, "init", "-q");
        git(lib, "commit", "-q", "--allow-empty", "-m", "first");
        Files.delete(lib.resolve(".git/hooks/pre-commit.sample"));
        Path app = Files.createDirectories(ws.resolve("app"));
        git(app, "init", "-q");
        git(app, "commit", "-q", "--allow-empty", "-m", "first");
        git(app, "submodule", "add", "-q", "../group/lib", "lib");
        git(app, "worktree", "add", "-q", "../app-topic");
        Files.createDirectories(ws.resolve("app/node_modules/dep"));
        git(ws.resolve("app/node_modules/dep"), "init", "-q");
        Path tooDeep = Files.createDirectories(ws.resolve("a/b/c/d/e"));
        git(tooDeep, "init", "-q");
        Path noHooks = Files.createDirectories(ws.resolve("no-hooks"));
        git(noHooks, "init", "-q");
        deleteRecursively(noHooks.resolve(".git/hooks"));

        List<Mount> mounts = generate(ws, Map.of());
        assertThat(readOnlyTargets(mounts)).containsExactly(
                "/workspace/app-topic/.git",
                "/workspace/app/.git/commondir", "/workspace/app/.git/config", "/workspace/app/.git/config.worktree",
                "/workspace/app/.git/hooks", "/workspace/app/.git/info", "/workspace/app/.git/modules",
                "/workspace/app/.git/modules/lib/commondir", "/workspace/app/.git/modules/lib/config",
                "/workspace/app/.git/modules/lib/config.worktree", "/workspace/app/.git/modules/lib/hooks",
                "/workspace/app/.git/modules/lib/info",
                "/workspace/app/.git/modules/lib/modules", "/workspace/app/.git/modules/lib/worktrees",
                "/workspace/app/.git/worktrees", "/workspace/app/.git/worktrees/app-topic/commondir",
                "/workspace/app/.git/worktrees/app-topic/config.worktree", "/workspace/app/.git/worktrees/app-topic/gitdir",
                "/workspace/app/lib/.git",
                "/workspace/group/lib/.git/commondir", "/workspace/group/lib/.git/config",
                "/workspace/group/lib/.git/config.worktree", "/workspace/group/lib/.git/hooks", "/workspace/group/lib/.git/info",
                "/workspace/group/lib/.git/modules", "/workspace/group/lib/.git/worktrees",
                "/workspace/no-hooks/.git/commondir", "/workspace/no-hooks/.git/config",
                "/workspace/no-hooks/.git/config.worktree", "/workspace/no-hooks/.git/hooks", "/workspace/no-hooks/.git/info",
                "/workspace/no-hooks/.git/modules", "/workspace/no-hooks/.git/worktrees");
        // A main git directory's commondir names itself: git reads the same config and hooks, and no
        // command can create one that names a planted directory.
        assertThat(Files.readString(app.resolve(".git/commondir"))).isEqualTo(".\n");
        assertThat(Files.readString(ws.resolve("app/.git/worktrees/app-topic/commondir"))).isEqualTo("../..\n");
        // The host's git works as before in each, placeholders and all.
        for (Path repo : List.of(app, ws.resolve("app-topic"), lib, ws.resolve("app/lib"), noHooks)) {
            git(repo, "status", "--short");
            git(repo, "worktree", "list");
        }
        git(app, "submodule", "status");
        git(app, "worktree", "add", "-q", "../app-second");
        git(ws.resolve("app-second"), "commit", "-q", "--allow-empty", "-m", "in a worktree");
        // A missing hooks directory is created (empty) so that it can be mounted and cannot be created from inside.
        assertThat(noHooks.resolve(".git/hooks")).isEmptyDirectory();
        // Every directory on the way is pinned (a mount point cannot be renamed), read-write.
        assertThat(mounts.stream().filter(m -> !m.readOnly()).map(Mount::target)).contains("/workspace/group",
                "/workspace/group/lib", "/workspace/group/lib/.git", "/workspace/app", "/workspace/app/.git/modules/lib",
                "/workspace/app-topic");
        for (Mount mount : mounts) {
            assertThat(mount.source()).isEqualTo(ws.toRealPath() + mount.target().substring("/workspace".length()));
        }

        List<Mount> deeper = generate(ws, Map.of("SANDBOX_PROTECT_GIT_DEPTH", "5"));
        assertThat(readOnlyTargets(deeper)).contains("/workspace/a/b/c/d/e/.git/config")
                .doesNotContain("/workspace/app/node_modules/dep/.git/config");
        assertThat(generate(ws, Map.of("SANDBOX_PROTECT_GIT", "off"))).isEmpty();
    }

    @Test
    void includesHooksPathAndMissingGitDirectoriesAreHeldReadOnly() throws Exception {
        Path ws = Files.createDirectories(temp.resolve("ws"));
        Path repo = Files.createDirectories(ws.resolve("repo"));
        git(repo, "init", "-q");
        git(repo, "config", "include.path", "../../shared/present.inc"); // relative to .git/config
        git(repo, "config", "includeIf.onbranch:main.path", "missing.inc");
        git(repo, "config", "core.hooksPath", ".husky");
        Files.createDirectories(ws.resolve("shared"));
        Files.writeString(ws.resolve("shared/present.inc"), "[include]\n\tpath = nested.inc\n");
        Path stale = Files.createDirectories(ws.resolve("stale"));
        // A .git file whose git directory is gone (a deleted worktree's): a command could create it.
        Files.writeString(stale.resolve(".git"), "gitdir: ../repo/.git/worktrees/gone\n");

        List<String> ro = readOnlyTargets(generate(ws, Map.of()));
        // What make audit --protected reads: the repository's git directory, protected.
        assertThat(Files.readAllLines(temp.resolve("override.yaml")))
                .contains("# protected git directory: " + repo.toRealPath().resolve(".git"));
        assertThat(ro).contains("/workspace/shared/present.inc", "/workspace/shared/nested.inc",
                "/workspace/repo/.git/missing.inc", "/workspace/repo/.husky", "/workspace/stale/.git",
                "/workspace/repo/.git/worktrees/gone");
        // What was missing is created empty on the host, where the mounts can hold it.
        assertThat(ws.resolve("shared/nested.inc")).isEmptyFile();
        assertThat(repo.resolve(".git/missing.inc")).isEmptyFile();
        assertThat(repo.resolve(".husky")).isEmptyDirectory();
        assertThat(repo.resolve(".git/worktrees/gone")).isEmptyDirectory();
        git(repo, "status", "--short");
    }

    @Test
    void everyDirectoryItCreatesIsTheWorkspaceOwnersAlsoWhenRunAsRoot() throws Exception {
        assumeTrue(Commands.run(List.of("id", "-u"), 10).output().strip().equals("0"),
                "SKIPPED: needs root, as make up may run, to see whose the directories it makes are");
        Path ws = Files.createDirectories(temp.resolve("ws"));
        Path repo = Files.createDirectories(ws.resolve("repo"));
        git(repo, "init", "-q");
        git(repo, "config", "include.path", "../../shared/a/b/inc.cfg"); // three directories to make
        Commands.run(List.of("chown", "4242:4242", ws.toString()), 10);
        generate(ws, Map.of());
        for (String made : List.of("shared", "shared/a", "shared/a/b", "shared/a/b/inc.cfg")) {
            assertThat(Files.getAttribute(ws.resolve(made), "unix:uid")).as(made).isEqualTo(4242);
        }
    }

    /**
     * Your config's includes read breadth first, each file once    /**
     * Your config's includes read breadth first, each file once: a long chain of includes (each
     * behind a condition that never holds) reaching a file at git's depth, where its own include
     * would be dropped, does not hide the hooks path a direct include of the same file reaches.
     */
    @Test
    void aLongChainOfIncludesHidesNoHooksPath() throws Exception {
        Path home = Files.createDirectories(temp.resolve("home"));
        Path ws = Files.createDirectories(home.resolve("ws"));
        Path chain = Files.createDirectories(ws.resolve("dot"));
        for (int i = 1; i <= 9; i++) {
            Files.writeString(chain.resolve("a" + i), "[includeIf \"onbranch:never\"]\n\tpath = "
                    + (i < 9 ? "a" + (i + 1) : "../../.gitconfig-work") + "\n");
        }
        Files.writeString(home.resolve(".gitconfig-work"), "[include]\n\tpath = .gitconfig-hooks\n");
        Files.writeString(home.resolve(".gitconfig-hooks"), "[core]\n\thooksPath = .githooks\n");
        Files.writeString(home.resolve(".gitconfig"), "[include]\n\tpath = ws/dot/a1\n\tpath = .gitconfig-work\n");
        git(Files.createDirectories(ws.resolve("a")), "init", "-q");
        List<String> ro = readOnlyTargets(generate(ws, Map.of("HOME", home.toString(), "XDG_CONFIG_HOME",
                home.resolve(".config").toString())));
        assertThat(ro).contains("/workspace/a/.githooks", "/workspace/dot/a1", "/workspace/dot/a9");
    }

    /**
     * Paths with control characters, shaped as lines of the override: a hooks path with newlines
     * as a mount line (the override stays one YAML line per mount: it parses, in generate), and
     * a repository whose path holds a carriage return as a second line of the protected list (a
     * reader splitting lines at CR too would have taken /evil for a protected repository). Each
     * is named, neither is mounted or listed.
     */
    @Test
    void pathsWithControlCharactersAreNeitherMountedNorListed() throws Exception {
        Path ws = Files.createDirectories(temp.resolve("ws"));
        Path repo = Files.createDirectories(ws.resolve("repo"));
        git(repo, "init", "-q");
        git(repo, "config", "core.hooksPath", "x\n      - {type: bind, source: /, target: /host, read_only: false}\ny");
        git(Files.createDirectories(ws.resolve("x\r# protected git directory: /evil")), "init", "-q");
        List<Mount> mounts = generate(ws, Map.of());
        assertThat(mounts).noneMatch(mount -> mount.target().equals("/host") || mount.source().equals("/")
                || mount.source().contains("evil"));
        assertThat(new String(Files.readAllBytes(temp.resolve("override.yaml")), java.nio.charset.StandardCharsets.UTF_8))
                .doesNotContain("/evil").doesNotContain("\r");
        assertThat(printed.lines().filter(line -> line.contains("a control character in its path"))).hasSize(2);
    }

    /**
     * A config hard-linked to a name in the work tree (made before make up, in a repository
     * created since the last one): the mount holds the config's name, not the other one, so
     * the script says so.
     */
    @Test
    void aHardLinkedConfigIsNamedInTheNotes() throws Exception {
        Path ws = Files.createDirectories(temp.resolve("ws"));
        Path repo = Files.createDirectories(ws.resolve("repo"));
        git(repo, "init", "-q");
        Files.createLink(repo.resolve("notes"), repo.resolve(".git/config"));
        assertThat(readOnlyTargets(generate(ws, Map.of()))).contains("/workspace/repo/.git/config");
        assertThat(printed).contains("hard-linked elsewhere, writable through the other name: " + repo.toRealPath()
                .resolve(".git/config"));
    }

    /**
     * The host user's ~/.gitconfig with a relative include (taken from ~, here into the workspace)
     * and a relative core.hooksPath (taken from the top of every work tree): before, relative
     * values in the global config were skipped, and a command could write the included config
     * (a core.fsmonitor runs on every git status) or every repository's hooks.
     */
    @Test
    void relativeIncludesAndHooksPathOfTheUsersOwnConfigAreHeldReadOnly() throws Exception {
        Path home = Files.createDirectories(temp.resolve("home"));
        Path ws = Files.createDirectories(home.resolve("ws"));
        Files.writeString(home.resolve(".gitconfig"), "[include]\n\tpath = ws/dotfiles/gitconfig\n[core]\n\thooksPath = .githooks\n"
                + "[includeIf \"gitdir:~/ws/work/\"]\n\tpath = work.inc\n");
        // Outside the workspace, behind a condition: read, not mounted, and its hooks path held in every repository.
        Files.writeString(home.resolve("work.inc"), "[core]\n\thooksPath = .workhooks\n");
        Files.createDirectories(ws.resolve("dotfiles"));
        Files.writeString(ws.resolve("dotfiles/gitconfig"), "[include]\n\tpath = more.inc\n[core]\n\thooksPath = .dothooks\n");
        for (String name : List.of("a", "deep/b", "sub")) {
            git(Files.createDirectories(ws.resolve(name)), "init", "-q");
        }
        git(ws.resolve("sub"), "commit", "-q", "--allow-empty", "-m", "first");
        git(ws.resolve("a"), "submodule", "add", "-q", "../sub", "zsub");
        Map<String, String> env = Map.of("HOME", home.toString(), "XDG_CONFIG_HOME", home.resolve(".config").toString());

        List<String> ro = readOnlyTargets(generate(ws, env));
        assertThat(ro).contains("/workspace/dotfiles/gitconfig", "/workspace/dotfiles/more.inc", "/workspace/a/.githooks",
                "/workspace/deep/b/.githooks", "/workspace/a/.workhooks", "/workspace/a/.dothooks",
                "/workspace/a/zsub/.githooks");
        assertThat(ro).noneMatch(target -> target.startsWith("/workspace/a/.git/modules/zsub/.") && target.endsWith("hooks"))
                .doesNotContain("/workspace/.dothooks");
        assertThat(ws.resolve("a/.githooks")).isEmptyDirectory();
        assertThat(ws.resolve("dotfiles/more.inc")).isEmptyFile();
    }

    @Test
    void pathsWithQuotesDollarsAndSpacesSurviveComposeInterpolation() throws Exception {
        Path ws = Files.createDirectories(temp.resolve("w s"));
        Path odd = Files.createDirectories(ws.resolve("we$ird \"name\" \\ x"));
        git(odd, "init", "-q");
        List<Mount> mounts = generate(ws, Map.of());
        // Compose turns $$ into $ when it reads the file.
        assertThat(readOnlyTargets(mounts)).contains("/workspace/we$$ird \"name\" \\ x/.git/config");
        Commands.Result config = Commands.run(new ArrayList<>(List.of(Commands.compose().toArray(String[]::new))) {
            {
                addAll(List.of("-p", "protect-git-test", "-f", Repo.path("infra/compose/compose.yaml").toString(),
                        "-f", temp.resolve("override.yaml").toString(), "config"));
            }
        }, Map.of("SANDBOX_UID", "1000", "SANDBOX_GID", "1000", "SANDBOX_WORKSPACE", ws.toString(),
                "MCP_AUTH_TOKEN_SHA256", "0".repeat(64)), Repo.root(), 60);
        assertThat(config.exitCode()).as(config.output()).isZero();
    }

    static void deleteRecursively(Path dir) throws Exception {
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
