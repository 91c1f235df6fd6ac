package dev.sandboxmcp.tools;

import dev.sandboxmcp.exec.EscapedSize;
import dev.sandboxmcp.tools.LineIndex.Position;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.util.Arrays;

/**
 * One page of lines of a file of any size, in time and memory that follow the page, not the file:
 * the bytes of lines {@code [first, first + limit)} that fit in {@code maxBytes}, counted as JSON
 * escapes them ({@link EscapedSize}: a control character takes six). The first line is
 * found with {@link LineSeeker} from the nearest start the file's {@link LineIndex} knows; only the
 * page's own lines are read as lines. The page ends before a line that does not fit, unless that
 * line is the page's first: then it is cut on a UTF-8 character boundary and the page says where
 * the rest begins. The file's line count comes from the index, or from counting the rest of the
 * file when that is at most {@link #COUNT_BYTES}; otherwise the page gives a lower bound.
 */
final class LinePager {

    /** The most bytes after a page that are scanned to count the file's lines exactly. */
    static final long COUNT_BYTES = 8L * 1024 * 1024;

    private LinePager() {
    }

    sealed interface Result permits Page, Binary {
    }

    /**
     * @param content    the bytes of the lines returned, line endings kept; not yet decoded
     * @param lines      lines returned, a cut line included
     * @param totalLines lines in the whole file, or at least that many when {@code totalExact} is false
     * @param totalExact whether {@code totalLines} is the count rather than a lower bound
     * @param hasMore    lines follow the page
     * @param cut        the page's only line, when it was longer than the page; else null
     */
    record Page(byte[] content, long lines, long totalLines, boolean totalExact, boolean hasMore, CutLine cut)
            implements Result {
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

    /** The bytes scanned hold a NUL byte, so the file is not text. */
    record Binary() implements Result {
    }

    /** Reads the page from {@code file}, whose size was {@code size} when opened; reads past it are not made. */
    static Result read(FileChannel file, long size, LineIndex index, long first, long limit, int maxBytes) throws IOException {
        Position start;
        switch (LineSeeker.seek(file, size, index.floor(first), first, index)) {
            case LineSeeker.Binary binary -> {
                return new Binary();
            }
            case LineSeeker.End end -> {
                return new Page(new byte[0], 0, end.lines(), true, false, null);
            }
            case LineSeeker.Found found -> start = found.start();
        }
        LineScanner scanner = new LineScanner(Channels.newInputStream(file.position(start.offset())), start, size);
        byte[] page = new byte[(int) Math.min(Math.min(maxBytes, LineScanner.BLOCK_BYTES), size - start.offset())];
        int filled = 0;
        int lineStartInPage = 0;
        long escaped = 0; // the page's size as JSON escapes it
        long returned = 0;
        boolean cutting = false;
        CutLine cut = null;
        long pageEnd = start.offset(); // where the line after the page starts
        while (returned < limit && cut == null && scanner.next()) {
            if (scanner.containsNul()) {
                return new Binary();
            }
            if (scanner.startsLine()) {
                lineStartInPage = filled;
            }
            int length = scanner.to() - scanner.from();
            if (!cutting) {
                long room = maxBytes - escaped;
                long runSize = EscapedSize.of(scanner.block(), scanner.from(), scanner.to());
                if (runSize > room && returned > 0) {
                    filled = lineStartInPage; // this line starts the next page
                    break;
                }
                int keep = runSize <= room ? length
                        : EscapedSize.fit(scanner.block(), scanner.from(), scanner.to(), room) - scanner.from();
                escaped += runSize <= room ? runSize
                        : EscapedSize.of(scanner.block(), scanner.from(), scanner.from() + keep);
                if (filled + keep > page.length) {
                    page = Arrays.copyOf(page, (int) Math.min(maxBytes, Math.max(2L * page.length, filled + keep)));
                }
                System.arraycopy(scanner.block(), scanner.from(), page, filled, keep);
                filled += keep;
                if (keep < length) {
                    filled = TextDecoding.characterBoundary(page, lineStartInPage, filled);
                    cutting = true;
                }
            }
            if (scanner.endsLine()) {
                returned++;
                pageEnd = scanner.end();
                index.learn(scanner.line() + 1, pageEnd);
                if (cutting) {
                    cut = new CutLine(scanner.line(), scanner.lineStart(), scanner.end() - scanner.lineStart(),
                            filled - lineStartInPage);
                }
            }
        }
        byte[] content = Arrays.copyOf(page, filled);
        long next = first + returned; // the first line after the page
        boolean hasMore = pageEnd < size;
        if (!hasMore) {
            index.learnTotal(next - 1);
            return new Page(content, returned, next - 1, true, false, cut);
        }
        if (index.totalLines().isPresent()) {
            return new Page(content, returned, index.totalLines().getAsLong(), true, true, cut);
        }
        if (size - pageEnd <= COUNT_BYTES) {
            return switch (LineSeeker.seek(file, size, new Position(next, pageEnd), Long.MAX_VALUE, index)) {
                case LineSeeker.Binary binary -> new Binary();
                case LineSeeker.End end -> new Page(content, returned, end.lines(), true, true, cut);
                case LineSeeker.Found unreachable -> throw new IllegalStateException("no line starts at the end of the file");
            };
        }
        return new Page(content, returned, next, false, true, cut);
    }
}
