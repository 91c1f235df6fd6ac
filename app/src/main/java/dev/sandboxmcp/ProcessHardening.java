package dev.sandboxmcp;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the token out of reach of the commands, which run as the same user as the server.
 *
 * <p>The process is marked non-dumpable ({@code prctl(PR_SET_DUMPABLE, 0)}), so an unprivileged
 * command can no longer open the server's {@code /proc/<pid>/environ} or {@code /proc/<pid>/mem};
 * {@code execve} resets the flag, so commands themselves are unaffected. A privileged process
 * (root, or one holding CAP_SYS_PTRACE, as when the jar runs as root outside the container) can
 * still open them, so the secret's value is also overwritten in the process's own copy of its
 * initial environment, which is what {@code /proc/<pid>/environ} shows.
 */
final class ProcessHardening {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessHardening.class);
    private static final int PR_SET_DUMPABLE = 4;

    private ProcessHardening() {
    }

    /** Overwrites the values of {@code names} in this process's initial environment block with NULs. */
    static boolean scrubInitialEnvironment(Collection<String> names) {
        if (names.isEmpty()) {
            return true;
        }
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.ISO_8859_1);
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // proc(5): field 50 is env_start, 51 env_end; fields[0] is field 3.
            long start = Long.parseLong(fields[50 - 3]);
            long end = Long.parseLong(fields[51 - 3]);
            try (RandomAccessFile memory = new RandomAccessFile("/proc/self/mem", "rw")) {
                byte[] block = new byte[Math.toIntExact(end - start)];
                memory.seek(start);
                memory.readFully(block);
                for (String name : names) {
                    blankValue(memory, start, block, (name + "=").getBytes(StandardCharsets.ISO_8859_1));
                }
            }
            return true;
        } catch (IOException | RuntimeException e) {
            LOG.warn("could not scrub {} from /proc/self/environ ({})", names, e.toString());
            return false;
        }
    }

    private static void blankValue(RandomAccessFile memory, long start, byte[] block, byte[] prefix) throws IOException {
        for (int entry = 0; entry < block.length; ) {
            int next = entry;
            while (next < block.length && block[next] != 0) {
                next++;
            }
            if (next - entry >= prefix.length && Arrays.equals(block, entry, entry + prefix.length, prefix, 0, prefix.length)) {
                memory.seek(start + entry + prefix.length);
                memory.write(new byte[next - entry - prefix.length]);
            }
            entry = next + 1;
        }
    }

    static boolean disableDumpable() {
        try {
            Linker linker = Linker.nativeLinker();
            MethodHandle prctl = linker.downcallHandle(
                    linker.defaultLookup().find("prctl").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG),
                    Linker.Option.firstVariadicArg(1));
            int result = (int) prctl.invokeExact(PR_SET_DUMPABLE, 0L);
            if (result != 0) {
                LOG.warn("prctl(PR_SET_DUMPABLE, 0) failed; commands may read the server's /proc entries");
                return false;
            }
            return true;
        } catch (Throwable e) {
            LOG.warn("could not mark the process non-dumpable ({}); commands may read the server's /proc entries",
                    e.toString());
            return false;
        }
    }
}
