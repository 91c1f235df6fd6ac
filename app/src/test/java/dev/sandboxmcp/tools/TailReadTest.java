package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** read_file with tail: the last lines of a file, read from its end. */
class TailReadTest {

    static final int PAGE = Limits.defaults().pageBytes();

    @TempDir
    Path root;
    Workspace workspace;
    ReadFileTool read;

    @BeforeEach
    void setUp() throws IOException {
        workspace = Workspace.open(root);
        read = new ReadFileTool(workspace, Limits.defaults());
    }

    @AfterEach
    void tearDown() throws IOException {
        workspace.close();
    }

    ToolResponse tail(String path, long lines) throws ToolInputException {
        return read.call(new ToolArguments(Map.of("path", path, "tail", lines)), Progress.NONE);
    }

    @Test
    void lastLinesWithAndWithoutAFinalNewline() throws Exception {
        Files.writeString(root.resolve("log.txt"), "one\ntwo\nthree\nfour\n");
        assertThat(tail("log.txt", 2).structured()).containsEntry("content", "three\nfour\n").containsEntry("lines", 2L)
                .containsEntry("has_more", true).containsEntry("byte_offset", 8L).containsEntry("total_lines", null);
        Files.writeString(root.resolve("open.txt"), "one\ntwo\nthree");
        assertThat(tail("open.txt", 1).structured()).containsEntry("content", "three").containsEntry("lines", 1L);
        assertThat(tail("open.txt", 10).structured()).containsEntry("content", "one\ntwo\nthree").containsEntry("lines", 3L)
                .containsEntry("has_more", false).containsEntry("byte_offset", 0L);
        Files.writeString(root.resolve("blank.txt"), "\n\n\n");
        assertThat(tail("blank.txt", 2).structured()).containsEntry("content", "\n\n").containsEntry("lines", 2L);
        Files.writeString(root.resolve("empty.txt"), "");
        assertThat(tail("empty.txt", 5).structured()).containsEntry("content", "").containsEntry("lines", 0L);
    }

    @Test
    void linesAcrossBlockBoundariesAndAPageLimit() throws Exception {
        StringBuilder log = new StringBuilder();
        for (int i = 1; i <= 200_000; i++) {
            log.append("entry ").append(i).append('\n');
        }
        Files.writeString(root.resolve("big.log"), log);
        ToolResponse last = tail("big.log", 3);
        assertThat(last.structured()).containsEntry("content", "entry 199998\nentry 199999\nentry 200000\n");
        ToolResponse many = tail("big.log", 100_000);
        String content = (String) many.structured().get("content");
        assertThat(content.length()).isLessThanOrEqualTo(PAGE);
        assertThat(content).endsWith("entry 200000\n").startsWith("entry ");
        assertThat((Long) many.structured().get("lines")).isEqualTo(content.chars().filter(c -> c == '\n').count());
        assertThat(many.text()).contains("fewer than asked");
    }

    @Test
    void aLastLineLongerThanAPageIsItsEndOnACharacterBoundary() throws Exception {
        Files.writeString(root.resolve("long.txt"), "first\n" + "é".repeat(PAGE));
        ToolResponse cut = tail("long.txt", 2);
        String content = (String) cut.structured().get("content");
        assertThat(content).doesNotContain("\uFFFD").matches("é+");
        assertThat(cut.structured()).containsEntry("line_truncated", true).containsEntry("lines", 1L);
    }

    @Test
    void readsFromTheEndNotTheWholeFile() throws Exception {
        // A file far larger than what the tail needs: the reader never streams it from the start.
        Path big = root.resolve("sparse.log");
        try (var file = java.nio.channels.FileChannel.open(big, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
            file.write(java.nio.ByteBuffer.wrap("x\nlast line\n".getBytes()), 8L * 1024 * 1024 * 1024);
        }
        long started = System.nanoTime();
        ToolResponse last = tail("sparse.log", 1);
        assertThat(last.structured()).containsEntry("content", "last line\n");
        assertThat((System.nanoTime() - started) / 1_000_000).as("ms for the tail of an 8 GiB file").isLessThan(2_000);
    }

    @Test
    void tailRefusesNulAndOffset() throws Exception {
        Files.write(root.resolve("bin"), new byte[] {'a', '\n', 0, '\n'});
        assertThat(tail("bin", 1).text()).contains("NUL");
        assertThatThrownBy(() -> read.call(new ToolArguments(Map.of("path", "bin", "tail", 1, "offset", 2)), Progress.NONE))
                .isInstanceOf(ToolInputException.class).hasMessageContaining("tail");
    }
}
