package dev.sandboxmcp.hostaudit;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.List;

/**
 * What a git index ({@code index}, or a split index's {@code sharedindex.*}) tells git to take
 * without looking: the entries whose flags make {@code git status} and {@code git diff} skip the
 * file, {@code skip-worktree} and {@code assume-unchanged} (git's "assume valid"), which a command
 * can set on a file it changed ({@code git update-index --skip-worktree Makefile}); and the entries
 * git takes as unchanged when the file's size and times match what they record
 * ({@link Entry}, checked against the files by {@link UnseenEdits}).
 *
 * <p>Read as git 2.39's read-cache.c reads it ({@code create_from_disk}), versions 2 to 4: a
 * 12-byte header ({@code DIRC}, version, count), then per entry 40 bytes of stat data, the object
 * name, 16 bits of flags ({@code 0x8000} assume-valid, {@code 0x4000} extended, the low 12 bits
 * the name's length, {@code 0xFFF} for "up to the NUL"), when extended 16 more ({@code 0x4000}
 * skip-worktree; git takes them in any version), and the path: in versions 2 and 3 its length is
 * the flags' and the entry is padded to a multiple of 8 bytes, whatever the padding holds; in
 * version 4 it is prefix-compressed (a varint of bytes to drop from the previous path, then the
 * rest and a NUL). After the entries come extensions (a signature, a length, the data) and the
 * checksum, which git does not verify on reading.
 *
 * <p>The object name is 20 bytes, or 32 in a repository whose config says
 * {@code extensions.objectFormat = sha256}: the caller says which. A version 4 index that carries
 * an offset table (git may then read it in blocks, each starting without a previous path) is
 * reported as not read, as is one git would refuse.
 */
final class GitIndex {

    /** One flag, the number of entries carrying it, the first few of their paths and a digest of all of them. */
    record Flagged(String flag, long count, List<String> first, String digest) {

        /** As a finding shows it: {@code 7 files<what>a, b, c, d, e, ...; sha256 ...}. */
        String described(String what) {
            return count + (count == 1 ? " file" : " files") + what + String.join(", ", first)
                    + (count > first.size() ? ", ..." : "") + "; " + digest;
        }
    }

    /**
     * One entry: its {@code position} in the file, its path (empty: a split index's entry that
     * replaces one of its shared part, named by position only), the 40 bytes of stat data git
     * keeps (the low 32 bits of each field), its object name and flags.
     */
    record Entry(long position, byte[] path, byte[] stat, byte[] objectName, int flags, int extendedFlags) {

        /** Whether git compares it with its file by stat data: a regular file or link at stage 0, no flag set. */
        boolean comparedByStat() {
            int type = type();
            return (flags & (ASSUME_VALID | STAGE_MASK)) == 0 && (extendedFlags & (SKIP_WORKTREE | INTENT_TO_ADD)) == 0
                    && (type == REGULAR_FILE || type == SYMBOLIC_LINK);
        }

        boolean symbolicLink() {
            return type() == SYMBOLIC_LINK;
        }

        private int type() {
            return (int) uint32(stat, MODE_AT) & TYPE_MASK;
        }

        long ctimeSeconds() {
            return uint32(stat, 0);
        }

        long mtimeSeconds() {
            return uint32(stat, MTIME_SECONDS_AT);
        }

        long inode() {
            return uint32(stat, 20);
        }

        long uid() {
            return uint32(stat, 28);
        }

        long gid() {
            return uint32(stat, 32);
        }

        long size() {
            return uint32(stat, SIZE_AT);
        }

        /** This entry with another's path: a split index's replacement, named by the entry it replaces. */
        Entry named(byte[] name) {
            return new Entry(position, name, stat, objectName, flags, extendedFlags);
        }
    }

    /**
     * A split index's {@code link} extension: the object name (hex) of its shared part, and the
     * positions there of the entries it deletes and of those it replaces (in order, by its own
     * entries without a path).
     */
    record Link(String sharedIndex, BitSet deleted, BitSet replaced) {
    }

    /** Takes each {@link Entry} as the index is read. */
    interface Entries {
        void take(Entry entry);
    }

    /** What the index holds that the audit looks at besides its entries: the flags, and for a split index its link (else null). */
    record Contents(List<Flagged> flagged, Link link) {
    }

