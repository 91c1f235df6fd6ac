package dev.sandboxmcp.exec;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.sandboxmcp.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * A filesystem's free bytes and inodes from one statvfs(3): Java's {@code FileStore} gives its
 * bytes only, and {@link java.io.File#getUsableSpace} makes a statvfs of its own. A filesystem
 * without a fixed number of inodes (btrfs, a tmpfs mounted with {@code nr_inodes=0}) says 0 in
 * total.
 */
final class Statvfs {

    /**
     * {@code availableBlocks}: f_bavail, in blocks of {@code blockBytes} (f_frsize);
     * {@code totalInodes}: f_files; {@code freeInodes}: f_favail, what the runner's user may still take.
     */
    record Reading(long availableBlocks, long blockBytes, long totalInodes, long freeInodes) {

        /** What the runner's user may still write, as {@link java.io.File#getUsableSpace} says it. */
        long usableBytes() {
            long bytes = availableBlocks * blockBytes;
            return bytes >= 0 ? bytes : Long.MAX_VALUE;
        }
    }

    private static final MethodHandle STATVFS = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("statvfs").orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS),
            Libc.CAPTURE_ERRNO);
    /**
     * struct statvfs of 64-bit glibc, the same on x86-64 and arm64: unsigned longs f_bsize, f_frsize,
     * f_blocks, f_bfree, f_bavail, f_files, f_ffree, f_favail, then more.
     */
    private static final long SIZE = 112;
    private static final long F_FRSIZE = 8;
    private static final long F_BAVAIL = 32;
    private static final long F_FILES = 40;
    private static final long F_FAVAIL = 56;

    private Statvfs() {
    }

    /** Reads {@code path}'s filesystem, again after a signal, as {@link java.io.File#getUsableSpace} does. */
    static Reading read(Path path) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment name = arena.allocateFrom(path.toString(), Libc.FILE_NAMES);
            MemorySegment buffer = arena.allocate(SIZE, 8);
            while ((int) STATVFS.invokeExact(state, name, buffer) != 0) {
                int errno = Libc.errno(state);
                if (errno != Libc.EINTR) {
                    throw new IOException("statvfs(" + path + ") failed: errno " + errno);
                }
            }
            return new Reading(buffer.get(JAVA_LONG, F_BAVAIL), buffer.get(JAVA_LONG, F_FRSIZE), buffer.get(JAVA_LONG, F_FILES),
                    buffer.get(JAVA_LONG, F_FAVAIL));
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
