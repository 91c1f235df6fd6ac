package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

/**
 * The git directories whose config and hooks {@code make up} mounted read-only in the runner, as
 * infra/compose/protect-git.sh lists them in the override it writes: one comment line each,
 * {@code # protected git directory: <real path>} (the script refuses a path with a newline).
 */
final class ProtectedGitDirectories {

    static final String LINE = "# protected git directory: ";
    /** The override is a few hundred bytes a repository; a file far larger is not one the script wrote. */
    private static final long MOST_BYTES = 64L << 20;

    private ProtectedGitDirectories() {
    }

    /** The directories listed in {@code override}; throws when it cannot be read. */
    static Set<Path> read(Path override) throws IOException {
        if (!Files.isRegularFile(override)) {
            throw new IOException("no such file: make up writes it");
        }
        if (Files.size(override) > MOST_BYTES) {
            throw new IOException(override + " is larger than " + (MOST_BYTES >> 20) + " MiB: not an override make up wrote");
        }
        Set<Path> directories = new HashSet<>();
        for (String line : Files.readAllLines(override, StandardCharsets.UTF_8)) {
            if (line.startsWith(LINE) && line.length() > LINE.length()) {
                directories.add(Path.of(line.substring(LINE.length())));
            }
        }
        return directories;
    }
}
