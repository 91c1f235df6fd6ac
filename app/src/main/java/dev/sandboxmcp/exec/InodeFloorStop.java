package dev.sandboxmcp.exec;

import java.nio.file.Path;

/**
 * The disk floor's facts for inodes: the filesystem of {@code path} had {@code freeInodes} free,
 * below its floor of {@code floorInodes}. As an {@link Ending.Cause}: the floor stopped the
 * command or job (every one running then: no counter says which process makes files).
 */
public record InodeFloorStop(Path path, long freeInodes, long floorInodes) implements Ending.Cause {
}
