package dev.sandboxmcp.exec;

import dev.sandboxmcp.config.Limits;
import java.io.File;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The free space a filesystem keeps for the rest of the machine: the larger of {@code minBytes}
 * and {@code percent} of its size. Both 0: no floor.
 */
public record DiskFloor(long minBytes, int percent) {

    public static final DiskFloor OFF = new DiskFloor(0, 0);

    /** The floor {@code limits} set. */
    public static DiskFloor of(Limits limits) {
        return new DiskFloor(limits.diskFloorBytes(), limits.diskFloorPercent());
    }

    public boolean off() {
        return minBytes <= 0 && percent <= 0;
    }

    /** The floor of a filesystem of {@code totalBytes}. */
    public long bytesFor(long totalBytes) {
        return Math.max(minBytes, totalBytes / 100 * percent);
    }

    /**
     * The inodes a filesystem of {@code totalBytes} and {@code totalInodes} keeps free: the same
     * share of them as of its bytes (0 with no fixed number of inodes).
     */
    public long inodesFor(long totalBytes, long totalInodes) {
        if (totalBytes <= 0 || totalInodes <= 0) {
            return 0;
        }
        return (long) Math.ceil((double) Math.min(bytesFor(totalBytes), totalBytes) / totalBytes * totalInodes);
    }

    /**
     * Whether writing {@code bytes} more in {@code directory} would leave its filesystem below the
     * floor: the facts for a refusal, or empty when it fits (or there is no floor, or the
     * filesystem cannot be measured: then the write itself says what is wrong).
     */
    public Optional<DiskFloorStop> shortfall(Path directory, long bytes) {
        if (off()) {
            return Optional.empty();
        }
        File file = directory.toFile();
        long total = file.getTotalSpace();
        long free = file.getUsableSpace();
        if (total == 0) {
            return Optional.empty();
        }
        long floor = bytesFor(total);
        return free - bytes < floor ? Optional.of(new DiskFloorStop(directory, free, floor)) : Optional.empty();
    }
}
