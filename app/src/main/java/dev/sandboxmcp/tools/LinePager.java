package dev.sandboxmcp.tools;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * One page of lines of a text stream of any size, in bounded memory: the bytes of lines
 * {@code [first, first + limit)} that fit in {@code maxBytes}, and the count of all lines. The
 * page ends before a line that does not fit, unless that line is the page's first: then it is
 * cut on a UTF-8 character boundary and the page says where the rest begins.
 */
final class LinePager {

    private LinePager() {
    }

    sealed interface Result permits Page, Binary {
    }

    /**
     * @param content    the bytes of the lines returned, line endings kept; not yet decoded
     * @param lines      lines returned, a cut line included
     * @param totalLines lines in the whole stream
     * @param cut        the page's only line, when it was longer than the page; else null
     */
    record Page(byte[] content, long lines, long totalLines, CutLine cut) implements Result {
    }

    /**
     * A line longer than a page: its number, where it starts, its size (line ending included) and
     * how many of its bytes the page holds.
     */
    record CutLine(long line, long start, long bytes, int kept) {
        /** Where the part of the line the page does not hold starts, in bytes from the start of the stream. */
        long restOffset() {
            return start + kept;
        }
    }

    /** The stream holds a NUL byte, so it is not text. */
    record Binary() implements Result {
    }

    static Result read(InputStream in, long first, long limit, int maxBytes) throws IOException {
        LineScanner scanner = new LineScanner(in);
        byte[] page = new byte[Math.min(maxBytes, LineScanner.BLOCK_BYTES)];
        int size = 0;
        int lineStartInPage = 0;
        long returned = 0;
        boolean cutting = false;
        CutLine cut = null;
        boolean full = false;
        while (scanner.next()) {
            if (scanner.containsNul()) {
                return new Binary();
            }
            long line = scanner.line();
            if (full || line < first || line - first >= limit) {
                continue;
            }
            if (scanner.startsLine()) {
                lineStartInPage = size;
            }
            int length = scanner.to() - scanner.from();
            if (!cutting) {
                int room = maxBytes - size;
                if (length > room && returned > 0) {
                    size = lineStartInPage; // this line starts the next page
                    full = true;
                    continue;
                }
                int keep = Math.min(length, room);
                if (size + keep > page.length) {
                    page = Arrays.copyOf(page, (int) Math.min(maxBytes, Math.max(2L * page.length, size + keep)));
                }
                System.arraycopy(scanner.block(), scanner.from(), page, size, keep);
                size += keep;
                if (keep < length) {
                    size = TextDecoding.characterBoundary(page, lineStartInPage, size);
                    cutting = true;
                }
            }
            if (scanner.endsLine()) {
                returned++;
                if (cutting) {
                    cut = new CutLine(line, scanner.lineStart(), scanner.end() - scanner.lineStart(), size - lineStartInPage);
                    full = true;
                }
            }
        }
        return new Page(Arrays.copyOf(page, size), returned, scanner.lines(), cut);
    }
}