    /** An index this reader cannot take apart as git would (git refuses many such files too). */
    static final class Unreadable extends IOException {
        Unreadable(String message) {
            super(message);
        }
    }

    /** Opens the index. */
    interface Source {
        InputStream open() throws IOException;
    }

    static final int SHOWN = 5;
    /** A split index names an entry that replaces one of its shared part by position only, with an empty path. */
    static final String SPLIT_REPLACEMENT = "(an entry of the shared index, replaced)";
    private static final int STAT_BYTES = 40;
    /** Larger than the index of any work tree (a million entries take about 100 MB); a sparse file can claim terabytes. */
    static final long MAX_INDEX_BYTES = 2L << 30;
    /** Where the modification time's seconds and the size lie in an entry's stat data. */
    private static final int MTIME_SECONDS_AT = 8;
    private static final int MODE_AT = 24;
    private static final int SIZE_AT = 36;
    private static final int STAGE_MASK = 0x3000;
    private static final int INTENT_TO_ADD = 0x2000;
    private static final int TYPE_MASK = 0170000;
    private static final int REGULAR_FILE = 0100000;
    private static final int SYMBOLIC_LINK = 0120000;
    static final int SHA1_BYTES = 20;
    static final int SHA256_BYTES = 32;
    private static final int ASSUME_VALID = 0x8000;
    private static final int EXTENDED = 0x4000;
    private static final int NAME_MASK = 0x0FFF;
    private static final int SKIP_WORKTREE = 0x4000;
    /** Longer than any path a file system holds; a longer one is not an index. */
    private static final int MAX_PATH = 64 * 1024;
    private static final byte[] SIGNATURE = "DIRC".getBytes(StandardCharsets.US_ASCII);
    private static final String OFFSET_TABLE = "IEOT";
    private static final String END_OF_ENTRIES = "EOIE";
    /** A split index's extension naming its shared part (the object name first, then what is replaced and deleted). */
    private static final String LINK = "link";
    /** The extended flags git 2.39 knows (CE_EXTENDED_FLAGS: intent-to-add, skip-worktree); any other makes it refuse the index. */
    private static final int KNOWN_EXTENDED = 0x6000;
    /** The extensions starting lowercase (required) that git 2.39 reads: the split index's link, sparse directories. */
    private static final java.util.Set<String> KNOWN_REQUIRED = java.util.Set.of("link", "sdir");

    private GitIndex() {
    }

    /**
     * The flags set in the index {@code source} opens, a file of {@code size} bytes in a repository
     * whose object names are {@code hashBytes} long (20, or 32 with SHA-256); empty when none is set.
     */
    static List<Flagged> flagged(Source source, long size, int hashBytes) throws IOException {
        return read(source, size, hashBytes, entry -> { }).flagged();
    }

