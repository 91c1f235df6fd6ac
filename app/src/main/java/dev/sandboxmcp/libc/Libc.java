package dev.sandboxmcp.libc;

import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * What the direct calls into glibc (through the FFM API: {@code exec/PosixSpawn},
 * {@code exec/Statvfs}, {@code workspace/OpenAt}, {@code runner/Flock}) share: the constants
 * they all pass or compare, whose values are the same on x86-64 and arm64 (those that differ stay
 * with their one user), how a path is encoded, and errno as the linker captures it. Each downcall
 * stays with the class that makes it.
 *
 * <p>A downcall that reports errno is linked with {@link #CAPTURE_ERRNO}; it then takes a segment
 * of {@link #CALL_STATE} as its first argument, which {@link #errno} reads after the call.
 */
public final class Libc {

    public static final int O_RDONLY = 0;
    public static final int O_NOCTTY = 0400;
    public static final int O_NONBLOCK = 04000;
    public static final int O_CLOEXEC = 02000000;
    public static final int EINTR = 4;
    /** How the JDK encodes a path for a system call: a path passed so names what Java's own calls name. */
    public static final Charset FILE_NAMES =
            Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"), StandardCharsets.UTF_8);

    /** The linker option that has a downcall capture errno into its first argument. */
    public static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
    /** The layout of what a downcall captures: allocate one for each call (or thread) that reads errno. */
    public static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private Libc() {
    }

    /** The errno the last downcall given {@code state} captured. */
    public static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }
}
