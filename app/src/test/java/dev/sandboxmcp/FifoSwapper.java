package dev.sandboxmcp;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a hostile command does to win a check-then-open race: exchanges a name with a FIFO's name
 * ({@code renameat2(RENAME_EXCHANGE)}, atomic, so the name is always there and is a FIFO half the
 * time) as fast as it can, on a platform thread of its own. A server that checks the type and then
 * opens by name sooner or later opens the FIFO and, without O_NONBLOCK, waits for a peer forever.
 */
public final class FifoSwapper implements AutoCloseable {

    private static final int AT_FDCWD = -100;
    private static final int RENAME_EXCHANGE = 2;
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle RENAMEAT2 = LINKER.downcallHandle(
            LINKER.defaultLookup().find("renameat2").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));

    /** A name the server is asked about, and the FIFO's name it is exchanged with. */
    public record Pair(Path name, Path fifo) {
    }

    private final List<Pair> pairs;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong exchanges = new AtomicLong();
    private final Thread thread;

    private FifoSwapper(List<Pair> pairs) {
        this.pairs = pairs;
        this.thread = Thread.ofPlatform().name("fifo-swapper").daemon().unstarted(this::run);
    }

    /** Creates each pair's FIFO and starts exchanging. */
    public static FifoSwapper start(List<Pair> pairs) throws IOException, InterruptedException {
        for (Pair pair : pairs) {
            mkfifo(pair.fifo());
        }
        FifoSwapper swapper = new FifoSwapper(pairs);
        swapper.thread.start();
        return swapper;
    }

    public long exchanges() {
        return exchanges.get();
    }

    private void run() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[][] names = new MemorySegment[pairs.size()][];
            for (int i = 0; i < pairs.size(); i++) {
                names[i] = new MemorySegment[] {arena.allocateFrom(pairs.get(i).name().toString()),
                        arena.allocateFrom(pairs.get(i).fifo().toString())};
            }
            for (long round = 1; !stop.get(); round++) {
                for (MemorySegment[] pair : names) {
                    if ((int) RENAMEAT2.invokeExact(AT_FDCWD, pair[0], AT_FDCWD, pair[1], RENAME_EXCHANGE) == 0) {
                        exchanges.incrementAndGet();
                    }
                }
                if (round % 512 == 0) {
                    keepAFifo();
                }
            }
        } catch (Throwable e) {
            throw new AssertionError("swapper failed", e);
        }
    }

    /** A write or edit may rename a regular file over the FIFO's name; put a FIFO back. */
    private void keepAFifo() throws IOException, InterruptedException {
        for (Pair pair : pairs) {
            if (!isFifo(pair.name()) && !isFifo(pair.fifo())) {
                Files.deleteIfExists(pair.fifo());
                mkfifo(pair.fifo());
            }
        }
    }

    private static boolean isFifo(Path path) {
        try {
            BasicFileAttributes attrs = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return attrs.isOther();
        } catch (IOException gone) {
            return false;
        }
    }

    public static void mkfifo(Path path) throws IOException, InterruptedException {
        // Its pipes are closed here, not later by the JDK, so that a test counting descriptors does not see them go.
        Process mkfifo = new ProcessBuilder("mkfifo", path.toString()).redirectErrorStream(true).start();
        try (var in = mkfifo.getInputStream(); var out = mkfifo.getOutputStream(); var err = mkfifo.getErrorStream()) {
            if (mkfifo.waitFor() != 0) {
                throw new IOException("mkfifo " + path + ": " + new String(in.readAllBytes()));
            }
        }
    }

    /**
     * Stops exchanging, then opens every FIFO read-write, which never blocks and releases anyone
     * still waiting in an open of it (so a failing test does not leave threads stuck forever).
     */
    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        thread.join();
        for (Pair pair : pairs) {
            for (Path path : List.of(pair.name(), pair.fifo())) {
                if (isFifo(path)) {
                    try (RandomAccessFile release = new RandomAccessFile(path.toFile(), "rw")) {
                        release.getFD();
                    } catch (IOException ignored) {
                        // swapped away meanwhile
                    }
                }
            }
        }
    }
}
