package dev.sandboxmcp.hostaudit;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.BitSet;

/**
 * A bitmap as git writes it compressed (ewah/ewah_io.c, {@code ewah_read_mmap}): the number of
 * bits, the number of 64-bit words, the words, and the position of the last run-length word.
 * Each run-length word says, in bit 0, which bit a run repeats, in the next 32 bits how many words
 * of it, and in the top 31 how many literal words follow; a literal word holds 64 bits, the lowest
 * first. A split index's {@code link} extension holds two, the shared entries deleted and those
 * replaced, by position.
 */
final class Ewah {

    /** More bits than any index has entries: a bitmap claiming more is refused, not allocated. */
    static final long MAX_BITS = 1L << 28;

    private Ewah() {
    }

    /** Reads one bitmap of at most {@code available} bytes from {@code in}. */
    static BitSet read(DataInputStream in, long available) throws IOException {
        long bits = Integer.toUnsignedLong(in.readInt());
        long words = Integer.toUnsignedLong(in.readInt());
        if (bits > MAX_BITS || 8 + words * 8 + 4 > available) {
            throw new GitIndex.Unreadable("a split index's bitmap of " + bits + " bits in " + words
                    + " words, in " + available + " bytes");
        }
        BitSet set = new BitSet();
        long position = 0;
        for (long word = 0; word < words; ) {
            long runLengthWord = in.readLong();
            word++;
            long run = (runLengthWord >>> 1) & 0xFFFFFFFFL;
            long literals = runLengthWord >>> 33;
            if ((runLengthWord & 1) != 0 && position < bits) {
                set.set((int) position, (int) Math.min(bits, position + run * 64));
            }
            position = Math.min(position + run * 64, bits + 64);
            for (long literal = 0; literal < literals && word < words; literal++, word++) {
                long bitsOfWord = in.readLong();
                for (int bit = 0; bit < 64; bit++) {
                    if ((bitsOfWord & (1L << bit)) != 0 && position + bit < bits) {
                        set.set((int) (position + bit));
                    }
                }
                position = Math.min(position + 64, bits + 64);
            }
        }
        in.readInt(); // where the last run-length word is: for appending, not for reading
        return set;
    }
}
