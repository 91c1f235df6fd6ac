package dev.sandboxmcp.tools;

import dev.sandboxmcp.exec.EscapedSize;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.util.Arrays;

/**
 * The last lines of a file, read backwards from its end in blocks, so a long log costs what its
 * tail costs, not what the whole file does. At most {@code maxBytes} are returned, counted as
 * JSON escapes them ({@link EscapedSize}): fewer lines when they do not fit, and the end of the
 * last line alone when even it does not.
 */
final class TailReader {

    private TailReader() {
    }

    /**
     * @param content   the bytes returned, line endings kept; not yet decoded
     * @param start     where they start in the file (0 when the whole file is returned)
     * @param lines     lines returned, a partial first line included
     * @param lineCut   the first line returned is only the end of a line longer than a page
     * @param binary    the bytes returned hold a NUL
     */
    record Tail(byte[] content, long start, long lines, boolean lineCut, boolean binary) {
    }

    static Tail read(SeekableByteChannel file, long wanted, int maxBytes) throws IOException {
        long size = file.size();
        // A final newline ends the last line; it does not start an empty one.
        long scanEnd = size > 0 && byteAt(file, size - 1) == '\n' ? size - 1 : size;
        long floor = 0; // where the bytes that fit in maxBytes as JSON escapes them begin
        long escaped = 0;
        long start = -1;
        long found = 0;
        ByteBuffer block = ByteBuffer.allocate(LineScanner.BLOCK_BYTES);
        long position = size;
        search:
        while (position > 0) {
            int length = (int) Math.min(block.capacity(), position);
            position -= length;
            block.clear().limit(length);
            readFully(file, block, position);
            for (int i = length - 1; i >= 0; i--) {
                byte b = block.get(i);
                escaped += EscapedSize.of(b);
                if (escaped > maxBytes) {
                    floor = position + i + 1;
                    break search;
                }
                if (b == '\n' && position + i < scanEnd) {
                    found++;
                    start = position + i + 1;
                    if (found == wanted) {
                        break search;
                    }
                }
            }
        }
        boolean lineCut = false;
        if (found < wanted) {
            if (floor == 0) {
                start = 0;
            } else if (start < 0) {
                start = floor; // the last line alone is longer than a page: its end
                lineCut = true;
            }
        }
        byte[] content = new byte[(int) (size - start)];
        readFully(file, ByteBuffer.wrap(content), start);
        int skip = lineCut ? leadingContinuationBytes(content) : 0;
        if (skip > 0) {
            content = Arrays.copyOfRange(content, skip, content.length);
            start += skip;
        }
        long lines = content.length == 0 ? 0 : lineCut ? 1 : start == 0 ? found + 1 : found;
        boolean binary = false;
        for (byte b : content) {
            if (b == 0) {
                binary = true;
                break;
            }
        }
        return new Tail(content, start, lines, lineCut, binary);
    }

    private static int leadingContinuationBytes(byte[] bytes) {
        int i = 0;
        while (i < Math.min(3, bytes.length) && (bytes[i] & 0xC0) == 0x80) {
            i++;
        }
        return i;
    }

    private static byte byteAt(SeekableByteChannel file, long position) throws IOException {
        ByteBuffer one = ByteBuffer.allocate(1);
        readFully(file, one, position);
        return one.get(0);
    }

    private static void readFully(SeekableByteChannel file, ByteBuffer into, long position) throws IOException {
        file.position(position);
        while (into.hasRemaining()) {
            if (file.read(into) < 0) {
                throw new IOException("the file shrank while it was read");
            }
        }
    }
}
