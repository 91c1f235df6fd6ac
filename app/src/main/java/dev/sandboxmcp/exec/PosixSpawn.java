package dev.sandboxmcp.exec;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.sandboxmcp.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * glibc's {@code posix_spawn(3)} called directly, for the one thing {@link ProcessBuilder} cannot
 * do without an extra program: start a process as the leader of a new session
 * ({@code POSIX_SPAWN_SETSID}).
 *
 * <p>Why: {@code ProcessBuilder} launches through {@code jspawnhelper}, and a new session then
 * needs {@code setsid(1)}: three programs executed where one suffices, about a third of what a
 * trivial command cost. Here the child is cloned with the session, the descriptors ({@code 0..2}
 * only: every other one is closed, as {@code ProcessBuilder} does), the working directory, an
 * empty signal mask and default signal dispositions, then executes the program directly.
 *
 * <p>Needs glibc 2.34 or later ({@code posix_spawn_file_actions_addclosefrom_np}); where that is
 * missing, {@link #available()} is false and the caller uses {@code ProcessBuilder} and
 * {@code setsid(1)}.
 */
final class PosixSpawn {

    /** A spawned child: its pid and the parent's ends of its pipes (descriptors the caller owns). */
    record Child(long pid, int stdinFd, int stdoutFd, int stderrFd) {
    }

    /** A reaped child: its wait status and what it and the descendants it waited for took. */
    record Reaped(int status, Usage usage) {
    }

    private static final short POSIX_SPAWN_SETSIGDEF = 0x04;
    private static final short POSIX_SPAWN_SETSIGMASK = 0x08;
    private static final short POSIX_SPAWN_SETSID = 0x80;
    private static final int P_PID = 1;
    private static final int WEXITED = 4;
    private static final int P_ALL = 0;
    private static final int WNOHANG = 1;
    private static final int WNOWAIT = 0x01000000;
    private static final int ECHILD = 10;
    private static final int PR_SET_CHILD_SUBREAPER = 36;
    private static final int RUSAGE_SELF = 0;
    /** {@code struct rusage} on LP64 Linux: two timevals, then fourteen longs; {@code siginfo_t}'s si_pid. */
    private static final long RUSAGE_BYTES = 144;
    private static final long RU_MAXRSS = 32;
    private static final long RU_OUBLOCK = 96;
    private static final long SI_PID = 16;
    /** glibc's opaque structures are smaller than this on every architecture it supports. */
    private static final long OPAQUE_BYTES = 1024;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();

    private static final Optional<Functions> FUNCTIONS = Functions.find();

    private PosixSpawn() {
    }

    static boolean available() {
        return FUNCTIONS.isPresent();
    }

    /**
     * Starts {@code argv} (its first element an absolute path) in a new session, in
     * {@code directory}, with exactly {@code environment}. Stdin is a pipe when {@code pipeStdin},
     * else {@code /dev/null}; stderr goes into stdout's pipe when {@code mergeStderr}. A descriptor
     * of the result that the child has no pipe for is -1.
     */
    static Child spawn(List<String> argv, Path directory, Map<String, String> environment, boolean pipeStdin,
            boolean mergeStderr) throws IOException {
        Functions f = FUNCTIONS.orElseThrow(() -> new IOException("posix_spawn with a new session is not available"));
        requireNoNul(argv, "command");
        requireNoNul(List.of(directory.toString()), "working directory");
        List<String> entries = environment.entrySet().stream().map(entry -> entry.getKey() + "=" + entry.getValue()).toList();
        requireNoNul(entries, "environment");
        int[] stdin = pipeStdin ? pipe(f) : null;
        int[] stdout = pipe(f);
        int[] stderr = mergeStderr ? null : pipe(f);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment actions = arena.allocate(OPAQUE_BYTES, 16);
            MemorySegment attributes = arena.allocate(OPAQUE_BYTES, 16);
            check((int) f.actionsInit.invokeExact(actions), "posix_spawn_file_actions_init");
            check((int) f.attributesInit.invokeExact(attributes), "posix_spawnattr_init");
            try {
                if (stdin != null) {
                    check((int) f.addDup2.invokeExact(actions, stdin[0], 0), "adddup2");
                } else {
                    check((int) f.addOpen.invokeExact(actions, 0, arena.allocateFrom("/dev/null"), Libc.O_RDONLY, 0),
                            "addopen");
                }
                check((int) f.addDup2.invokeExact(actions, stdout[1], 1), "adddup2");
                check((int) f.addDup2.invokeExact(actions, mergeStderr ? stdout[1] : stderr[1], 2), "adddup2");
                check((int) f.addCloseFrom.invokeExact(actions, 3), "addclosefrom_np");
                check((int) f.addChdir.invokeExact(actions, arena.allocateFrom(directory.toString(), StandardCharsets.UTF_8)),
                        "addchdir_np");

                MemorySegment signals = arena.allocate(OPAQUE_BYTES, 16);
                check((int) f.sigEmptySet.invokeExact(signals), "sigemptyset");
                check((int) f.setSigMask.invokeExact(attributes, signals), "setsigmask");
                MemorySegment allSignals = arena.allocate(OPAQUE_BYTES, 16);
                check((int) f.sigFillSet.invokeExact(allSignals), "sigfillset");
                check((int) f.setSigDefault.invokeExact(attributes, allSignals), "setsigdefault");
                check((int) f.setFlags.invokeExact(attributes,
                        (short) (POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)), "setflags");

                MemorySegment pid = arena.allocate(JAVA_INT);
                MemorySegment program = arena.allocateFrom(argv.getFirst(), StandardCharsets.UTF_8);
                int error = (int) f.spawn.invokeExact(pid, program, actions, attributes,
                        strings(arena, argv), strings(arena, entries));
                if (error != 0) {
                    throw new IOException("cannot start " + argv.getFirst() + " in " + directory + ": "
                            + describe(error));
                }
                Child child = new Child(pid.get(JAVA_INT, 0), stdin == null ? -1 : stdin[1], stdout[0],
                        stderr == null ? -1 : stderr[0]);
                // The child's ends are its own now; the parent's copies would hide its end of file.
                closeChildEnds(stdin, stdout, stderr);
                stdin = stdout = stderr = null;
                return child;
            } finally {
                int ignored = (int) f.actionsDestroy.invokeExact(actions);
                ignored = (int) f.attributesDestroy.invokeExact(attributes);
            }
        } catch (IOException | RuntimeException | Error e) {
            closeAll(stdin, stdout, stderr);
            throw e;
        } catch (Throwable impossible) {
            closeAll(stdin, stdout, stderr);
            throw new AssertionError(impossible);
        }
    }

    /**
     * Waits until {@code pid}, a child of this process, has exited, and reaps it: its wait status
     * ({@code waitpid(2)}'s) and its usage. The child stays a zombie until then, so its pid cannot
     * be reused by another process while {@code beforeReap} runs (it may still signal the pid safely).
     */
    static Reaped awaitExit(long pid, Runnable beforeReap) throws IOException {
        Functions f = FUNCTIONS.orElseThrow();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment info = arena.allocate(OPAQUE_BYTES, 16);
            while ((int) f.waitid.invokeExact(state, P_PID, (int) pid, info, WEXITED | WNOWAIT) != 0) {
                int errno = Libc.errno(state);
                if (errno != Libc.EINTR) {
                    throw new IOException("waitid(" + pid + "): " + describe(errno));
                }
            }
            beforeReap.run();
            return reap(pid, 0).orElseThrow();
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    /**
     * Reaps {@code pid}, a child of this process, with its usage ({@code wait4(2)}); with
     * {@code WNOHANG} in {@code options}, empty when it has not exited.
     */
    static Optional<Reaped> reap(long pid, int options) throws IOException {
        Functions f = FUNCTIONS.orElseThrow();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment status = arena.allocate(JAVA_INT);
            MemorySegment rusage = arena.allocate(RUSAGE_BYTES, 8);
            int reaped;
            while ((reaped = (int) f.wait4.invokeExact(state, (int) pid, status, options, rusage)) < 0) {
                int errno = Libc.errno(state);
                if (errno != Libc.EINTR) {
                    throw new IOException("wait4(" + pid + "): " + describe(errno));
                }
            }
            if (reaped == 0) {
                return Optional.empty();
            }
            Usage usage = new Usage(micros(rusage, 0), micros(rusage, 16), rusage.get(JAVA_LONG, RU_MAXRSS), false,
                    rusage.get(JAVA_LONG, RU_OUBLOCK) * 512);
            return Optional.of(new Reaped(status.get(JAVA_INT, 0), usage));
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    /** Reaps {@code pid} if it is a child of this process that has exited; empty otherwise. */
    static Optional<Reaped> reapIfExited(long pid) throws IOException {
        return reap(pid, WNOHANG);
    }

    private static long micros(MemorySegment rusage, long timeval) {
        return rusage.get(JAVA_LONG, timeval) * 1_000_000 + rusage.get(JAVA_LONG, timeval + 8);
    }

    /**
     * {@code getrusage(RUSAGE_SELF)}'s peak resident size in KiB: this process's own, or what it
     * inherited at its start when that is larger ({@link OwnPeak}).
     */
    static long selfPeakKib() {
        Functions f = FUNCTIONS.orElseThrow();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment rusage = arena.allocate(RUSAGE_BYTES, 8);
            return (int) f.getrusage.invokeExact(RUSAGE_SELF, rusage) == 0 ? rusage.get(JAVA_LONG, RU_MAXRSS) : 0;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    /**
     * Waits until some child of this process has exited, without reaping it; its pid, or -1 when
     * this process has no child at all.
     */
    static long awaitAnyExited() throws IOException {
        Functions f = FUNCTIONS.orElseThrow();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment info = arena.allocate(OPAQUE_BYTES, 16);
            while ((int) f.waitid.invokeExact(state, P_ALL, 0, info, WEXITED | WNOWAIT) != 0) {
                int errno = Libc.errno(state);
                if (errno == ECHILD) {
                    return -1;
                }
                if (errno != Libc.EINTR) {
                    throw new IOException("waitid(P_ALL): " + describe(errno));
                }
            }
            return info.get(JAVA_INT, SI_PID);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    /**
     * Makes this process the child subreaper of its descendants ({@code PR_SET_CHILD_SUBREAPER}):
     * an orphan among them is re-parented here rather than to the init, and must be reaped here.
     */
    static void becomeSubreaper() throws IOException {
        Functions f = FUNCTIONS.orElseThrow(() -> new IOException("prctl is not available"));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            if ((int) f.prctl.invokeExact(state, PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0) {
                throw new IOException("prctl(PR_SET_CHILD_SUBREAPER): " + describe(Libc.errno(state)));
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    /** Closes a descriptor {@link #spawn} returned. */
    static void close(int fd) {
        if (fd < 0) {
            return;
        }
        try {
            int ignored = (int) FUNCTIONS.orElseThrow().close.invokeExact(fd);
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    private static int[] pipe(Functions f) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(JAVA_INT, 2);
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            if ((int) f.pipe2.invokeExact(state, fds, Libc.O_CLOEXEC) != 0) {
                throw new IOException("cannot create a pipe: " + describe(Libc.errno(state)));
            }
            return new int[] {fds.getAtIndex(JAVA_INT, 0), fds.getAtIndex(JAVA_INT, 1)};
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new AssertionError(impossible);
        }
    }

    private static void closeChildEnds(int[] stdin, int[] stdout, int[] stderr) {
        if (stdin != null) {
            close(stdin[0]);
        }
        close(stdout[1]);
        if (stderr != null) {
            close(stderr[1]);
        }
    }

    private static void closeAll(int[]... pipes) {
        for (int[] pipe : pipes) {
            if (pipe != null) {
                close(pipe[0]);
                close(pipe[1]);
            }
        }
    }

    /** A NULL-terminated array of C strings. */
    private static MemorySegment strings(Arena arena, List<String> values) {
        MemorySegment array = arena.allocate(ADDRESS, values.size() + 1L);
        for (int i = 0; i < values.size(); i++) {
            array.setAtIndex(ADDRESS, i, arena.allocateFrom(values.get(i), StandardCharsets.UTF_8));
        }
        array.setAtIndex(ADDRESS, values.size(), MemorySegment.NULL);
        return array;
    }

    private static String describe(int errno) {
        try {
            return ((MemorySegment) FUNCTIONS.orElseThrow().strerror.invokeExact(errno)).reinterpret(256).getString(0);
        } catch (Throwable e) {
            return "errno " + errno;
        }
    }

    private static void check(int result, String function) throws IOException {
        if (result != 0) {
            throw new IOException(function + " failed: " + describe(result));
        }
    }

    /** A C string ends at its first NUL: one inside would silently cut the command short. */
    private static void requireNoNul(List<String> values, String what) throws IOException {
        for (String value : values) {
            if (value.indexOf('\0') >= 0) {
                throw new IOException("the " + what + " contains a NUL character, which a process cannot be given");
            }
        }
    }


    /** The glibc functions, or none when one of them is missing (too old a glibc, not Linux). */
    private record Functions(MethodHandle spawn, MethodHandle actionsInit, MethodHandle actionsDestroy,
            MethodHandle addDup2, MethodHandle addOpen, MethodHandle addCloseFrom, MethodHandle addChdir,
            MethodHandle attributesInit, MethodHandle attributesDestroy, MethodHandle setFlags,
            MethodHandle setSigMask, MethodHandle setSigDefault, MethodHandle sigEmptySet, MethodHandle sigFillSet,
            MethodHandle pipe2, MethodHandle close, MethodHandle waitid, MethodHandle wait4, MethodHandle prctl,
            MethodHandle getrusage, MethodHandle strerror) {

        static Optional<Functions> find() {
            if (!System.getProperty("os.name").equals("Linux")) {
                return Optional.empty();
            }
            try {
                FunctionDescriptor onePointer = FunctionDescriptor.of(JAVA_INT, ADDRESS);
                FunctionDescriptor twoPointers = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
                return Optional.of(new Functions(
                        handle("posix_spawn", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS,
                                ADDRESS, ADDRESS)),
                        handle("posix_spawn_file_actions_init", onePointer),
                        handle("posix_spawn_file_actions_destroy", onePointer),
                        handle("posix_spawn_file_actions_adddup2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
                                JAVA_INT)),
                        handle("posix_spawn_file_actions_addopen", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
                                ADDRESS, JAVA_INT, JAVA_INT)),
                        handle("posix_spawn_file_actions_addclosefrom_np", FunctionDescriptor.of(JAVA_INT, ADDRESS,
                                JAVA_INT)),
                        handle("posix_spawn_file_actions_addchdir_np", twoPointers),
                        handle("posix_spawnattr_init", onePointer),
                        handle("posix_spawnattr_destroy", onePointer),
                        handle("posix_spawnattr_setflags", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_SHORT)),
                        handle("posix_spawnattr_setsigmask", twoPointers),
                        handle("posix_spawnattr_setsigdefault", twoPointers),
                        handle("sigemptyset", onePointer),
                        handle("sigfillset", onePointer),
                        LINKER.downcallHandle(LIBC.find("pipe2").orElseThrow(),
                                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Libc.CAPTURE_ERRNO),
                        handle("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT)),
                        LINKER.downcallHandle(LIBC.find("waitid").orElseThrow(),
                                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT),
                                Libc.CAPTURE_ERRNO),
                        LINKER.downcallHandle(LIBC.find("wait4").orElseThrow(),
                                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS),
                                Libc.CAPTURE_ERRNO),
                        LINKER.downcallHandle(LIBC.find("prctl").orElseThrow(),
                                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                                Linker.Option.firstVariadicArg(1), Libc.CAPTURE_ERRNO),
                        handle("getrusage", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS)),
                        handle("strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT))));
            } catch (RuntimeException missing) {
                return Optional.empty();
            }
        }

        private static MethodHandle handle(String name, FunctionDescriptor descriptor) {
            return LINKER.downcallHandle(LIBC.find(name).orElseThrow(), descriptor);
        }
    }
}
