package dev.sandboxmcp.tools;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Workspace;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Paging gives the lines a plain read of the whole file gives, for random offsets and limits,
 * over files with CRLF endings, empty lines, no final newline, multi-byte characters and long
 * lines across the scanners' buffer boundaries (8-byte words, 64 KiB and 256 KiB blocks),
 * control characters, quotes and backslashes (which JSON escapes, and a page is bounded as JSON
 * escapes it), invalid UTF-8 and NUL bytes (a binary file, wherever they are); through a line index small
 * enough that it fills and halves its stride.
 */
class PagingPropertyTest {

    static final int PAGE = 1024 * 1024;

    static Path dir;

    @BeforeContainer
    static void createDirectory() throws IOException {
        dir = Files.createTempDirectory("paging-property");
    }

    @AfterContainer
    static void removeDirectory() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    @Provide
    Arbitrary<byte[]> pieces() {
        return Arbitraries.frequencyOf(
                Tuple.of(10, Arbitraries.strings().withChars("abc xyz").ofMaxLength(40).map(s -> s.getBytes(UTF_8))),
                Tuple.of(10, Arbitraries.just("\n".getBytes(UTF_8))),
                Tuple.of(4, Arbitraries.just("\r\n".getBytes(UTF_8))),
                Tuple.of(4, Arbitraries.just("\n\n".getBytes(UTF_8))),
                Tuple.of(3, Arbitraries.just("é".getBytes(UTF_8))),
                Tuple.of(3, Arbitraries.just("😀".getBytes(UTF_8))),
                Tuple.of(1, Arbitraries.just(new byte[] {(byte) 0xff})),
                Tuple.of(1, Arbitraries.just(new byte[] {(byte) 0x80})),
                Tuple.of(1, Arbitraries.just(new byte[] {0})),
                Tuple.of(1, Arbitraries.integers().between(1_000, 140_000).map(n -> "é".repeat(n / 2).getBytes(UTF_8))),
                Tuple.of(1, Arbitraries.integers().between(60_000, 70_000).map(n -> "q".repeat(n).getBytes(UTF_8))),
                Tuple.of(2, Arbitraries.strings().withChars("\u0001\u001f\t\"\\").ofMaxLength(40).map(s -> s.getBytes(UTF_8))),
                Tuple.of(1, Arbitraries.integers().between(20_000, 200_000).map(n -> "\u0001".repeat(n).getBytes(UTF_8))));
    }

