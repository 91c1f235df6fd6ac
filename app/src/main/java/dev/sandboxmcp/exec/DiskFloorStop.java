package dev.sandboxmcp.exec;

import java.nio.file.Path;

/**
 * The disk floor's facts: the filesystem of {@code path} had {@code freeBytes} free (usable by
 * the runner's user), below its floor of {@code floorBytes}. As an {@link Ending.Cause}: the floor
 * stopped the command or job that was writing; {@link DiskFloor#shortfall} gives the same facts
 * for a write that is refused.
 */
public record DiskFloorStop(Path path, long freeBytes, long floorBytes) implements Ending.Cause {
}
