package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The runner's own peak resident size in KiB: what a shell spawned from its address space
 * carries into its peak (the kernel records the old address space's high-water mark at exec).
 * {@code getrusage} gives it for a few microseconds, but as the larger of it and what this
 * process itself inherited that way when it was started (the runner as the server's child
 * process inherits the server's); while that inherited figure is the larger, the mark itself is
 * read from {@code /proc/self/status} ({@code VmHWM}, some hundred microseconds).
 */
final class OwnPeak {

    private static final long INHERITED_KIB = inherited();

    private OwnPeak() {
    }

    static long kib() {
        long peak = PosixSpawn.selfPeakKib();
        return peak > INHERITED_KIB ? peak : highWaterMark();
    }

    /** What getrusage counts beyond the address space's own mark, found once; 0 when nothing. */
    private static long inherited() {
        long rusage = PosixSpawn.available() ? PosixSpawn.selfPeakKib() : 0;
        return rusage > highWaterMark() ? rusage : 0;
    }

    private static long highWaterMark() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.substring("VmHWM:".length()).replace("kB", "").strip());
                }
            }
        } catch (IOException | NumberFormatException unreadable) {
            // no /proc: no bound is taken
        }
        return 0;
    }
}
