package dev.sandboxmcp.exec;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's peak resident size ({@code VmHWM}), which a child spawned from its address
 * space carries into its own peak: reset to the current size before a spawn
 * ({@code /proc/self/clear_refs}, 5), read after it, it is what the child carried.
 */
final class SelfMemory {

    private static final Path STATUS = Path.of("/proc/self/status");

    private SelfMemory() {
    }

    static void resetPeak() {
        try (FileOutputStream clear = new FileOutputStream("/proc/self/clear_refs")) {
            clear.write('5');
        } catch (IOException unsupported) {
            // the peak stays the highest so far: a larger bound, still a bound
        }
    }

    /** The peak in KiB; 0 when it cannot be read (then no peak is taken for a bound). */
    static long peakKib() {
        try {
            for (String line : Files.readAllLines(STATUS, StandardCharsets.US_ASCII)) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.substring("VmHWM:".length()).replace("kB", "").strip());
                }
            }
        } catch (IOException | NumberFormatException unreadable) {
            // not Linux, or no /proc
        }
        return 0;
    }
}
