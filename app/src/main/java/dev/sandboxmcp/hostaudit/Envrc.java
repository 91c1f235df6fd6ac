package dev.sandboxmcp.hostaudit;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a direnv {@code .envrc} (or a shell file it loads) hands to other files of the tree.
 * direnv asks you to allow an {@code .envrc} again when it changes, but not what it loads or puts
 * on your PATH (direnv's stdlib, 2.32): a file read by {@code dotenv}, {@code source_env},
 * {@code source_up} or bash's {@code source} changes what runs with nothing new to allow, and a
 * directory added by {@code PATH_add}, {@code load_prefix}, a {@code layout} or a {@code PATH=},
 * or the code a {@code use} or {@code eval} runs, is the sandbox's to write.
 *
 * <p>Read as simple commands: lines joined at a trailing backslash, comments dropped, split at
 * {@code ;}, {@code &&}, {@code ||}, {@code |} and {@code &}, leading keywords ({@code if},
 * {@code then}, {@code builtin} ...), braces, parentheses and assignments skipped, quotes around
 * a word removed, {@code $PWD/} (the {@code .envrc}'s directory while direnv reads it) and
 * {@code $HOME/} taken as such. Any other path built at run time (holding {@code $} or a
 * backquote) is reported as such. A command hidden in a function or a string is not found; the
 * {@code .envrc}'s own digest still changes with it.
 */
final class Envrc {

    /** What a statement does with the files it names. */
    enum Kind {
        /** Loads files whose content runs, or sets the environment: {@code dotenv}, {@code source_env}, {@code source}. */
        LOADS,
        /** Looks for a file of this name in every directory above: {@code source_up}. */
        LOADS_FROM_ABOVE,
        /** Runs a program of the tree by its path ({@code ./setup.sh}). */
        RUNS,
        /** Puts a directory of the tree on PATH, or runs code it computes or finds: {@code PATH_add}, {@code layout}, {@code use}, {@code eval}. */
        RUNS_FROM
    }

    /**
     * One statement: its text, what it does, the paths it names (each as written, {@code $PWD/} and
     * {@code $HOME/} made {@code ""} and {@code ~/}), whether a loaded file is shell that may load
     * more ({@code shell}; its relative paths then taken from its own directory: {@code fromItsDirectory}),
     * and {@code optional} paths that may be missing without a finding.
     */
    record Statement(String text, Kind kind, List<String> paths, boolean shell, boolean fromItsDirectory,
            List<String> optional) {
        Statement(String text, Kind kind, List<String> paths) {
            this(text, kind, paths, false, false, List.of());
        }

        /** Whether any path is built at run time, so that which file it names is not known here. */
        boolean computed() {
            return paths.stream().anyMatch(path -> path.contains("$") || path.contains("`"));
        }
    }

    private static final Set<String> LEADING = Set.of("if", "elif", "while", "until", "then", "do", "else", "{", "}", "(",
            ")", "!", "builtin", "command", "exec", "time", "nohup");
    private static final Pattern ASSIGNMENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*=.*");
    /** What {@code use nix} and {@code use flake} evaluate, from the {@code .envrc}'s directory. */
    private static final List<String> NIX_FILES = List.of("shell.nix", "default.nix", "flake.nix", "flake.lock");

    private Envrc() {
    }

    static List<Statement> statements(String text) {
        List<Statement> found = new ArrayList<>();
        for (String line : text.replace("\\\n", " ").split("\n")) {
            for (String command : line.split(";|&&|\\|\\||\\||&")) {
                List<String> words = words(command);
                int first = 0;
                while (first < words.size() && (LEADING.contains(words.get(first)) || ASSIGNMENT.matcher(words.get(first)).matches())) {
                    if (words.get(first).startsWith("PATH=")) {
                        found.add(new Statement(String.join(" ", words), Kind.RUNS_FROM, List.of()));
                    }
                    first++;
                }
                if (first < words.size()) {
                    List<String> rest = words.subList(first, words.size());
                    statement(String.join(" ", rest), rest.getFirst(), rest.subList(1, rest.size()), found);
                }
            }
        }
        return found;
    }

    private static void statement(String text, String name, List<String> args, List<Statement> found) {
        List<String> paths = args.stream().map(Envrc::known).toList();
        switch (name) {
            case "dotenv", "dotenv_if_exists" -> found.add(new Statement(text, Kind.LOADS, paths.isEmpty() ? List.of(".env") : paths));
            case "source", "." -> found.add(new Statement(text, Kind.LOADS, first(paths), true, false, List.of()));
            case "source_env", "source_env_if_exists" -> found.add(new Statement(text, Kind.LOADS, first(paths), true, true,
                    List.of()));
            case "source_up", "source_up_if_exists" -> found.add(new Statement(text, Kind.LOADS_FROM_ABOVE,
                    List.of(paths.isEmpty() ? ".envrc" : paths.getFirst()), true, true, List.of()));
            case "PATH_add", "load_prefix" -> found.add(new Statement(text, Kind.RUNS_FROM, paths));
            case "path_add" -> found.add(new Statement(text, Kind.RUNS_FROM, paths.isEmpty() ? paths : paths.subList(1, paths.size())));
            case "layout", "eval" -> found.add(new Statement(text, Kind.RUNS_FROM, List.of()));
            case "use" -> {
                found.add(new Statement(text, Kind.RUNS_FROM, List.of()));
                if (!args.isEmpty() && (args.getFirst().equals("nix") || args.getFirst().equals("flake"))) {
                    found.add(new Statement(text, Kind.LOADS, NIX_FILES, false, false, NIX_FILES));
                }
            }
            case "export" -> {
                if (args.stream().anyMatch(arg -> arg.startsWith("PATH="))) {
                    found.add(new Statement(text, Kind.RUNS_FROM, List.of()));
                }
            }
            default -> {
                if (name.contains("/")) {
                    found.add(new Statement(text, Kind.RUNS, List.of(known(name))));
                }
            }
        }
    }

    private static List<String> first(List<String> paths) {
        return paths.isEmpty() ? List.of() : List.of(paths.getFirst());
    }

    /** {@code $PWD/x} is {@code x} (direnv reads an {@code .envrc} in its directory), {@code $HOME/x} is {@code ~/x}. */
    private static String known(String path) {
        for (String pwd : List.of("$PWD/", "${PWD}/")) {
            if (path.startsWith(pwd)) {
                return path.substring(pwd.length());
            }
        }
        for (String home : List.of("$HOME/", "${HOME}/")) {
            if (path.startsWith(home)) {
                return "~/" + path.substring(home.length());
            }
        }
        return path;
    }

    /** The words of one simple command, a {@code #} word and what follows dropped, quotes, parentheses and braces around a word removed. */
    private static List<String> words(String command) {
        List<String> words = new ArrayList<>();
        for (String word : command.strip().split("\\s+")) {
            if (word.startsWith("#")) {
                break;
            }
            while (word.length() > 1 && (word.startsWith("(") || word.startsWith("{"))) {
                word = word.substring(1);
            }
            while (word.length() > 1 && (word.endsWith(")") || word.endsWith("}") && !word.contains("${"))) {
                word = word.substring(0, word.length() - 1);
            }
            boolean quoted = word.length() >= 2 && (word.startsWith("\"") && word.endsWith("\"")
                    || word.startsWith("'") && word.endsWith("'"));
            word = quoted ? word.substring(1, word.length() - 1) : word;
            if (!word.isEmpty()) {
                words.add(word);
            }
        }
        return words;
    }
}
