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
 * {@code # protected git directory: <real path>} (the script protects no path that holds a control
 * character).
 */
final class ProtectedGitDirectories {

    static final String LINE = "# protected git directory: ";
    /** The override is a few hundred bytes a repository; a file far larger is not one the script wrote. */
    private static final long MOST_BYTES = 64L << 20;

    private ProtectedGitDirectories() {
    }

    private static int indexOf(byte[] bytes, byte wanted, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return bytes.length;
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
        byte[] bytes = Files.readAllBytes(override);
        for (int start = 0, end; start < bytes.length; start = end + 1) {
            end = indexOf(bytes, (byte) '\n', start);
            String line = new String(bytes, start, end - start, StandardCharsets.UTF_8);
            // Lines end at \n only (the script refuses it in a path); a line holding any other
            // control character, or bytes that are not UTF-8, lists nothing: such a repository
            // is reported as not protected, never taken for another.
            if (line.startsWith(LINE) && line.length() > LINE.length() && line.chars().noneMatch(c -> c < 0x20 || c == 0x7f
                    || c == 0xfffd)) {
                directories.add(Path.of(line.substring(LINE.length())));
            }
        }
        return directories;
    }
}
