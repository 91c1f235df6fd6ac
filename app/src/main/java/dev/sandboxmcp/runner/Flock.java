package dev.sandboxmcp.runner;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.sandboxmcp.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * {@code flock(2)} on the channel's {@code runner.lock}, called directly: the runner's init (PID 1,
 * bash) holds a shared flock on it for its life with the {@code flock} utility, and Java's own
 * locks ({@code FileChannel.lock}) are POSIX record locks ({@code fcntl}), which on Linux neither
 * see flocks nor are seen by them.
 *
 * <p>A flock belongs to the open file description: it lasts while any descriptor of that open
 * lives (in the init: until it has exited), and two opens conflict even within one process, so
 * a test can stand in for the init with {@link #holdShared}.
 */
public final class Flock {

    /** The same on x86-64 and arm64, as {@link Libc}'s. */
    private static final int LOCK_SH = 1;
    private static final int LOCK_EX = 2;
    private static final int LOCK_NB = 4;
    private static final int LOCK_UN = 8;
    /** EWOULDBLOCK. */
    private static final int EAGAIN = 11;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle OPEN = LINKER.downcallHandle(LINKER.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(2), Libc.CAPTURE_ERRNO);
    private static final MethodHandle FLOCK = LINKER.downcallHandle(LINKER.defaultLookup().find("flock").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Libc.CAPTURE_ERRNO);
    private static final MethodHandle CLOSE = LINKER.downcallHandle(LINKER.defaultLookup().find("close").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    /** A flock this process holds until {@link #close}. */
    public static final class Held implements AutoCloseable {
        private final int fd;
        private boolean closed;

        private Held(int fd) {
            this.fd = fd;
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                Flock.close(fd); // the last descriptor of the open: the lock goes with it
            }
        }
    }

    private Flock() {
    }

    /**
     * Whether some open of {@code file} (in any process, this one included) holds a flock on it:
     * this open's exclusive, non-blocking flock is refused. A free lock is taken for that moment
     * and released at once. Throws when the file cannot be opened.
     */
    public static boolean held(Path file) throws IOException {
        int fd = open(file);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int errno = flock(state, fd, LOCK_EX | LOCK_NB);
            if (errno == 0) {
                flock(state, fd, LOCK_UN); // before the close, in case a fork of this process shares the open
                return false;
            }
            if (errno == EAGAIN) {
                return true;
            }
            throw new IOException("flock(" + file + "): errno " + errno);
        } finally {
            close(fd);
        }
    }

    /** A shared flock on {@code file}, as the runner's init holds it, waiting while an exclusive one is held. */
    public static Held holdShared(Path file) throws IOException {
        int fd = open(file);
        try (Arena arena = Arena.ofConfined()) {
            int errno = flock(arena.allocate(Libc.CALL_STATE), fd, LOCK_SH);
            if (errno != 0) {
                throw new IOException("flock(" + file + ", LOCK_SH): errno " + errno);
            }
            return new Held(fd);
        } catch (IOException | RuntimeException | Error e) {
            close(fd);
            throw e;
        }
    }

    /** Opens {@code file} for reading (the runner's mount of the channel is read-only), never inherited. */
    private static int open(Path file) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment path = arena.allocateFrom(file.toString(), StandardCharsets.UTF_8);
            while (true) {
                int fd = (int) OPEN.invokeExact(state, path, Libc.O_RDONLY | Libc.O_NOCTTY | Libc.O_NONBLOCK | Libc.O_CLOEXEC, 0);
                if (fd >= 0) {
                    return fd;
                }
                int errno = Libc.errno(state);
                if (errno != Libc.EINTR) {
                    throw new IOException("cannot open " + file + " to look at its lock: errno " + errno);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    /** {@code flock(fd, operation)}, again after a signal: 0, or its errno. */
    private static int flock(MemorySegment state, int fd, int operation) {
        try {
            while (true) {
                if ((int) FLOCK.invokeExact(state, fd, operation) == 0) {
                    return 0;
                }
                int errno = Libc.errno(state);
                if (errno != Libc.EINTR) {
                    return errno;
                }
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    private static void close(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }
}
