package dev.sandboxmcp.tools;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * read_file on files larger than the count budget: a page costs its own bytes, the line count is
 * a lower bound until a scan has reached the end, and the line index a file earns is dropped when
 * the file is appended to, truncated or replaced. A file that grows while it is paged reads as
 * one consistent log.
 */
class PagingIndexTest {

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

    Map<String, Object> page(String path, long offset, long limit) {
        return ToolCalls.page(read, path, offset, limit).structured();
    }

    /** Lines "{word} 1" to "{word} n", and more than the count budget of bytes. */
    static String lines(String word, int n) {
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            text.append(word).append(' ').append(i).append('\n');
        }
        assertThat((long) text.length()).isGreaterThan(LinePager.COUNT_BYTES);
        return text.toString();
    }

    @Test
    void aPageAtTheStartOfAHugeFileReadsOnlyThePage() throws Exception {
        Path huge = root.resolve("huge.log");
        try (FileChannel file = FileChannel.open(huge, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            file.write(ByteBuffer.wrap("first\nsecond\n".getBytes(UTF_8)));
            file.write(ByteBuffer.wrap("end\n".getBytes(UTF_8)), 8L * 1024 * 1024 * 1024);
        }
        long started = System.nanoTime();
        ToolResponse response = ToolCalls.call(read, Map.of("path", "huge.log", "offset", 1, "limit", 1));
        // The 8 GiB hole reads as NUL bytes: a scan of the file would call it binary, or take minutes.
        assertThat(response.structured()).containsEntry("content", "first\n").containsEntry("total_lines", 2L)
                .containsEntry("total_lines_at_least", true).containsEntry("has_more", true);
        assertThat(response.text()).endsWith("[lines 1-1 of at least 2; more follows: call again with offset=2]");
        assertThat((System.nanoTime() - started) / 1_000_000).as("ms for a page of an 8 GiB file").isLessThan(2_000);
    }

    @Test
    void theCountIsALowerBoundUntilAPageReachesTheEndThenItIsKnown() throws Exception {
        int n = 1_200_000;
        Files.writeString(root.resolve("big.log"), lines("line", n));
        assertThat(page("big.log", 1, 2)).containsEntry("content", "line 1\nline 2\n").containsEntry("total_lines", 3L)
                .containsEntry("total_lines_at_least", true);
        assertThat(page("big.log", n - 1, 5)).containsEntry("content", "line " + (n - 1) + "\nline " + n + "\n")
                .containsEntry("total_lines", (long) n).containsEntry("total_lines_at_least", false)
                .containsEntry("has_more", false);
        assertThat(page("big.log", 1, 2)).containsEntry("total_lines", (long) n).containsEntry("total_lines_at_least", false);
        assertThat(page("big.log", 777_777, 1)).containsEntry("content", "line 777777\n").containsEntry("total_lines", (long) n);
    }

    @Test
    void anAppendedFileIsCountedAfresh() throws Exception {
        int n = 1_200_000;
        Path log = Files.writeString(root.resolve("big.log"), lines("line", n));
        assertThat(page("big.log", n, 1)).containsEntry("total_lines", (long) n);
        Files.writeString(log, "appended\n", StandardOpenOption.APPEND);
        assertThat(page("big.log", 1, 1)).containsEntry("total_lines_at_least", true);
        assertThat(page("big.log", n, 5)).containsEntry("content", "line " + n + "\nappended\n")
                .containsEntry("total_lines", n + 1L).containsEntry("has_more", false);
    }

    @Test
    void aTruncatedAndRewrittenFileIsNotReadThroughItsOldIndex() throws Exception {
        Path log = Files.writeString(root.resolve("big.log"), lines("line", 1_200_000));
        assertThat(page("big.log", 900_000, 1)).containsEntry("content", "line 900000\n");
        try (FileChannel same = FileChannel.open(log, StandardOpenOption.WRITE)) {
            same.truncate(0);
            same.write(ByteBuffer.wrap(lines("a longer line", 700_000).getBytes(UTF_8)), 0);
        }
        assertThat(page("big.log", 600_000, 2)).containsEntry("content", "a longer line 600000\na longer line 600001\n");
        assertThat(page("big.log", 700_000, 2)).containsEntry("total_lines", 700_000L).containsEntry("has_more", false);
    }

    @Test
    void aSameSizeRewriteWithItsOldModificationTimeRestoredIsNotReadThroughItsOldIndex() throws Exception {
        Path log = Files.writeString(root.resolve("big.log"), lines("line", 1_200_000));
        FileTime modified = Files.getLastModifiedTime(log);
        assertThat(page("big.log", 1_000_000, 1)).containsEntry("content", "line 1000000\n");
        // The same bytes count, other line breaks: every line is one byte longer, so there are fewer.
        String longer = lines("line.", 1_200_000);
        byte[] same = longer.substring(0, (int) Files.size(log)).getBytes(UTF_8);
        Files.write(log, same, StandardOpenOption.TRUNCATE_EXISTING);
        Files.setLastModifiedTime(log, modified);
        assertThat(Files.size(log)).isEqualTo(same.length);
        assertThat(page("big.log", 1_000_000, 1)).containsEntry("content", "line. 1000000\n");
    }

    @Test
    void aReplacedFileIsNotReadThroughItsOldIndex() throws Exception {
        Files.writeString(root.resolve("big.log"), lines("line", 1_200_000));
        assertThat(page("big.log", 1_000_000, 1)).containsEntry("content", "line 1000000\n");
        Path next = Files.writeString(root.resolve("next.tmp"), lines("replaced", 1_100_000));
        Files.move(next, root.resolve("big.log"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        assertThat(page("big.log", 1_000_000, 1)).containsEntry("content", "replaced 1000000\n");
        assertThat(page("big.log", 1_100_000, 1)).containsEntry("total_lines", 1_100_000L).containsEntry("has_more", false);
    }

    @Test
    void aLogGrowingWhileItIsPagedReadsAsOneConsistentLog() throws Exception {
        Path log = Files.writeString(root.resolve("growing.log"), "");
        int total = 200_000;
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try (FileChannel out = FileChannel.open(log, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
                for (int i = 1; i <= total; i += 50) {
                    StringBuilder batch = new StringBuilder();
                    for (int k = i; k < i + 50; k++) {
                        batch.append("entry ").append(k).append('\n');
                    }
                    out.write(ByteBuffer.wrap(batch.toString().getBytes(UTF_8)));
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        long next = 1;
        long pages = 0;
        while (next <= total) {
            ToolResponse response = ToolCalls.call(read, Map.of("path", "growing.log", "offset", next, "limit", 3_000));
            if (response.error()) {
                assertThat(response.text()).contains("past the end");
                assertThat(writer.isDone() && !writer.isCompletedExceptionally() && next > total).isFalse();
                Thread.onSpinWait();
                continue;
            }
            String content = (String) response.structured().get("content");
            long first = next;
            for (String line : content.split("(?<=\n)")) {
                if (line.isEmpty()) {
                    continue;
                }
                if (!line.endsWith("\n")) {
                    assertThat("entry " + next + "\n").as("the unfinished last line").startsWith(line);
                    break;
                }
                assertThat(line).isEqualTo("entry " + next + "\n");
                next++;
            }
            assertThat((Long) response.structured().get("total_lines")).isGreaterThanOrEqualTo(next - 1);
            if (next > first) {
                pages++;
            }
        }
        writer.join();
        assertThat(pages).isGreaterThan(1);
    }
}
