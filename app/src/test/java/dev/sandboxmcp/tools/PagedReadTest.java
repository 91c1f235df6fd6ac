package dev.sandboxmcp.tools;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Workspace;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * read_file with offset/limit at the page limit (1 MiB): lines that fit, lines that are cut, and
 * what is kept; and with tail, the last lines read from the end of the file.
 */
class PagedReadTest {

    static final int PAGE = Limits.defaults().fileMaxBytes();
    static final int TAIL_PAGE = Limits.defaults().pageBytes();

    @TempDir
    Path root;
    Workspace workspace;
    ReadFileTool read;

    @BeforeEach
    void setUp() throws Exception {
        workspace = Workspace.open(root);
        read = new ReadFileTool(workspace, Limits.defaults());
    }

    @AfterEach
    void tearDown() throws Exception {
        workspace.close();
    }

    ToolResponse page(String path, long offset, long limit) {
        return ToolCalls.page(read, path, offset, limit);
    }

    @Test
    void lineOfExactlyAPageAsJsonIsReturnedWhole() throws Exception {
        String line = "x".repeat(PAGE - 2) + "\n"; // JSON writes the newline as two bytes
        Files.writeString(root.resolve("exact.txt"), line + "next\n");
        ToolResponse first = page("exact.txt", 1, 5);
        assertThat(first.structured()).containsEntry("content", line).containsEntry("bytes", (long) PAGE - 1)
                .containsEntry("lines", 1L).containsEntry("total_lines", 2L).containsEntry("has_more", true)
                .containsEntry("line_truncated", false).doesNotContainKey("rest_byte_offset");
        assertThat(first.text()).endsWith("[lines 1-1 of 2; more follows: call again with offset=2]");
    }

    @Test
    void lineOnePastAPageIsCutAndSaysWhereTheRestStarts() throws Exception {
        Files.writeString(root.resolve("over.txt"), "x".repeat(PAGE) + "\n" + "next\n");
        ToolResponse first = page("over.txt", 1, 5);
        assertThat(first.structured()).containsEntry("content", "x".repeat(PAGE)).containsEntry("bytes", (long) PAGE)
                .containsEntry("lines", 1L).containsEntry("total_lines", 2L).containsEntry("has_more", true)
                .containsEntry("line_truncated", true).containsEntry("line_bytes", (long) PAGE + 1)
                .containsEntry("rest_byte_offset", (long) PAGE);
        assertThat(first.text()).contains("[line 1 is " + (PAGE + 1) + " bytes, longer than a page of " + PAGE)
                .contains("The rest starts at byte " + PAGE)
                .contains("tail -c +" + (PAGE + 1) + " over.txt | head -c " + PAGE)
                .endsWith("[lines 1-1 of 2; more follows: call again with offset=2]");
        assertThat(page("over.txt", 2, 5).structured()).containsEntry("content", "next\n").containsEntry("line_truncated", false);
    }

    @Test
    void aLongLineAfterOthersStartsTheNextPageAndIsCutThere() throws Exception {
        Files.writeString(root.resolve("later.txt"), "a\n" + "y".repeat(PAGE + 5) + "\nz\n");
        ToolResponse first = page("later.txt", 1, 10);
        assertThat(first.structured()).containsEntry("content", "a\n").containsEntry("lines", 1L)
                .containsEntry("has_more", true).containsEntry("line_truncated", false);
        ToolResponse second = page("later.txt", 2, 10);
        assertThat(second.structured()).containsEntry("lines", 1L).containsEntry("line_truncated", true)
                .containsEntry("line_bytes", (long) PAGE + 6).containsEntry("rest_byte_offset", 2L + PAGE)
                .containsEntry("has_more", true).containsEntry("total_lines", 3L);
    }

    @ParameterizedTest(name = "cut {0} byte(s) into a 4-byte character")
    @ValueSource(ints = {1, 2, 3})
    void multiByteCharacterAtTheCutIsLeftWholeForTheRest(int bytesOfItInThePage) throws Exception {
        String prefix = "x".repeat(PAGE - bytesOfItInThePage);
        Files.writeString(root.resolve("emoji.txt"), prefix + "\uD83D\uDE00 after\n");
        ToolResponse cut = page("emoji.txt", 1, 1);
        assertThat(cut.structured()).containsEntry("content", prefix).containsEntry("line_truncated", true)
                .containsEntry("rest_byte_offset", (long) prefix.length());
        byte[] file = Files.readAllBytes(root.resolve("emoji.txt"));
        assertThat(new String(file, prefix.length(), file.length - prefix.length(), UTF_8)).startsWith("\uD83D\uDE00");
    }

    @Test
    void lastLineWithoutNewlineIsCutAndCounted() throws Exception {
        Files.writeString(root.resolve("tail.txt"), "one\n" + "z".repeat(PAGE + 10));
        ToolResponse cut = page("tail.txt", 2, 1);
        assertThat(cut.structured()).containsEntry("content", "z".repeat(PAGE)).containsEntry("total_lines", 2L)
                .containsEntry("has_more", false).containsEntry("line_bytes", (long) PAGE + 10)
                .containsEntry("rest_byte_offset", 4L + PAGE);
        assertThat(cut.text()).endsWith("[lines 2-2 of 2]");
    }

