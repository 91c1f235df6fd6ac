package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.Names;

/**
 * One thing under the audited tree that a program on the host would run by itself: the file
 * (relative to the tree), the key or kind of entry, and the command it would run (for a whole
 * file that runs, such as a hook, its content's digest, so that a change is a new finding).
 */
public record Finding(String file, String key, String command) implements Comparable<Finding> {

    /** One line for a terminal; names and commands holding control characters are shown quoted. */
    public String line() {
        return Names.display(file) + ": " + Names.display(key) + ": " + Names.display(command);
    }

    @Override
    public int compareTo(Finding other) {
        int byFile = file.compareTo(other.file);
        if (byFile != 0) {
            return byFile;
        }
        int byKey = key.compareTo(other.key);
        return byKey != 0 ? byKey : command.compareTo(other.command);
    }
}
