package dev.sandboxmcp;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Marks the server process non-dumpable ({@code prctl(PR_SET_DUMPABLE, 0)}). Commands run as the
 * same user as the server; without this they could read the server's {@code /proc/<pid>/environ}
 * (which holds the token) and {@code /proc/<pid>/mem}. The flag is reset by {@code execve}, so
 * the commands themselves are unaffected.
 */
final class ProcessHardening {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessHardening.class);
    private static final int PR_SET_DUMPABLE = 4;

    private ProcessHardening() {
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
