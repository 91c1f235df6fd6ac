package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The entries of one git configuration file, as the host's own git reads them
 * ({@code git config --file - --no-includes --list -z}, the file's bytes on standard input).
 * Reading it with git, not a parser of our own, means the audit sees exactly what the git that
 * would run the commands sees: the same quoting, continuation lines, comments and case rules, in
 * this git's version, with no room for a file written to be read one way by the audit and another
 * by git. Listing runs nothing.
 *
 * <p>git never opens the file itself: the caller read it through a descriptor that cannot wait
 * (a FIFO swapped in for it is reported, not opened by git), and the whole exchange (writing the
 * bytes, reading the listing, git's exit) has one deadline, after which git is killed. The one
 * exception, {@link #usersValues}, reads the host user's own configuration, which git opens (with
 * the same deadline: an include of it may lead into the tree).
 */
final class GitConfigFile {

    /** One entry; {@code value} is null for a bare key (a boolean true). */
    record Entry(String key, String value) {
    }

    /** git refused the file (git says why); git on the host refuses it the same way, so nothing in it runs. */
    static final class Unreadable extends Exception {
        Unreadable(String why) {
            super(why);
        }
    }

    static final long DEFAULT_TIMEOUT_MILLIS = 30_000;
    /** git's own bound on nested includes (config.c, MAX_INCLUDE_DEPTH). */
    static final int MAX_INCLUDE_DEPTH = 10;
    /** The most of the user's included config files {@link #usersValues} reads: each costs a run of git. */
    static final int MAX_USER_FILES = 64;
    private static final int MAX_LISTING_BYTES = 64 * 1024 * 1024;

    private final HostGit git;
    private final long timeoutMillis;

    GitConfigFile(String git) {
        this(git, DEFAULT_TIMEOUT_MILLIS);
    }

    GitConfigFile(String git, long timeoutMillis) {
        this.git = new HostGit(git);
        this.timeoutMillis = timeoutMillis;
    }

    /** The host's git, as this reads configuration with it. */
    HostGit host() {
        return git;
    }

    /** A value git takes as boolean true (config.c, {@code git_parse_maybe_bool}, or a non-zero number). */
    static boolean isTrue(String value) {
        String lower = value.strip().toLowerCase(java.util.Locale.ROOT);
        if (lower.equals("true") || lower.equals("yes") || lower.equals("on")) {
            return true;
        }
        try {
            return Long.parseLong(lower) != 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    List<Entry> read(byte[] content) throws Unreadable, IOException {
        return parse(git(content, true, "config", "--file", "-", "--no-includes", "--list", "-z"));
    }

    /**
     * Every value of {@code key} the host user's own configuration (system and global) may give a
     * repository: each file's settings, and each include's and includeIf's, followed as if its
     * condition held (which repository it applies to is not known here), to git's depth. Breadth
     * first, each file read once (by its real path) at the shallowest depth it is reached at, so
     * that no long chain to a file hides what a short one reaches; at most {@link #MAX_USER_FILES}
     * files. {@code home}: for {@code ~/} in include paths; null when unknown. A file git refuses
     * is skipped (git on the host refuses to run with it as well); empty values are left out.
     */
    List<String> usersValues(String key, Path home) throws IOException {
        return usersValues(List.of(key), home).get(key);
    }

    /** As {@link #usersValues(String, Path)}, for each of {@code keys} from one reading of the files. */
    java.util.Map<String, List<String>> usersValues(List<String> keys, Path home) throws IOException {
        java.util.Map<String, Set<String>> values = new java.util.LinkedHashMap<>();
        keys.forEach(key -> values.put(key.toLowerCase(java.util.Locale.ROOT), new java.util.LinkedHashSet<>()));
        Set<Path> read = new HashSet<>();
        java.util.ArrayDeque<List<String>> next = new java.util.ArrayDeque<>();
        next.add(List.of("config", "--system"));
        next.add(List.of("config", "--global"));
        for (int depth = 0; depth <= MAX_INCLUDE_DEPTH && !next.isEmpty(); depth++) {
            java.util.ArrayDeque<List<String>> level = next;
            next = new java.util.ArrayDeque<>();
            for (List<String> source : level) {
                for (Path included : entries(source, home, values)) {
                    Path real = realFile(included);
                    if (real != null && read.size() < MAX_USER_FILES && read.add(real)) {
                        next.add(List.of("config", "--file", real.toString()));
                    }
                }
            }
        }
        java.util.Map<String, List<String>> byKey = new java.util.HashMap<>();
        keys.forEach(key -> byKey.put(key, List.copyOf(values.get(key.toLowerCase(java.util.Locale.ROOT)))));
        return byKey;
    }

    /** Adds {@code source}'s values of the keys of {@code values} (lowercase) to them; returns the files it includes. */
    private List<Path> entries(List<String> source, Path home, java.util.Map<String, Set<String>> values)
            throws IOException {
        List<String> args = new ArrayList<>(source);
        args.addAll(List.of("--no-includes", "--show-origin", "--list", "-z"));
        String listing;
        try {
            listing = git(new byte[0], false, args.toArray(String[]::new));
        } catch (Unreadable missingOrRefused) {
            return List.of();
        }
        List<Path> includes = new ArrayList<>();
        // --show-origin -z: "file:<path>\0<key>\n<value>\0" for each entry ("<key>\0" for a bare one).
        String[] pieces = listing.split("\0");
        for (int i = 0; i + 1 < pieces.length; i += 2) {
            String origin = pieces[i];
            int newline = pieces[i + 1].indexOf('\n');
            String name = (newline < 0 ? pieces[i + 1] : pieces[i + 1].substring(0, newline)).toLowerCase(java.util.Locale.ROOT);
            String value = newline < 0 ? "" : pieces[i + 1].substring(newline + 1);
            if (values.containsKey(name)) {
                if (!value.isEmpty()) {
                    values.get(name).add(value);
                }
            } else if ((name.equals("include.path") || name.startsWith("includeif.") && name.endsWith(".path"))
                    && origin.startsWith("file:")) {
                Path included = expanded(Path.of(origin.substring("file:".length())).getParent(), value, home);
                if (included != null) {
                    includes.add(included);
                }
            }
        }
        return includes;
    }

    /** The real path of {@code file} when it is a regular file (never a FIFO, which git would wait on); null otherwise. */
    private static Path realFile(Path file) {
        try {
            Path real = file.toRealPath();
            return java.nio.file.Files.isRegularFile(real) ? real : null;
        } catch (IOException | SecurityException missing) {
            return null;
        }
    }

    /**
     * A config value's path ({@code ~} and {@code ~/} expanded from {@code home} as git does)
     * joined to {@code base} as git joins it: {@code ..} is left for the kernel, which takes it
     * after following the link before it. Null when it names nothing the audit can look at.
     */
    static Path expanded(Path base, String value, Path home) {
        String path = value;
        if (path.equals("~") || path.startsWith("~/")) {
            if (home == null) {
                return null;
            }
            path = home + path.substring(1);
        } else if (path.isEmpty() || path.startsWith("~") || path.startsWith("%(prefix)/")) {
            return null;
        }
        try {
            return base == null ? null : base.resolve(path);
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
    }

    /**
     * Runs git with {@code args}, {@code stdin} on its standard input, from {@code /};
     * {@code isolated}: with neither the system's nor the user's configuration. Returns its
     * output; a non-zero exit is {@link Unreadable} with what git said.
     */
    private String git(byte[] stdin, boolean isolated, String... args) throws Unreadable, IOException {
        HostGit.Result result = git.run(List.of(args), Path.of("/"), isolated ? HostGit.ISOLATED : Map.of(), stdin,
                timeoutMillis, MAX_LISTING_BYTES);
        if (result.exit() != 0) {
            throw new Unreadable(result.stderr().strip());
        }
        return result.stdout();
    }

    /** {@code key\nvalue\0} per entry, or {@code key\0} for a bare key. */
    static List<Entry> parse(String listing) {
        List<Entry> entries = new ArrayList<>();
        for (String record : listing.split("\0")) {
            if (record.isEmpty()) {
                continue;
            }
            int newline = record.indexOf('\n');
            entries.add(newline < 0 ? new Entry(record, null)
                    : new Entry(record.substring(0, newline), record.substring(newline + 1)));
        }
        return entries;
    }
}
