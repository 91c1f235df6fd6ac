package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The memory cgroup this process is in (in a container: the container's), read for two facts:
 * how many processes its out-of-memory killer has killed so far, and its memory limit. Both
 * cgroup versions: v2's {@code memory.events} ({@code oom_kill N}) and {@code memory.max}; v1's
 * {@code memory.oom_control} ({@code oom_kill N}, kernel 4.13 and later) and
 * {@code memory.limit_in_bytes}. Inside a container the cgroup is mounted at the root of the
 * hierarchy, whatever path {@code /proc/self/cgroup} names, so that path is tried first and the
 * root after it.
 */
final class MemoryCgroup {

    /** This process's, found once. */
    static final MemoryCgroup OWN = find(Path.of("/sys/fs/cgroup"), Path.of("/proc/self/cgroup"));

    /** v1 writes "no limit" as the largest page-aligned count it can hold; anything this large is none. */
    private static final long NO_LIMIT = 1L << 62;

    private static final Pattern OOM_KILL = Pattern.compile("(?m)^oom_kill (\\d+)$");

    private final Path counter;
    private final Path limit;

    MemoryCgroup(Path counter, Path limit) {
        this.counter = counter;
        this.limit = limit;
    }

    /**
     * The cgroup of the process whose {@code /proc/<pid>/cgroup} is {@code membership}, with the
     * hierarchy mounted at {@code mount}; one that reads nothing when neither version is found.
     */
    static MemoryCgroup find(Path mount, Path membership) {
        List<String> lines;
        try {
            lines = Files.readAllLines(membership);
        } catch (IOException e) {
            lines = List.of();
        }
        if (Files.exists(mount.resolve("cgroup.controllers"))) {
            Path directory = within(mount, pathOf(lines, "0::"), "memory.events");
            return new MemoryCgroup(directory.resolve("memory.events"), directory.resolve("memory.max"));
        }
        Path v1 = mount.resolve("memory");
        String path = lines.stream().filter(line -> line.matches("\\d+:([^:]*,)?memory(,[^:]*)?:.*"))
                .map(line -> line.substring(line.indexOf(':', line.indexOf(':') + 1) + 1)).findFirst().orElse("/");
        Path directory = within(v1, path, "memory.oom_control");
        return new MemoryCgroup(directory.resolve("memory.oom_control"), directory.resolve("memory.limit_in_bytes"));
    }

    private static String pathOf(List<String> lines, String prefix) {
        return lines.stream().filter(line -> line.startsWith(prefix)).map(line -> line.substring(prefix.length()))
                .findFirst().orElse("/");
    }

    /** The cgroup's directory: its path under the mount when that holds {@code file}, else the mount's root. */
    private static Path within(Path mount, String path, String file) {
        Path named = mount.resolve(path.replaceFirst("^/+", ""));
        return Files.exists(named.resolve(file)) ? named : mount;
    }

    /** Processes the out-of-memory killer has killed in this cgroup so far; -1 when that cannot be read. */
    long oomKills() {
        String text;
        try {
            text = new String(Files.readAllBytes(counter), StandardCharsets.US_ASCII);
        } catch (IOException unreadable) {
            return -1; // no such file here (outside a memory cgroup, an old kernel)
        }
        Matcher count = OOM_KILL.matcher(text);
        return count.find() ? Long.parseLong(count.group(1)) : -1;
    }

    /** The memory limit in bytes; null when there is none or it cannot be read. */
    Long limitBytes() {
        try {
            String value = Files.readString(limit).strip();
            if (value.equals("max")) {
                return null;
            }
            long bytes = Long.parseLong(value);
            return bytes >= NO_LIMIT ? null : bytes;
        } catch (IOException | NumberFormatException unreadable) {
            return null;
        }
    }
}
