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
import java.util.HexFormat;
import java.util.List;

/**
 * The entries of a git index ({@code index}, or a split index's {@code sharedindex.*}) whose flags
 * make {@code git status} and {@code git diff} skip the file: {@code skip-worktree} and
 * {@code assume-unchanged} (git's "assume valid"). A command can set either on a file it changed
 * ({@code git update-index --skip-worktree Makefile}), and your review no longer shows the change.
 *
 * <p>Read as git's gitformat-index describes it, versions 2 to 4: a 12-byte header ({@code DIRC},
 * version, count), then per entry 40 bytes of stat data, the object name (20 bytes, or 32 in a
 * SHA-256 repository: the length that keeps every entry's name length consistent), 16 bits of
 * flags ({@code 0x8000} assume-valid, {@code 0x4000} extended, the low 12 bits the name's length),
 * in versions 3 and 4 when extended 16 more ({@code 0x4000} skip-worktree), and the path: up to 8
 * NULs of padding to a multiple of 8 in versions 2 and 3; in version 4 prefix-compressed (a
 * varint of bytes to drop from the previous path, then the rest, NUL-terminated). What follows
 * the entries (extensions, the checksum) says nothing about these flags and is not read.
 */
final class GitIndex {

    /** One flag, the number of entries carrying it, the first few of their paths and a digest of all of them. */
    record Flagged(String flag, long count, List<String> first, String digest) {
    }

    /** An index this reader cannot take apart (git refuses most such files too). */
    static final class Unreadable extends IOException {
        Unreadable(String message) {
            super(message);
        }
    }

    /** Opens the index afresh: a second reading, with the other object name length, starts again. */
    interface Source {
        InputStream open() throws IOException;
    }

    static final int SHOWN = 5;
    /** A split index names an entry that replaces one of its shared part by position only, with an empty path. */
    static final String SPLIT_REPLACEMENT = "(an entry of the shared index, replaced)";
    private static final int STAT_BYTES = 40;
    private static final int SHA1_BYTES = 20;
    private static final int SHA256_BYTES = 32;
    private static final int ASSUME_VALID = 0x8000;
    private static final int EXTENDED = 0x4000;
    private static final int NAME_MASK = 0x0FFF;
    private static final int SKIP_WORKTREE = 0x4000;
    /** Longer than any path a file system holds; a longer one is not an index. */
    private static final int MAX_PATH = 64 * 1024;

    private GitIndex() {
    }

    /** The flags set in the index {@code source} opens, each with its entries; empty when none is set. */
    static List<Flagged> flagged(Source source) throws IOException {
        try (InputStream in = source.open()) {
            return read(in, SHA1_BYTES);
        } catch (Inconsistent sha1) {
            try (InputStream in = source.open()) {
                return read(in, SHA256_BYTES);
            } catch (Inconsistent sha256) {
                throw new Unreadable(sha1.getMessage());
            }
        }
    }

    /** An entry whose name does not match its recorded length: the object name length was wrong, or the file is not an index. */
    private static final class Inconsistent extends IOException {
        Inconsistent(String message) {
            super(message);
        }
    }

    private static List<Flagged> read(InputStream raw, int hashBytes) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(raw, 64 * 1024));
        try {
            byte[] signature = in.readNBytes(4);
            if (!Arrays.equals(signature, "DIRC".getBytes(StandardCharsets.US_ASCII))) {
                throw new Unreadable("not a git index (no DIRC signature)");
            }
            int version = in.readInt();
            if (version < 2 || version > 4) {
                throw new Unreadable("index version " + version + " (git writes 2 to 4)");
            }
            long count = Integer.toUnsignedLong(in.readInt());
            Collector skipWorktree = new Collector("skip-worktree");
            Collector assumeUnchanged = new Collector("assume-unchanged");
            byte[] previous = new byte[0];
            for (long i = 0; i < count; i++) {
                in.skipNBytes(STAT_BYTES + hashBytes);
                int flags = in.readUnsignedShort();
                int extended = 0;
                if ((flags & EXTENDED) != 0) {
                    if (version < 3) {
                        throw new Inconsistent("entry " + i + ": extended flags in a version 2 index");
                    }
                    extended = in.readUnsignedShort();
                }
                byte[] path;
                if (version == 4) {
                    long drop = varint(in);
                    if (drop > previous.length) {
                        throw new Inconsistent("entry " + i + ": drops " + drop + " bytes of a " + previous.length + "-byte path");
                    }
                    byte[] rest = cString(in);
                    path = Arrays.copyOf(previous, previous.length - (int) drop + rest.length);
                    System.arraycopy(rest, 0, path, previous.length - (int) drop, rest.length);
                } else {
                    path = cString(in);
                    int read = STAT_BYTES + hashBytes + 2 + ((flags & EXTENDED) != 0 ? 2 : 0) + path.length + 1;
                    int padding = (8 - read % 8) % 8;
                    for (int p = 0; p < padding; p++) {
                        if (in.readUnsignedByte() != 0) {
                            throw new Inconsistent("entry " + i + ": padding that is not NUL");
                        }
                    }
                }
                int recorded = flags & NAME_MASK;
                if (recorded != Math.min(path.length, NAME_MASK)) {
                    throw new Inconsistent("entry " + i + ": a " + path.length + "-byte path recorded as " + recorded);
                }
                if ((flags & ASSUME_VALID) != 0) {
                    assumeUnchanged.add(path);
                }
                if ((extended & SKIP_WORKTREE) != 0) {
                    skipWorktree.add(path);
                }
                previous = path;
            }
            List<Flagged> flagged = new ArrayList<>();
            for (Collector collector : List.of(skipWorktree, assumeUnchanged)) {
                if (collector.count > 0) {
                    flagged.add(collector.flagged());
                }
            }
            return flagged;
        } catch (EOFException e) {
            throw new Inconsistent("ends before its last entry");
        }
    }

    /** git's varint (varint.c): seven bits a byte, high bit set on all but the last, each continuation adding one. */
    private static long varint(DataInputStream in) throws IOException {
        int c = in.readUnsignedByte();
        long value = c & 0x7F;
        while ((c & 0x80) != 0) {
            value += 1;
            if (value > (Long.MAX_VALUE >>> 7)) {
                throw new Inconsistent("a varint that overflows");
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
                throw new Inconsistent("a path longer than " + MAX_PATH + " bytes");
            }
            if (length == buffer.length) {
                buffer = Arrays.copyOf(buffer, buffer.length * 2);
            }
            buffer[length++] = (byte) b;
        }
        return Arrays.copyOf(buffer, length);
    }

    /** The entries with one flag: counted, the first {@link #SHOWN} kept, all digested. */
    private static final class Collector {
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
            count++;
            if (first.size() < SHOWN) {
                first.add(path.length == 0 ? SPLIT_REPLACEMENT : new String(path, StandardCharsets.UTF_8));
            }
            digest.update(path);
            digest.update((byte) 0);
        }

        Flagged flagged() {
            return new Flagged(flag, count, List.copyOf(first),
                    "sha256 " + HexFormat.of().formatHex(digest.digest()).substring(0, 16));
        }
    }
}
