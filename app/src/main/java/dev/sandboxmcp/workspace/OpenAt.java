package dev.sandboxmcp.workspace;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.sandboxmcp.libc.Libc;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.FileSystemException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;

/**
 * {@code openat(2)} with the flags {@code java.nio} cannot pass, for the opens of {@link Workspace}
 * that must never wait (the low-level half of {@code os.Root}, as {@code root_openat.go} is in Go).
 *
 * <p>Why it exists: {@code java.nio} opens a name with blocking flags only. Between a type check
 * ({@code lstat}) and such an open, a command can exchange the name with a FIFO
 * ({@code renameat2(RENAME_EXCHANGE)}); the open then waits in {@code openat} for a peer that
 * never comes, on a virtual thread that pins its carrier, and two of those stop a two-CPU server.
 * Every open here returns at once instead: a directory is opened {@code O_PATH|O_DIRECTORY} (a FIFO
 * fails with {@code ENOTDIR}; {@code O_PATH} opens nothing), a file {@code O_NONBLOCK} (a FIFO opens
 * at once for reading, or fails with {@code ENXIO} for writing), always {@code O_NOFOLLOW}. The
 * caller checks the type on the descriptor, which no rename can change, and Java then reaches the
 * same inode, not the name, through {@link #path(int) /proc/self/fd}.
 *
 * <p>Linux only (x86-64 and arm64, whose flag values differ), with {@code /proc} mounted.
 */
final class OpenAt {

    /** How a name is opened; each way returns without waiting, whatever the name turns out to be. */
    enum Access {
        /** The workspace root, by absolute path, following links in it as {@code Files} would. */
        ROOT(Flags.O_PATH | Flags.O_DIRECTORY),
        /** A directory in the directory, never a link. */
        DIRECTORY(Flags.O_PATH | Flags.O_DIRECTORY | Flags.O_NOFOLLOW),
        READ(Flags.O_RDONLY | Flags.FILE, StandardOpenOption.READ),
        /** Appends, creating a missing file; a FIFO without a reader fails with ENXIO. */
        APPEND(Flags.O_WRONLY | Flags.O_APPEND | Flags.O_CREAT | Flags.FILE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND),
        /** A new file that nothing else had this name for. */
        CREATE_NEW(Flags.O_WRONLY | Flags.O_CREAT | Flags.O_EXCL | Flags.FILE, StandardOpenOption.WRITE);

        final int flags;
        /** How Java opens the descriptor again for a channel. */
        final Set<OpenOption> reopen;

        Access(int flags, OpenOption... reopen) {
            this.flags = flags | Flags.O_CLOEXEC;
            this.reopen = Set.of(reopen);
        }
    }

    /** An open that failed, with its errno (the same on x86-64 and arm64). */
    static final class Failure extends FileSystemException {
        final int errno;

        Failure(String name, int errno, String description) {
            super(name, null, description);
            this.errno = errno;
        }
    }

    static final int AT_FDCWD = -100;
    static final int ENOENT = 2;
    static final int ENXIO = 6;
    static final int EPERM = 1;
    static final int EACCES = 13;
    static final int EEXIST = 17;
    static final int ENOTDIR = 20;
    static final int EISDIR = 21;
    static final int ELOOP = 40;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle OPENAT = LINKER.downcallHandle(LINKER.defaultLookup().find("openat").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(3), Libc.CAPTURE_ERRNO);
    private static final MethodHandle CLOSE = LINKER.downcallHandle(LINKER.defaultLookup().find("close").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle STRERROR = LINKER.downcallHandle(LINKER.defaultLookup().find("strerror").orElseThrow(),
            FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private OpenAt() {
    }

    /** Opens {@code name} relative to the directory {@code dirFd}; the caller closes the descriptor. */
    static int open(int dirFd, String name, Access access) throws Failure {
        Flags.requireSupported();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment path = arena.allocateFrom(name, Libc.FILE_NAMES);
            while (true) {
                int fd = (int) OPENAT.invokeExact(state, dirFd, path, access.flags, 0666);
                if (fd >= 0) {
                    return fd;
                }
                int errno = Libc.errno(state);
                if (errno != Libc.EINTR) {
                    throw new Failure(name, errno, describe(errno));
                }
            }
        } catch (Failure | RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    /** Closes a descriptor {@link #open} returned; a second close of it would be a bug. */
    static void close(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    /**
     * The descriptor as a path: the kernel resolves it to the open inode itself, not to a name, so
     * what Java opens or stats through it is what was opened, even if the name was swapped since.
     */
    static Path path(int fd) {
        return Path.of("/proc/self/fd/" + fd);
    }

    private static String describe(int errno) {
        try {
            return ((MemorySegment) STRERROR.invokeExact(errno)).reinterpret(256).getString(0);
        } catch (Throwable e) {
            return "errno " + errno;
        }
    }

    /** The open(2) flags, whose values differ between x86-64 and arm64. */
    private static final class Flags {
        private static final boolean ARM = System.getProperty("os.arch").equals("aarch64");
        private static final boolean SUPPORTED = System.getProperty("os.name").equals("Linux")
                && (ARM || System.getProperty("os.arch").equals("amd64"));

        static final int O_RDONLY = Libc.O_RDONLY;
        static final int O_WRONLY = 01;
        static final int O_CREAT = 0100;
        static final int O_EXCL = 0200;
        static final int O_NOCTTY = Libc.O_NOCTTY;
        static final int O_APPEND = 02000;
        static final int O_NONBLOCK = Libc.O_NONBLOCK;
        static final int O_DIRECTORY = ARM ? 040000 : 0200000;
        static final int O_NOFOLLOW = ARM ? 0100000 : 0400000;
        static final int O_CLOEXEC = Libc.O_CLOEXEC;
        static final int O_PATH = 010000000;
        /** What every open of a file adds: never wait, never follow, never become our terminal. */
        static final int FILE = O_NONBLOCK | O_NOFOLLOW | O_NOCTTY;

        static void requireSupported() throws Failure {
            if (!SUPPORTED) {
                throw new Failure(null, -1, "file tools need Linux on x86-64 or arm64, not "
                        + System.getProperty("os.name") + " on " + System.getProperty("os.arch"));
            }
        }
    }
}
