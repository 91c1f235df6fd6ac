package dev.sandboxmcp.exec;

/**
 * What a command took, from the kernel's own accounting of the processes reaped for it
 * ({@code wait4(2)}'s {@code struct rusage}): the shell with every descendant it waited for, plus
 * what it orphaned and the runner reaped (see {@link Orphans}).
 *
 * @param userMicros   CPU time in user mode, all of them together
 * @param systemMicros CPU time in the kernel on their behalf
 * @param peakRssKib   the largest resident set any one of them reached (not their sum: what
 *                     {@code /usr/bin/time} reports as its maximum resident set size)
 * @param peakIsBound  the peak is only an upper bound: the shell is spawned from the runner's
 *                     own address space ({@code posix_spawn} is a vfork), and the kernel counts
 *                     the runner's peak resident size so far into the shell's peak; a command
 *                     whose largest process stayed below it shows that size, flagged so
 * @param writtenBytes bytes they caused to be written to storage ({@code ru_oublock}, counted in
 *                     512-byte units when the pages are dirtied: files on disk, not pipes, not tmpfs)
 */
public record Usage(long userMicros, long systemMicros, long peakRssKib, boolean peakIsBound, long writtenBytes) {

    static final Usage NONE = new Usage(0, 0, 0, false, 0);

    /** Both together: times and bytes added, the peak the larger (and a bound only if that one is). */
    Usage plus(Usage other) {
        boolean bound = peakRssKib == other.peakRssKib ? peakIsBound && other.peakIsBound
                : peakRssKib > other.peakRssKib ? peakIsBound : other.peakIsBound;
        return new Usage(userMicros + other.userMicros, systemMicros + other.systemMicros,
                Math.max(peakRssKib, other.peakRssKib), bound, writtenBytes + other.writtenBytes);
    }

    /** The same, its peak marked as an upper bound when it is no more than {@code carriedKib}. */
    Usage hidingBelow(long carriedKib) {
        return new Usage(userMicros, systemMicros, peakRssKib, peakRssKib <= carriedKib, writtenBytes);
    }
}
