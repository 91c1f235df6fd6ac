package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * What the audit reads of one commit-graph file (git's {@code commit-graph-format.txt}): a header
 * ({@code CGPH}, version, hash version, the number of chunks, of base graphs), a table of chunks
 * (a 4-byte id and an 8-byte offset each, then a terminating entry), and among the chunks the
 * sorted commit names ({@code OIDL}) and the changed-path filters ({@code BIDX}, {@code BDAT}),
 * which {@code git commit-graph verify} does not check. A file without the signature is not read
 * (git ignores it too; its verify says why); the filters are named from the table alone.
 */
record CommitGraphFile(List<String> commits, boolean changedPaths) {

    private static final int SIGNATURE = 0x43475048; // CGPH
    private static final int OIDL = 0x4f49444c;
    private static final int BIDX = 0x42494458;
    private static final int BDAT = 0x42444154;
    private static final int HEADER_BYTES = 8;
    private static final int CHUNK_ENTRY_BYTES = 12;

    /**
     * Reads the file open as {@code channel}: of its commits, those in {@code wanted} (lower-case
     * hex), and whether it holds changed-path filters. Null when it does not parse as a commit-graph.
     */
    static CommitGraphFile read(FileChannel channel, int hashBytes, Set<String> wanted) throws IOException {
        long size = channel.size();
        ByteBuffer header = read(channel, 0, HEADER_BYTES, size);
        if (header == null || header.getInt(0) != SIGNATURE) {
            return null;
        }
        int chunks = header.get(6) & 0xff;
        ByteBuffer table = read(channel, HEADER_BYTES, (chunks + 1) * CHUNK_ENTRY_BYTES, size);
        if (table == null) {
            return null;
        }
        boolean changedPaths = false;
        long commitsAt = -1;
        long commitsEnd = -1;
        for (int i = 0; i < chunks; i++) {
            int id = table.getInt(i * CHUNK_ENTRY_BYTES);
            changedPaths |= id == BIDX || id == BDAT;
            if (id == OIDL) {
                commitsAt = table.getLong(i * CHUNK_ENTRY_BYTES + 4);
                commitsEnd = table.getLong((i + 1) * CHUNK_ENTRY_BYTES + 4);
            }
        }
        if (commitsAt < 0 || commitsEnd < commitsAt || commitsEnd > size) {
            return new CommitGraphFile(List.of(), changedPaths);
        }
        commitsEnd -= (commitsEnd - commitsAt) % hashBytes; // git rounds the number of commits down, and reads on
        List<String> found = new ArrayList<>();
        HexFormat hex = HexFormat.of();
        ByteBuffer names = ByteBuffer.allocate(hashBytes * 4096);
        byte[] name = new byte[hashBytes];
        for (long at = commitsAt; at < commitsEnd; at += names.capacity()) {
            names.clear().limit((int) Math.min(names.capacity(), commitsEnd - at));
            readFully(channel, names, at);
            names.flip();
            while (names.remaining() >= hashBytes) {
                names.get(name);
                String commit = hex.formatHex(name);
                if (wanted.contains(commit)) {
                    found.add(commit);
                }
            }
        }
        return new CommitGraphFile(found, changedPaths);
    }

    private static ByteBuffer read(FileChannel channel, long at, int bytes, long size) throws IOException {
        if (at + bytes > size) {
            return null;
        }
        ByteBuffer buffer = ByteBuffer.allocate(bytes);
        readFully(channel, buffer, at);
        return buffer.flip();
    }

    private static void readFully(FileChannel channel, ByteBuffer buffer, long at) throws IOException {
        long position = at;
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, position);
            if (n < 0) {
                throw new IOException("the commit-graph ended early");
            }
            position += n;
        }
    }
}