    @Test
    void crlfEndingsAndEmptyLinesAreKept() throws Exception {
        Files.writeString(root.resolve("crlf.txt"), "a\r\n\r\n\n\nb\r\nc");
        assertThat(page("crlf.txt", 1, 2).structured()).containsEntry("content", "a\r\n\r\n").containsEntry("total_lines", 6L);
        assertThat(page("crlf.txt", 3, 2).structured()).containsEntry("content", "\n\n").containsEntry("has_more", true);
        assertThat(page("crlf.txt", 5, 9).structured()).containsEntry("content", "b\r\nc").containsEntry("has_more", false);
    }

    @Test
    void emptyFileIsAnEmptyPage() throws Exception {
        Files.writeString(root.resolve("empty.txt"), "");
        assertThat(page("empty.txt", 1, 10).structured()).containsEntry("content", "").containsEntry("total_lines", 0L)
                .containsEntry("has_more", false).containsEntry("line_truncated", false);
    }

    @Test
    void nulAnywhereMakesTheFileBinaryButBadUtf8CountsOnlyInTheLinesReturned() throws Exception {
        Files.write(root.resolve("nul-later.txt"), new byte[] {'o', 'k', '\n', 'a', 0, '\n'});
        Files.write(root.resolve("bad-later.txt"), new byte[] {'o', 'k', '\n', (byte) 0xff, '\n'});
        ToolResponse binary = ToolCalls.call(read, Map.of("path", "nul-later.txt", "offset", 1, "limit", 1));
        assertThat(binary.error()).isTrue();
        assertThat(binary.text()).contains("NUL");
        assertThat(page("bad-later.txt", 1, 1).structured()).containsEntry("content", "ok\n").containsEntry("total_lines", 2L);
        ToolResponse bad = ToolCalls.call(read, Map.of("path", "bad-later.txt", "offset", 2));
        assertThat(bad.error()).isTrue();
        assertThat(bad.text()).contains("not valid UTF-8");
    }

    @Test
    void scannerReportsLinesAndOffsetsAcrossBlocks() throws Exception {
        int block = LineScanner.BLOCK_BYTES;
        byte[] text = ("ab\r\n\n" + "q".repeat(block) + "\nlast").getBytes(UTF_8);
        LineScanner scanner = new LineScanner(new ByteArrayInputStream(text));
        List<String> runs = new ArrayList<>();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        while (scanner.next()) {
            all.write(scanner.block(), scanner.from(), scanner.to() - scanner.from());
            runs.add(scanner.line() + "@" + scanner.lineStart() + ":" + (scanner.to() - scanner.from())
                    + (scanner.startsLine() ? "<" : "") + (scanner.endsLine() ? ">" : ""));
        }
        assertThat(all.toByteArray()).isEqualTo(text);
        assertThat(runs).containsExactly("1@0:4<>", "2@4:1<>", "3@5:" + (block - 5) + "<", "3@5:6>", "4@" + (block + 6) + ":4<",
                "4@" + (block + 6) + ":0>");
        assertThat(scanner.lines()).isEqualTo(4);
    }

    // tail: the last lines of a file, read from its end, within the default page

    ToolResponse tail(String path, long lines) {
        return ToolCalls.call(read, Map.of("path", path, "tail", lines));
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
        assertThat(content.length()).isLessThanOrEqualTo(TAIL_PAGE);
        assertThat(content).endsWith("entry 200000\n").startsWith("entry ");
        assertThat((Long) many.structured().get("lines")).isEqualTo(content.chars().filter(c -> c == '\n').count());
        assertThat(many.text()).contains("fewer than asked");
    }

    @Test
    void aLastLineLongerThanAPageIsItsEndOnACharacterBoundary() throws Exception {
        Files.writeString(root.resolve("long.txt"), "first\n" + "é".repeat(TAIL_PAGE));
        ToolResponse cut = tail("long.txt", 2);
        String content = (String) cut.structured().get("content");
        assertThat(content).doesNotContain("\uFFFD").matches("é+");
        assertThat(cut.structured()).containsEntry("line_truncated", true).containsEntry("lines", 1L);
    }

    @Test
    void aTailOfControlCharactersHoldsWhatFitsAPageAsJson() throws Exception {
        String line = "\u0001".repeat(99) + "\n"; // 596 bytes as JSON
        Files.writeString(root.resolve("control.log"), line.repeat(1000));
        ToolResponse many = tail("control.log", 1000);
        assertThat(many.structured()).containsEntry("lines", (long) TAIL_PAGE / 596)
                .containsEntry("content", line.repeat(TAIL_PAGE / 596)).containsEntry("line_truncated", false);
        assertThat(many.text()).contains("fewer than asked");

        Files.writeString(root.resolve("one.log"), "first\n" + "\u0001".repeat(TAIL_PAGE));
        assertThat(tail("one.log", 2).structured()).containsEntry("content", "\u0001".repeat(TAIL_PAGE / 6))
                .containsEntry("line_truncated", true);
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
        ToolResponse both = ToolCalls.call(read, Map.of("path", "bin", "tail", 1, "offset", 2));
        assertThat(both.error()).isTrue();
        assertThat(both.text()).contains("tail");
    }
}
