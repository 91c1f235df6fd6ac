package dev.sandboxmcp;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A process's state, from /proc. */
public final class ProcStat {

    private ProcStat() {
    }

    /** Whether the process exists and is not a zombie (a zombie is dead and only waits to be reaped). */
    public static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (IOException gone) {
            return false;
        }
    }
}
