package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Workspace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * write_file and edit_file against the files the host runs by itself, reached by every route a
 * path can take: directly, through {@code ..}, through links, in another case, in a separate git
 * directory. Each is refused with a reason and a next step, and the file on disk is unchanged.
 */
class ProtectedFilesTest {

    static final String CONFIG = "[core]\n\trepositoryformatversion = 0\n";

    @TempDir
    Path root;
    Workspace workspace;
    WriteFileTool write;
    EditFileTool edit;

    @BeforeEach
    void setUp() throws Exception {
        for (String gitDir : new String[] {"repo/.git", "repo/.git/modules/sub", "separate.git"}) {
            Files.createDirectories(root.resolve(gitDir).resolve("hooks"));
            Files.createDirectories(root.resolve(gitDir).resolve("objects"));
            Files.writeString(root.resolve(gitDir).resolve("HEAD"), "ref: refs/heads/main\n");
            Files.writeString(root.resolve(gitDir).resolve("config"), CONFIG);
        }
        Files.createDirectories(root.resolve("repo/.git/worktrees/w"));
        Files.writeString(root.resolve("repo/.git/worktrees/w/HEAD"), "ref: refs/heads/w\n");
        Files.writeString(root.resolve("repo/.git/worktrees/w/commondir"), "../..\n");
        Files.writeString(root.resolve("repo/.git/hooks/pre-commit.sample"), "#!/bin/sh\n");
        Files.writeString(root.resolve("repo/.envrc"), "export A=1\n");
        Files.createDirectories(root.resolve("repo/.vscode"));
        Files.writeString(root.resolve("repo/.vscode/tasks.json"), "{}\n");
        Files.createDirectories(root.resolve("repo/src"));
        Files.createSymbolicLink(root.resolve("repo/src/g"), Path.of("../.git"));
        Files.createSymbolicLink(root.resolve("repo/src/cfg"), Path.of("../.git/config"));
        Files.createSymbolicLink(root.resolve("repo/src/hook"), Path.of("../.git/hooks/post-checkout"));
        // A directory git takes for a repository: its objects a link to another's (git follows it).
        Files.createDirectories(root.resolve("posing/hooks"));
        Files.writeString(root.resolve("posing/HEAD"), "ref: refs/heads/main\n");
        Files.createSymbolicLink(root.resolve("posing/objects"), Path.of("../repo/.git/objects"));
        // A worktree's .git file points at its git directory, which is not named .git.
        Files.createDirectories(root.resolve("wt"));
        Files.writeString(root.resolve("wt/.git"), "gitdir: ../separate.git\n");
        workspace = Workspace.open(root);
        write = new WriteFileTool(workspace, Limits.defaults());
        edit = new EditFileTool(workspace, Limits.defaults());
    }

    @AfterEach
    void tearDown() throws Exception {
        workspace.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"repo/.git/config", "repo/src/../.git/config", "repo/./.git//config", "repo/src/g/config",
        "repo/src/cfg", "repo/.git/modules/sub/config", "separate.git/config", "repo/.git/worktrees/w/config.worktree",
        "repo/.git/hooks/pre-commit", "repo/src/g/hooks/pre-commit", "repo/src/hook", "repo/.git/hooks/pre-commit.sample",
        "repo/.git/modules/sub/hooks/post-merge", "separate.git/hooks/pre-push", "repo/.envrc", "deep/er/.envrc",
        "repo/.vscode/tasks.json", "wt/.git", "newrepo/.git", "repo/.git/worktrees/w/commondir",
        "posing/config", "posing/hooks/pre-commit"})
    void writeAndAppendAreRefusedAndNothingChanges(String path) throws Exception {
        Files.createDirectories(root.resolve("deep/er"));
        Files.createDirectories(root.resolve("newrepo"));
        Map<Path, String> before = snapshot();
        for (boolean append : new boolean[] {false, true}) {
            ToolResponse response = ToolCalls.call(write, Map.of("path", path, "content",
                    "[core]\n\tfsmonitor = touch /tmp/pwned\n",
                    "append", append));
            assertThat(response.error()).as(path).isTrue();
            assertThat(response.text()).as(path).startsWith("refused: ").contains("nothing was written")
                    .contains("ask them to make it themselves").contains("outside this sandbox");
        }
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void theRefusalNamesWhatTheFileIsAndWhereALinkLed() throws Exception {
        ToolResponse viaLink = ToolCalls.call(write, Map.of("path", "repo/src/cfg", "content", "x"));
        assertThat(viaLink.text()).contains("'repo/src/cfg' (that is 'repo/.git/config')")
                .contains("git repository's configuration");
        ToolResponse hook = ToolCalls.call(write, Map.of("path", "repo/.git/hooks/pre-commit", "content", "x"));
        assertThat(hook.text()).contains("'repo/.git/hooks/pre-commit' is in a git repository's hooks");
        ToolResponse envrc = ToolCalls.call(write, Map.of("path", "repo/.envrc", "content", "x"));
        assertThat(envrc.text()).contains("direnv");
        ToolResponse tasks = ToolCalls.call(write, Map.of("path", "repo/.vscode/tasks.json", "content", "x"));
        assertThat(tasks.text()).contains("VS Code");
    }

    @Test
    void editIsRefusedTooAndReadingStaysAllowed() throws Exception {
        ToolResponse response = ToolCalls.call(edit, Map.of("path", "repo/.git/config", "old_text",
                "repositoryformatversion = 0", "new_text", "repositoryformatversion = 0\n\tfsmonitor = touch /tmp/pwned"));
        assertThat(response.error()).isTrue();
        assertThat(response.text()).startsWith("refused: ");
        assertThat(Files.readString(root.resolve("repo/.git/config"))).isEqualTo(CONFIG);
        ToolResponse read = ToolCalls.call(new ReadFileTool(workspace, Limits.defaults()), Map.of("path",
                "repo/.git/config"));
        assertThat(read.error()).isFalse();
        assertThat(read.text()).contains("repositoryformatversion");
    }

    @ParameterizedTest
    @ValueSource(strings = {"repo/src/config", "config", "repo/hooks/pre-commit", "repo/.vscode/settings.json",
        "repo/.envrc.example", "repo/.git/COMMIT_EDITMSG", "repo/src/tasks.json", "wt/config"})
    void filesThatOnlyShareANameAreWritten(String path) throws Exception {
        Files.createDirectories(root.resolve(path).getParent());
        ToolResponse response = ToolCalls.call(write, Map.of("path", path, "content", "ok\n"));
        assertThat(response.error()).as(response.text()).isFalse();
        assertThat(Files.readString(root.resolve(path))).isEqualTo("ok\n");
    }

    private Map<Path, String> snapshot() throws Exception {
        Map<Path, String> files = new java.util.TreeMap<>();
        try (var walk = Files.walk(root)) {
            for (Path p : walk.filter(p -> Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)).toList()) {
                files.put(root.relativize(p), Files.readString(p));
            }
        }
        return files;
    }
}