    /**
     * The flags set in the index {@code source} opens (as {@link #flagged}) and the shared part it
     * links to, each {@link Entry} handed to {@code entries} as it is read (an index that turns
     * out unreadable after some have been is still {@link Unreadable}).
     */
    static Contents read(Source source, long size, int hashBytes, Entries entries) throws IOException {
        if (size > MAX_INDEX_BYTES) {
            throw new Unreadable("larger than " + (MAX_INDEX_BYTES >> 30) + " GiB (" + size + " bytes), not read");
        }
        // Where git looks for the end-of-index entry (read_eoie_extension): just before the checksum.
        long eoie = size - hashBytes - (8 + 4 + hashBytes);
        if (eoie >= SIGNATURE.length + 8) {
            try (InputStream raw = source.open()) {
                raw.skipNBytes(eoie);
                if (new String(raw.readNBytes(4), StandardCharsets.ISO_8859_1).equals(END_OF_ENTRIES)) {
                    throw new Unreadable("an index with an end-of-index entry (EOIE): git may read its entries in blocks "
                            + "that the audit does not");
                }
            } catch (EOFException e) {
                throw new Unreadable("shorter than it was a moment ago");
            }
        }
        try (InputStream raw = source.open()) {
            Counting counted = new Counting(new BufferedInputStream(raw, 64 * 1024));
            DataInputStream in = new DataInputStream(counted);
            if (!Arrays.equals(in.readNBytes(SIGNATURE.length), SIGNATURE)) {
                throw new Unreadable("not a git index (no DIRC signature)");
            }
            int version = in.readInt();
            if (version < 2 || version > 4) {
                throw new Unreadable("index version " + version + " (git reads 2 to 4)");
            }
            long count = Integer.toUnsignedLong(in.readInt());
            Collector skipWorktree = new Collector("skip-worktree");
            Collector assumeUnchanged = new Collector("assume-unchanged");
            byte[] stat = new byte[STAT_BYTES];
            byte[] previous = new byte[0];
            for (long i = 0; i < count; i++) {
                in.readFully(stat);
                byte[] objectName = new byte[hashBytes];
                in.readFully(objectName);
                int flags = in.readUnsignedShort();
                boolean extended = (flags & EXTENDED) != 0;
                int extendedFlags = extended ? in.readUnsignedShort() : 0;
                if ((extendedFlags & ~KNOWN_EXTENDED) != 0) {
                    throw new Unreadable("entry " + i + ": extended flags git does not know and refuses");
                }
                int length = flags & NAME_MASK;
                byte[] path = version == 4 ? prefixCompressed(in, previous, length, i)
                        : padded(in, STAT_BYTES + hashBytes + 2 + (extended ? 2 : 0), length);
                if ((flags & ASSUME_VALID) != 0) {
                    assumeUnchanged.add(path);
                }
                if ((extendedFlags & SKIP_WORKTREE) != 0) {
                    skipWorktree.add(path);
                }
                entries.take(new Entry(i, path, stat.clone(), objectName, flags, extendedFlags));
                previous = path;
            }
            Extensions extensions = extensions(in, counted, size, hashBytes);
            if (extensions.offsetTable()) {
                throw new Unreadable("an index with an offset table (IEOT): git may read its entries in blocks that the "
                        + "audit does not");
            }
            List<Flagged> flagged = new ArrayList<>();
            for (Collector collector : List.of(skipWorktree, assumeUnchanged)) {
                if (collector.count > 0) {
                    flagged.add(collector.flagged());
                }
            }
            return new Contents(flagged, extensions.link());
        } catch (EOFException e) {
            throw new Unreadable("ends before its last entry");
        }
    }

    /** What the extensions say: whether git may read the entries in blocks, and the shared index linked to. */
    private record Extensions(boolean offsetTable, Link link) {
    }

    /**
     * Walks the extensions as git does (read-cache.c, {@code do_read_index}): while a header and
     * the checksum still fit, a 4-byte signature and a 4-byte length. A signature starting
     * lowercase that git does not know makes git refuse the index.
     */
    private static Extensions extensions(DataInputStream in, Counting counted, long size, int hashBytes)
            throws IOException {
        boolean offsetTable = false;
        Link link = null;
        while (counted.count + 8 + hashBytes <= size) {
            String signature = new String(in.readNBytes(4), StandardCharsets.ISO_8859_1);
            long length = Integer.toUnsignedLong(in.readInt());
            char first = signature.charAt(0);
            if ((first < 'A' || first > 'Z') && !KNOWN_REQUIRED.contains(signature)) {
                throw new Unreadable("an extension git does not know and refuses: " + signature);
            }
            // git finds the offset table through the end-of-index entry (EOIE), wherever it lies
            offsetTable |= signature.equals(OFFSET_TABLE) || signature.equals(END_OF_ENTRIES);
            long start = counted.count;
            if (signature.equals(LINK) && length >= hashBytes) {
                byte[] name = new byte[hashBytes];
                in.readFully(name);
                // git reads the two bitmaps only when there is more than the name (read_link_extension)
                BitSet deleted = new BitSet();
                BitSet replaced = new BitSet();
                if (length > hashBytes) {
                    deleted = Ewah.read(in, length - hashBytes);
                    replaced = Ewah.read(in, length - (counted.count - start));
                }
                link = new Link(HexFormat.of().formatHex(name), deleted, replaced);
            }
            long taken = counted.count - start;
            long skip = Math.min(length - taken, size - counted.count);
            in.skipNBytes(Math.max(0, skip));
            if (skip < length - taken) {
                break;
            }
        }
        return new Extensions(offsetTable, link);
    }

