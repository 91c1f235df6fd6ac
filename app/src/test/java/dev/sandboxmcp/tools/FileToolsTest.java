package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Workspace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** read_file paging, write_file, edit_file and list_directory, called the way the dispatcher calls them. */
class FileToolsTest {

    static final int MIB = 1024 * 1024;

    @TempDir
    Path temp;
    Path root;
    Workspace workspace;
    ReadFileTool read;
    WriteFileTool write;
    EditFileTool edit;
    ListDirectoryTool list;

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectory(temp.resolve("root"));
        Files.createDirectory(temp.resolve("outside"));
        Files.writeString(temp.resolve("outside/secret.txt"), "secret");
        workspace = Workspace.open(root);
        read = new ReadFileTool(workspace, Limits.defaults());
        write = new WriteFileTool(workspace, Limits.defaults());
        edit = new EditFileTool(workspace, Limits.defaults());
        list = new ListDirectoryTool(workspace, Limits.defaults());
    }

    @AfterEach
    void tearDown() throws Exception {
        workspace.close();
    }

    static ToolResponse call(SandboxTool tool, Map<String, Object> arguments) {
        return ToolCalls.call(tool, arguments);
    }

    @Test
    void readPagesThroughLinesWithCountsAndWhetherMoreFollows() throws Exception {
        Files.writeString(root.resolve("five.txt"), "l1\nl2\nl3\nl4\nl5\n");
        ToolResponse page = call(read, Map.of("path", "five.txt", "offset", 2, "limit", 2));
        assertThat(page.error()).isFalse();
        assertThat(page.structured()).containsEntry("content", "l2\nl3\n").containsEntry("first_line", 2L)
                .containsEntry("lines", 2L).containsEntry("total_lines", 5L).containsEntry("has_more", true);
        assertThat(page.text()).contains("more follows: call again with offset=4");

        ToolResponse last = call(read, Map.of("path", "five.txt", "offset", 5, "limit", 10));
        assertThat(last.structured()).containsEntry("content", "l5\n").containsEntry("has_more", false);

        ToolResponse past = call(read, Map.of("path", "five.txt", "offset", 6));
        assertThat(past.error()).isTrue();
        assertThat(past.text()).contains("past the end").contains("5 lines");

        Files.writeString(root.resolve("no-newline.txt"), "a\nb");
        assertThat(call(read, Map.of("path", "no-newline.txt", "offset", 2)).structured())
                .containsEntry("content", "b").containsEntry("total_lines", 2L);
        assertThat(call(read, Map.of("path", "no-newline.txt")).structured()).containsEntry("total_lines", 2L)
                .containsEntry("has_more", false);
    }

    @Test
    void largeFileComesInPagesThatFitAContext() throws Exception {
        String line = "x".repeat(99) + "\n";
        Files.writeString(root.resolve("big.txt"), line.repeat(30_000)); // 3 MB
        ToolResponse whole = call(read, Map.of("path", "big.txt"));
        int pageLines = Limits.defaults().pageBytes() / 101; // a line as JSON: its newline is two bytes
        assertThat(whole.structured()).containsEntry("lines", (long) pageLines).containsEntry("total_lines", 30_000L)
                .containsEntry("has_more", true);
        assertThat(whole.text()).contains("call again with offset=" + (pageLines + 1));
        Files.writeString(root.resolve("many.txt"), "a\n".repeat(5_000));
        assertThat(call(read, Map.of("path", "many.txt")).structured())
                .containsEntry("lines", (long) Limits.defaults().pageLines());

        ToolResponse first = call(read, Map.of("path", "big.txt", "offset", 1, "limit", 10));
        assertThat(first.structured()).containsEntry("lines", 10L).containsEntry("total_lines", 30_000L)
                .containsEntry("has_more", true).containsEntry("content", line.repeat(10));

        ToolResponse capped = call(read, Map.of("path", "big.txt", "offset", 100, "limit", 100_000));
        long bytes = (Long) capped.structured().get("bytes");
        long asJson = bytes / 100 * 101;
        assertThat(asJson).isLessThanOrEqualTo(MIB).isGreaterThan(MIB - 101);
        assertThat(capped.structured()).containsEntry("has_more", true);
        assertThat(capped.text()).contains("call again with offset=" + (100 + bytes / 100));
    }

    @Test
    void pagesRefuseBinaryAndInvalidUtf8() throws Exception {
        Files.write(root.resolve("bad.txt"), new byte[] {'o', 'k', '\n', (byte) 0xff, '\n'});
        Files.write(root.resolve("nul.bin"), new byte[] {'a', 0, 'b'});
        assertThat(call(read, Map.of("path", "bad.txt", "offset", 1)).text()).contains("not valid UTF-8");
        assertThat(call(read, Map.of("path", "nul.bin", "offset", 1)).text()).contains("NUL");
        assertThat(call(read, Map.of("path", "bad.txt")).text()).contains("not valid UTF-8");
    }

    @Test
    void pagedReadsStayInsideTheWorkspace() throws Exception {
        Files.createSymbolicLink(root.resolve("out"), Path.of("../outside/secret.txt"));
        ToolResponse response = call(read, Map.of("path", "out", "offset", 1));
        assertThat(response.error()).isTrue();
        assertThat(response.text()).contains("outside the workspace").doesNotContain("secret\n");
        assertThat(call(read, Map.of("path", "../outside/secret.txt", "limit", 1)).error()).isTrue();
    }

    @Test
    void writeIntoAMissingDirectorySaysWhichAndHowToCreateIt() throws Exception {
        ToolResponse missing = call(write, Map.of("path", "no/such/dir/file.txt", "content", "x"));
        assertThat(missing.error()).isTrue();
        assertThat(missing.text()).contains("'no'").contains("mkdir");
        assertThat(root.resolve("no")).doesNotExist();
    }

    @Test
    void editOfAFileOverTheLimitSaysHowBigAndHowToReadPartOfIt() throws Exception {
        Path file = Files.write(root.resolve("huge.txt"), new byte[MIB + 1]);
        ToolResponse refused = call(edit, Map.of("path", "huge.txt", "old_text", "a", "new_text", "b"));
        assertThat(refused.error()).isTrue();
        assertThat(refused.text()).isEqualTo("'huge.txt' is " + (MIB + 1) + " bytes, over the limit of " + MIB
                + " bytes; read part of it with run_command instead (head -c, tail, sed -n)");
        assertThat(Files.size(file)).isEqualTo(MIB + 1);
    }

    @Test
    void editReplacesExactTextAndReturnsAUnifiedDiff() throws Exception {
        Path file = root.resolve("App.java");
        Files.writeString(file, "class App {\n    int x = 1;\n}\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        ToolResponse done = call(edit, Map.of("path", "App.java", "old_text", "int x = 1;", "new_text", "int x = 2;"));
        assertThat(done.error()).as(done.text()).isFalse();
        assertThat(file).hasContent("class App {\n    int x = 2;\n}");
        assertThat((String) done.structured().get("diff")).contains("--- a/App.java").contains("+++ b/App.java")
                .contains("-    int x = 1;").contains("+    int x = 2;").contains("@@ -1,3 +1,3 @@");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r-----");
    }

    @Test
    void editThatWouldGrowPastTheLimitIsRefusedBeforeItIsBuilt() throws Exception {
        // A million matches times a 1,000-character new_text: a gigabyte the server must never
        // try to allocate (it did, and died of OutOfMemoryError).
        Path file = Files.writeString(root.resolve("aaa.txt"), "a".repeat(1_048_476));
        ToolResponse bomb = call(edit, Map.of("path", "aaa.txt", "old_text", "a", "new_text", "b".repeat(1_000),
                "expected_replacements", 1_048_476));
        assertThat(bomb.error()).isTrue();
        assertThat(bomb.text()).contains("would be 1048476000 bytes, over the limit of 1048576").contains("nothing was changed");
        assertThat(Files.size(file)).isEqualTo(1_048_476);
    }

    @Test
    void editWithAnUnpairedSurrogateIsRefusedNotWrittenAsQuestionMarks() throws Exception {
        Path file = Files.writeString(root.resolve("u.txt"), "emoji: X");
        ToolResponse lone = call(edit, Map.of("path", "u.txt", "old_text", "X", "new_text", "\uD83D"));
        assertThat(lone.error()).isTrue();
        assertThat(lone.text()).contains("not valid Unicode").contains("nothing was changed");
        assertThat(file).hasContent("emoji: X");
        ToolResponse pair = call(edit, Map.of("path", "u.txt", "old_text", "X", "new_text", "\uD83D\uDE00"));
        assertThat(pair.error()).isFalse();
        assertThat(file).hasContent("emoji: \uD83D\uDE00");
    }

    @Test
    void editChangesNothingUnlessTheMatchCountIsTheExpectedOne() throws Exception {
        Path file = root.resolve("twice.txt");
        Files.writeString(file, "a b a");
        ToolResponse none = call(edit, Map.of("path", "twice.txt", "old_text", "zzz", "new_text", "y"));
        assertThat(none.error()).isTrue();
        assertThat(none.text()).contains("not found");
        ToolResponse ambiguous = call(edit, Map.of("path", "twice.txt", "old_text", "a", "new_text", "y"));
        assertThat(ambiguous.error()).isTrue();
        assertThat(ambiguous.text()).contains("matches 2 times").contains("expected 1").contains("expected_replacements=2");
        assertThat(file).hasContent("a b a");
        ToolResponse both = call(edit, Map.of("path", "twice.txt", "old_text", "a", "new_text", "y", "expected_replacements", 2));
        assertThat(both.error()).isFalse();
        assertThat(both.structured()).containsEntry("replacements", 2);
        assertThat(file).hasContent("y b y");
    }

    @Test
    void editCannotLeaveTheWorkspace() throws Exception {
        Files.createSymbolicLink(root.resolve("link"), Path.of("../outside/secret.txt"));
        assertThat(call(edit, Map.of("path", "link", "old_text", "secret", "new_text", "owned")).error()).isTrue();
        assertThat(call(edit, Map.of("path", "../outside/secret.txt", "old_text", "secret", "new_text", "owned")).error())
                .isTrue();
        assertThat(temp.resolve("outside/secret.txt")).hasContent("secret");
    }

    @Test
    void listShowsKindsSizesAndLinksWithoutFollowingThem() throws Exception {
        Files.createDirectories(root.resolve("src/main"));
        Files.writeString(root.resolve("src/main/App.java"), "12345");
        Files.writeString(root.resolve("README.md"), "hi");
        Files.writeString(root.resolve(".env"), "hidden");
        Files.createSymbolicLink(root.resolve("escape"), Path.of("../outside"));
        ToolResponse shallow = call(list, Map.of());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> entries = (List<Map<String, Object>>) shallow.structured().get("entries");
        assertThat(entries).extracting(e -> e.get("path")).containsExactly("README.md", "escape", "src");
        assertThat(entries.get(0)).containsEntry("kind", "file").containsEntry("size", 2L);
        assertThat(entries.get(1)).containsEntry("kind", "symlink").containsEntry("target", "../outside");
        assertThat(entries.get(2)).containsEntry("kind", "directory");

        ToolResponse deep = call(list, Map.of("path", ".", "depth", 3, "include_hidden", true));
        assertThat(deep.text()).contains(".env").contains("src/main/App.java  (5 bytes)").contains("escape -> ../outside")
                .doesNotContain("secret");
        assertThat(call(list, Map.of("path", "escape")).error()).isTrue();
        assertThat(call(list, Map.of("path", "..")).error()).isTrue();
        assertThat(call(list, Map.of("path", "README.md")).text()).contains("use read_file");
    }

    @Test
    void listCapHoldsAtItsEdge() throws Exception {
        for (int i = 0; i <= Limits.defaults().listEntries(); i++) {
            Files.writeString(root.resolve(String.format("f%05d", i)), "");
        }
        ToolResponse over = call(list, Map.of());
        assertThat(over.structured()).containsEntry("truncated", true);
        assertThat((List<?>) over.structured().get("entries")).hasSize(Limits.defaults().listEntries());
        assertThat(over.text()).contains("cut at " + Limits.defaults().listEntries());
        Files.delete(root.resolve("f00000"));
        ToolResponse exact = call(list, Map.of());
        assertThat(exact.structured()).containsEntry("truncated", false);
        assertThat((List<?>) exact.structured().get("entries")).hasSize(Limits.defaults().listEntries());
    }
}
