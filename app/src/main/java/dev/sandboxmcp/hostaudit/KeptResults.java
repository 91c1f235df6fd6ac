package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What the audit computed from files' bytes (a hash, a verification), kept across the watcher's
 * rounds under the files' identity (device and inode), size and times, and how long each may
 * stand. A write through write(2) moves the times. A write through a shared mapping moves them
 * only when it faults on a clean page: a page dirtied before the bytes were read can change again
 * unseen until the kernel writes it back and makes it clean ({@code vm.dirty_expire_centisecs},
 * then the flusher's next pass, {@code vm.dirty_writeback_centisecs}). Hence, by the file's
 * change time when it was read:
 * <ul>
 * <li>within the last {@link #SETTLED_NANOS}: not kept (a time may not have moved yet at its granularity);
 * <li>before the write-back window ({@link #WRITEBACK_WINDOW_NANOS}), on a file system that writes
 * pages back (not tmpfs or ramfs, whose pages are never clean): kept while the file stays as it is;
 * <li>otherwise: for {@link #KEPT_NANOS}.
 * </ul>
 * At most {@code max} are kept; beyond that, what expired or went unused for a minute is dropped
 * at most twice a minute, and then nothing more is kept (it is computed again each round).
 */
final class KeptResults<K, V> {

    static final long SETTLED_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long KEPT_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final long MIN_WRITEBACK_WINDOW_NANOS = TimeUnit.MINUTES.toNanos(2);
    /** Read once: {@link #writebackWindow}. */
    static final long WRITEBACK_WINDOW_NANOS = writebackWindow();

    private static final class Kept<V> {
        final V value;
        final long until;
        /** Looked up or kept since {@link #lastingInUse} was last called. */
        volatile boolean used;
        /** When it was last looked up or kept: what no round uses any more is dropped once the bound is reached. */
        volatile long lastUsed;

        Kept(V value, long until, boolean used, long lastUsed) {
            this.value = value;
            this.until = until;
            this.used = used;
            this.lastUsed = lastUsed;
        }

        boolean stale(long now) {
            return now >= until || now - lastUsed >= KEPT_NANOS;
        }
    }

    private final Map<K, Kept<V>> kept = new ConcurrentHashMap<>();
    private final int max;
    private volatile long lastSwept;

    KeptResults(int max) {
        this.max = max;
    }

    /** What was kept under {@code key} and still stands at {@code now} (nanoseconds of the epoch), else null. */
    V get(K key, long now) {
        Kept<V> found = kept.get(key);
        if (found == null || now >= found.until) {
            return null;
        }
        found.used = true;
        found.lastUsed = now;
        return found.value;
    }

    /**
     * Keeps {@code value}, computed at {@code now} from a file whose change time was
     * {@code changedNanos}; {@code writtenBack}: its file system writes dirty pages back.
     */
    void keep(K key, V value, long changedNanos, long now, boolean writtenBack) {
        long age = now - changedNanos;
        if (age < SETTLED_NANOS) {
            return;
        }
        long until = writtenBack && age >= WRITEBACK_WINDOW_NANOS ? Long.MAX_VALUE : now + KEPT_NANOS;
        if (kept.size() >= max && now - lastSwept >= KEPT_NANOS / 2) {
            lastSwept = now;
            kept.values().removeIf(old -> old.stale(now));
        }
        if (kept.size() < max) {
            kept.put(key, new Kept<>(value, until, true, now));
        }
    }

    /** Keeps {@code value}, read back from where an earlier audit saved it, for as long as its files stay. */
    void keepLasting(K key, V value) {
        if (kept.size() < max) {
            kept.putIfAbsent(key, new Kept<>(value, Long.MAX_VALUE, false, now()));
        }
    }

    /** What is kept for as long as its files stay and was used since the last call (the results still of use). */
    Map<K, V> lastingInUse() {
        Map<K, V> lasting = new java.util.HashMap<>();
        kept.forEach((key, found) -> {
            if (found.until == Long.MAX_VALUE && found.used) {
                lasting.put(key, found.value);
                found.used = false;
            }
        });
        return lasting;
    }

    /** The epoch's nanoseconds now, as the file system's times count them. */
    static long now() {
        return System.currentTimeMillis() * 1_000_000;
    }

    /** Whether pages written to files at {@code path} are written back (and made clean) by the kernel. */
    static boolean writtenBack(Path path) {
        try {
            String type = Files.getFileStore(path).type();
            return !type.equals("tmpfs") && !type.equals("ramfs");
        } catch (IOException e) {
            return false;
        }
    }

    /** Twice the time a dirty page may wait to be written back, at least two minutes; unknown: never past it. */
    private static long writebackWindow() {
        try {
            long expire = Long.parseLong(Files.readString(Path.of("/proc/sys/vm/dirty_expire_centisecs")).strip());
            long writeback = Long.parseLong(Files.readString(Path.of("/proc/sys/vm/dirty_writeback_centisecs")).strip());
            if (writeback <= 0) {
                return Long.MAX_VALUE; // no periodic write-back: a dirty page may stay dirty for good
            }
            long centiseconds = Math.addExact(expire, writeback);
            return Math.max(MIN_WRITEBACK_WINDOW_NANOS, 2 * TimeUnit.MILLISECONDS.toNanos(10 * centiseconds));
        } catch (IOException | NumberFormatException | ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
