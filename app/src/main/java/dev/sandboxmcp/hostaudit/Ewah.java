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

    /**
     * More entries than any index holds (each takes over 60 bytes): a bit beyond is one git dies
     * on (no shared entry there), so it is not kept. git sets every bit the words give, whatever
     * the bit count in front says, and so does this.
     */
    static final long MAX_POSITIONS = 1L << 26;

    private Ewah() {
    }

    /** Reads one bitmap of at most {@code available} bytes from {@code in}. */
    static BitSet read(DataInputStream in, long available) throws IOException {
        in.readInt(); // the number of bits, which git's reading (ewah_each_bit) never looks at
        long words = Integer.toUnsignedLong(in.readInt());
        if (8 + words * 8 + 4 > available) {
            throw new GitIndex.Unreadable("a split index's bitmap of " + words + " words in " + available + " bytes");
        }
        BitSet set = new BitSet();
        long position = 0;
        for (long word = 0; word < words; ) {
            long runLengthWord = in.readLong();
            word++;
            long run = (runLengthWord >>> 1) & 0xFFFFFFFFL;
            long literals = runLengthWord >>> 33;
            if ((runLengthWord & 1) != 0 && position < MAX_POSITIONS) {
                set.set((int) position, (int) Math.min(MAX_POSITIONS, position + run * 64));
            }
            position = Math.min(position + run * 64, MAX_POSITIONS);
            for (long literal = 0; literal < literals && word < words; literal++, word++) {
                long bitsOfWord = in.readLong();
                for (int bit = 0; bit < 64; bit++) {
                    if ((bitsOfWord & (1L << bit)) != 0 && position + bit < MAX_POSITIONS) {
                        set.set((int) (position + bit));
                    }
                }
                position = Math.min(position + 64, MAX_POSITIONS);
            }
        }
        in.readInt(); // where the last run-length word is: for appending, not for reading
        return set;
    }
}
