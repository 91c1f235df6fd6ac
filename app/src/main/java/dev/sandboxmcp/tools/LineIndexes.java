package dev.sandboxmcp.tools;

import java.nio.file.attribute.FileTime;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The line indexes of the files paged most recently, a few at most. A file is known by its
 * identity (device and inode), size, modification time and status-change time, so a file that is
 * appended to, truncated, rewritten (even to the same size, its modification time set back) or
 * replaced by another gets a fresh index.
 */
final class LineIndexes {

    static final int FILES = 8;

    record FileVersion(Object fileKey, long size, FileTime modified, FileTime changed) {
    }

    private final Map<FileVersion, LineIndex> recent = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<FileVersion, LineIndex> eldest) {
            return size() > FILES;
        }
    };

    synchronized LineIndex of(FileVersion version) {
        return recent.computeIfAbsent(version, ignored -> new LineIndex());
    }

    synchronized int size() {
        return recent.size();
    }
}
