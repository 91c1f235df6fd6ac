package dev.sandboxmcp.exec;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * A filesystem's inodes, from statvfs(3): Java's {@code FileStore} gives its bytes only. A
 * filesystem without a fixed number of inodes (btrfs, a tmpfs mounted with {@code nr_inodes=0})
 * says 0 in total.
 */
final class Statvfs {

    /** {@code total}: f_files; {@code free}: f_favail, what the runner's user may still take. */
    record Inodes(long total, long free) {
    }

    private static final MethodHandle STATVFS = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("statvfs").orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** struct statvfs of 64-bit glibc, the same on x86-64 and arm64: five unsigned longs, then f_files, f_ffree, f_favail. */
    private static final long SIZE = 112;
    private static final long F_FILES = 40;
    private static final long F_FAVAIL = 56;

    private Statvfs() {
    }

    static Inodes inodes(Path path) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(SIZE, 8);
            int result = (int) STATVFS.invokeExact(arena.allocateFrom(path.toString()), buffer);
            if (result != 0) {
                throw new IOException("statvfs(" + path + ") failed");
            }
            return new Inodes(buffer.get(JAVA_LONG, F_FILES), buffer.get(JAVA_LONG, F_FAVAIL));
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