    @Property(tries = 60)
    void pagesAreThePlainReadsLines(@ForAll @Size(max = 200) List<@From("pieces") byte[]> pieces,
            @ForAll @Size(min = 1, max = 20) List<@IntRange(min = 1, max = 200) Integer> offsets,
            @ForAll @Size(min = 20, max = 20) List<@IntRange(min = 1, max = 300) Integer> limits) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        pieces.forEach(bytes::writeBytes);
        byte[] file = bytes.toByteArray();
        List<byte[]> lines = plainLines(file);
        Path path = Files.write(dir.resolve("file.txt"), file);
        LineIndex index = new LineIndex(3, 4);
        try (FileChannel channel = FileChannel.open(path)) {
            for (int q = 0; q < offsets.size(); q++) {
                long first = Math.min(offsets.get(q), lines.size() + 2);
                int limit = limits.get(q);
                LinePager.Result result = LinePager.read(channel, file.length, index, first, limit, PAGE);
                if (containsNul(file)) {
                    // A file within the count budget is scanned whole, whichever page is asked for.
                    assertThat(result).as("a file with a NUL byte").isInstanceOf(LinePager.Binary.class);
                    continue;
                }
                LinePager.Page page = (LinePager.Page) result;
                List<byte[]> expected = fitting(first > lines.size() ? List.of()
                        : lines.subList((int) first - 1, (int) Math.min(lines.size(), first - 1 + limit)), PAGE);
                if (!expected.isEmpty() && escaped(expected.getFirst()) > PAGE) {
                    assertThat(page.cut()).isNotNull();
                    continue;
                }
                assertThat(page.content()).as("lines %d+%d of %d", first, limit, lines.size()).isEqualTo(concat(expected));
                assertThat(page.lines()).isEqualTo(expected.size());
                assertThat(page.totalLines()).isEqualTo(lines.size());
                assertThat(page.totalExact()).isTrue();
                assertThat(page.hasMore()).isEqualTo(first - 1 + expected.size() < lines.size());
                assertThat(page.cut()).isNull();
            }
        }
        assertThat(index.stride()).as("the index halved its stride when full").isGreaterThanOrEqualTo(3);
    }

    @Property(tries = 40)
    void readFileDecodesOnlyTheLinesItReturns(@ForAll @Size(max = 60) List<@From("pieces") byte[]> pieces,
            @ForAll @IntRange(min = 1, max = 200) int offset, @ForAll @IntRange(min = 1, max = 200) int limit) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        pieces.forEach(bytes::writeBytes);
        byte[] file = bytes.toByteArray();
        List<byte[]> lines = plainLines(file);
        Files.write(dir.resolve("read.txt"), file);
        try (Workspace workspace = Workspace.open(dir)) {
            ReadFileTool read = new ReadFileTool(workspace, Limits.defaults());
            ToolResponse response = ToolCalls.call(read, Map.of("path", "read.txt", "offset", offset, "limit", limit));
            if (containsNul(file)) {
                assertThat(response.text()).contains("NUL");
                return;
            }
            if (offset > lines.size() && !lines.isEmpty()) {
                assertThat(response.text()).contains("past the end").contains("has " + lines.size() + " lines");
                return;
            }
            List<byte[]> returned = fitting(offset > lines.size() ? List.of()
                    : lines.subList(offset - 1, Math.min(lines.size(), offset - 1 + limit)), PAGE);
            if (!returned.isEmpty() && escaped(returned.getFirst()) > PAGE) {
                return; // a cut line: PagedReadTest's cases
            }
            byte[] expected = concat(returned);
            String strict = TextDecoding.decode(expected);
            if (strict == null) {
                assertThat(response.error()).isTrue();
                assertThat(response.text()).contains("not valid UTF-8");
            } else {
                assertThat(response.structured()).containsEntry("content", strict)
                        .containsEntry("total_lines", (long) lines.size()).containsEntry("total_lines_at_least", false);
            }
        }
    }

    static boolean containsNul(byte[] file) {
        for (byte b : file) {
            if (b == 0) {
                return true;
            }
        }
        return false;
    }

    /** The file's lines the plain way: each ends after its '\n', or at the end of the file. */
    static List<byte[]> plainLines(byte[] file) {
        List<byte[]> lines = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < file.length; i++) {
            if (file[i] == '\n') {
                lines.add(Arrays.copyOfRange(file, start, i + 1));
                start = i + 1;
            }
        }
        if (start < file.length) {
            lines.add(Arrays.copyOfRange(file, start, file.length));
        }
        return lines;
    }

    /** The first lines that fit in a page together, as JSON escapes them; at least the first. */
    static List<byte[]> fitting(List<byte[]> lines, int pageBytes) {
        int taken = 0;
        long bytes = 0;
        while (taken < lines.size() && (taken == 0 || bytes + escaped(lines.get(taken)) <= pageBytes)) {
            bytes += escaped(lines.get(taken++));
        }
        return lines.subList(0, taken);
    }

    /** The line's size as JSON: a control character six bytes, a newline, tab, quote or backslash two. */
    static long escaped(byte[] line) {
        long size = 0;
        for (byte b : line) {
            size += b == '\n' || b == '\t' || b == '\r' || b == '\b' || b == '\f' || b == '"' || b == '\\' ? 2
                    : b >= 0 && b < 0x20 ? 6 : 1;
        }
        return size;
    }

    static byte[] concat(List<byte[]> lines) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        lines.forEach(out::writeBytes);
        return out.toByteArray();
    }
}
