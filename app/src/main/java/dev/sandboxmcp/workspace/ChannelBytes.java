package dev.sandboxmcp.workspace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;

/**
 * A file's whole content through its channel: read to the end, refused past a limit, or written
 * out completely.
 */
final class ChannelBytes {

    private ChannelBytes() {
    }

    /**
     * Everything from the channel's position to its end; null when that is more than
     * {@code maxBytes}. It reads to the end rather than to the size the file had when it was
     * opened, so a file that grows meanwhile is still measured.
     */
    static byte[] readAtMost(SeekableByteChannel channel, int maxBytes) throws IOException {
        // Read one byte past the limit so a file that grew after a size check is still refused.
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min((long) maxBytes + 1, Math.max(channel.size() + 1, 8192)));
        while (true) {
            if (!buffer.hasRemaining()) {
                if (buffer.capacity() > maxBytes) {
                    return null;
                }
                buffer = grow(buffer, (int) Math.min((long) maxBytes + 1, (long) buffer.capacity() * 2));
            }
            if (channel.read(buffer) < 0) {
                break;
            }
        }
        byte[] bytes = new byte[buffer.position()];
        buffer.flip().get(bytes);
        return bytes;
    }

    private static ByteBuffer grow(ByteBuffer buffer, int capacity) {
        ByteBuffer bigger = ByteBuffer.allocate(capacity);
        buffer.flip();
        bigger.put(buffer);
        return bigger;
    }

    /** Writes all of {@code content}, however many calls the channel takes. */
    static void writeFully(SeekableByteChannel channel, byte[] content) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(content);
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }
}
