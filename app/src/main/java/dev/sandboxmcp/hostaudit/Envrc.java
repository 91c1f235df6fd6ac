package dev.sandboxmcp.hostaudit;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What a direnv {@code .envrc} hands to other files of the tree. direnv asks you to allow an
 * {@code .envrc} again when it changes, but not what it loads or puts on your PATH (direnv's
 * stdlib, 2.32): a file read by {@code dotenv}, {@code source_env}, {@code source_up} or bash's
 * {@code source} changes what runs with nothing new to allow, and a directory added by
 * {@code PATH_add}, {@code load_prefix} or a {@code layout}, or the code a {@code use} runs, is
 * the sandbox's to write.
 *
 * <p>Read as simple commands: lines joined at a trailing backslash, comments dropped, split at
 * {@code ;}, {@code &&}, {@code ||} and {@code |}, leading {@code then}, {@code do}, {@code else},
 * braces and {@code !} skipped, quotes around a word removed. A path built at run time (holding
 * {@code $} or a backquote) is reported as such. A command hidden in a function or a string is
 * not found; the {@code .envrc}'s own digest still changes with it.
 */
final class Envrc {

    /** What a statement does with the files it names. */
    enum Kind {
        /** Loads files whose content runs, or sets the environment: {@code dotenv}, {@code source_env}, {@code source}. */
        LOADS,
        /** Looks for a file of this name in every directory above: {@code source_up}. */
        LOADS_FROM_ABOVE,
        /** Puts a directory of the tree on PATH, or runs code from it: {@code PATH_add}, {@code layout}, {@code use}. */
        RUNS_FROM
    }

    /** One statement: its text, what it does, and the paths it names (each as written; empty: none). */
    record Statement(String text, Kind kind, List<String> paths) {
        /** Whether any path is built at run time, so that which file it names is not known here. */
        boolean computed() {
            return paths.stream().anyMatch(path -> path.contains("$") || path.contains("`"));
        }
    }

    private static final Set<String> LEADING = Set.of("then", "do", "else", "{", "}", "(", "!");

    private Envrc() {
    }

    static List<Statement> statements(String text) {
        List<Statement> found = new ArrayList<>();
        for (String line : text.replace("\\\n", " ").split("\n")) {
            for (String command : line.split(";|&&|\\|\\||\\|")) {
                List<String> words = words(command);
                while (!words.isEmpty() && LEADING.contains(words.getFirst())) {
                    words = words.subList(1, words.size());
                }
                if (!words.isEmpty()) {
                    statement(String.join(" ", words), words.getFirst(), words.subList(1, words.size()), found);
                }
            }
        }
        return found;
    }

    private static void statement(String text, String name, List<String> args, List<Statement> found) {
        switch (name) {
            case "dotenv", "dotenv_if_exists" -> found.add(new Statement(text, Kind.LOADS, args.isEmpty() ? List.of(".env") : args));
            case "source_env", "source_env_if_exists", "source", "." -> found.add(new Statement(text, Kind.LOADS,
                    args.isEmpty() ? List.of() : List.of(args.getFirst())));
            case "source_up", "source_up_if_exists" -> found.add(new Statement(text, Kind.LOADS_FROM_ABOVE,
                    List.of(args.isEmpty() ? ".envrc" : args.getFirst())));
            case "PATH_add", "load_prefix" -> found.add(new Statement(text, Kind.RUNS_FROM, args));
            case "path_add" -> found.add(new Statement(text, Kind.RUNS_FROM, args.isEmpty() ? args : args.subList(1, args.size())));
            case "layout", "use" -> found.add(new Statement(text, Kind.RUNS_FROM, List.of()));
            default -> { }
        }
    }

    /** The words of one simple command, a {@code #} word and what follows dropped, quotes around a word removed. */
    private static List<String> words(String command) {
        List<String> words = new ArrayList<>();
        for (String word : command.strip().split("\\s+")) {
            if (word.isEmpty()) {
                continue;
            }
            if (word.startsWith("#")) {
                break;
            }
            boolean quoted = word.length() >= 2 && (word.startsWith("\"") && word.endsWith("\"")
                    || word.startsWith("'") && word.endsWith("'"));
            words.add(quoted ? word.substring(1, word.length() - 1) : word);
        }
        return words;
    }
}