    private static long uint32(byte[] bytes, int at) {
        return ((bytes[at] & 0xFFL) << 24) | ((bytes[at + 1] & 0xFFL) << 16) | ((bytes[at + 2] & 0xFFL) << 8)
                | (bytes[at + 3] & 0xFFL);
    }

    /** Counts what the reader above it took. */
    private static final class Counting extends java.io.FilterInputStream {
        long count;

        Counting(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n > 0) {
                count += n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(n);
            count += skipped;
            return skipped;
        }
    }

    /** Versions 2 and 3: {@code length} bytes of path (up to the NUL when 0xFFF), the entry padded to 8 whatever the padding holds. */
    private static byte[] padded(DataInputStream in, int before, int length) throws IOException {
        byte[] path;
        if (length == NAME_MASK) {
            path = cString(in);
            length = path.length;
            in.skipNBytes(padding(before + length + 1));
        } else {
            path = in.readNBytes(length);
            if (path.length < length) {
                throw new EOFException();
            }
            in.skipNBytes(1 + padding(before + length + 1)); // git copies the byte after the path as its end
        }
        return path;
    }

    private static int padding(int read) {
        return (8 - read % 8) % 8;
    }

    /** Version 4: drop bytes from the end of the previous path, then the rest up to a NUL. */
    private static byte[] prefixCompressed(DataInputStream in, byte[] previous, int length, long entry) throws IOException {
        long drop = varint(in);
        if (entry == 0) {
            drop = 0; // git takes nothing from a previous path when there is none, whatever the count says
        }
        if (drop > previous.length) {
            throw new Unreadable("entry " + entry + ": drops " + drop + " bytes of a " + previous.length + "-byte path");
        }
        int kept = previous.length - (int) drop;
        byte[] rest;
        if (length == NAME_MASK) {
            rest = cString(in);
        } else {
            if (length < kept) {
                throw new Unreadable("entry " + entry + ": a " + length + "-byte path keeps " + kept + " bytes of the last");
            }
            rest = in.readNBytes(length - kept);
            if (rest.length < length - kept) {
                throw new EOFException();
            }
            in.skipNBytes(1);
        }
        byte[] path = Arrays.copyOf(previous, kept + rest.length);
        System.arraycopy(rest, 0, path, kept, rest.length);
        return path;
    }

    /** git's varint (varint.c): seven bits a byte, high bit set on all but the last, each continuation adding one. */
    private static long varint(DataInputStream in) throws IOException {
        int c = in.readUnsignedByte();
        long value = c & 0x7F;
        while ((c & 0x80) != 0) {
            value += 1;
            if (value > (Long.MAX_VALUE >>> 7)) {
                throw new Unreadable("a varint that overflows");
            }
            c = in.readUnsignedByte();
            value = (value << 7) + (c & 0x7F);
        }
        return value;
    }

    private static byte[] cString(DataInputStream in) throws IOException {
        byte[] buffer = new byte[256];
        int length = 0;
        for (int b = in.readUnsignedByte(); b != 0; b = in.readUnsignedByte()) {
            if (length == MAX_PATH) {
                throw new Unreadable("a path longer than " + MAX_PATH + " bytes");
            }
            if (length == buffer.length) {
                buffer = Arrays.copyOf(buffer, buffer.length * 2);
            }
            buffer[length++] = (byte) b;
        }
        return Arrays.copyOf(buffer, length);
    }

    /** The entries with one flag (or one finding): counted, the first {@link #SHOWN} kept, all digested. */
    static final class Collector {
        final String flag;
        final List<String> first = new ArrayList<>();
        final MessageDigest digest;
        long count;

        Collector(String flag) {
            this.flag = flag;
            try {
                digest = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }

        void add(byte[] path) {
            add(path, new byte[0]);
        }

        /** One more entry, with what else tells it apart (in the digest only). */
        void add(byte[] path, byte[] detail) {
            count++;
            if (first.size() < SHOWN) {
                first.add(path.length == 0 ? SPLIT_REPLACEMENT : new String(path, StandardCharsets.UTF_8));
            }
            digest.update(path);
            digest.update((byte) 0);
            digest.update(detail);
        }

        Flagged flagged() {
            return new Flagged(flag, count, List.copyOf(first),
                    "sha256 " + HexFormat.of().formatHex(digest.digest()).substring(0, 16));
        }
    }
}
