package dev.sandboxmcp.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A temporary directory the bench fills (a 100,000-file directory, a 1 GB file) and removes when
 * closed, whatever happened in between: left behind after each run, these trees ran the machine out
 * of inodes.
 */
record TempTree(Path path) implements AutoCloseable {

    static TempTree create(String prefix) throws IOException {
        return new TempTree(Files.createTempDirectory(prefix));
    }

    Path resolve(String name) {
        return path.resolve(name);
    }

    /** Removes the tree; what could not be removed is named on standard error, not kept quiet. */
    @Override
    public void close() {
        try (Stream<Path> paths = Files.walk(path)) {
            paths.sorted(Comparator.reverseOrder()).forEach(TempTree::delete);
        } catch (IOException | UncheckedIOException e) {
            System.err.println("bench: could not remove " + path + ": " + e.getMessage());
        }
    }

    private static void delete(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
