package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code audit [--accept] [--all] <dir>}, run on the host: what under {@code dir} a program on the
 * host would run by itself, compared with what the user accepted before. Exit code 0 when nothing
 * is new, 1 when something is (each new finding printed with its file, key and command), 2 when
 * the audit could not run. {@code --accept} records the findings as the new baseline.
 * {@code --watch [--interval SECONDS]} audits again and again and reports each new finding as it
 * appears ({@link AuditWatch}); it runs until it is stopped. {@code --protected FILE} (the override
 * {@code make up} wrote): each git directory it does not protect is a finding too.
 */
public final class AuditCommand {

    private static final String USAGE = "usage: java -jar sandbox-mcp.jar audit [--accept] [--all] [--protected FILE] <directory>\n"
            + "       java -jar sandbox-mcp.jar audit --watch [--interval SECONDS] [--protected FILE] <directory>";

    private AuditCommand() {
    }

    public static int run(List<String> args, Map<String, String> environment, PrintStream out, PrintStream err) {
        boolean accept = false;
        boolean all = false;
        boolean watch = false;
        Duration interval = AuditWatch.DEFAULT_INTERVAL;
        Path override = null;
        String dir = null;
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            switch (arg) {
                case "--accept" -> accept = true;
                case "--all" -> all = true;
                case "--watch" -> watch = true;
                case "--protected" -> {
                    if (i + 1 >= args.size()) {
                        err.println("sandbox-mcp audit: --protected takes the override make up wrote; " + USAGE);
                        return 2;
                    }
                    override = Path.of(args.get(++i)).toAbsolutePath();
                }
                case "--interval" -> {
                    interval = seconds(i + 1 < args.size() ? args.get(++i) : "");
                    if (interval == null) {
                        err.println("sandbox-mcp audit: --interval takes a number of seconds from 1 to 3600; " + USAGE);
                        return 2;
                    }
                }
                default -> {
                    if (arg.startsWith("-") || dir != null) {
                        err.println("sandbox-mcp audit: unexpected argument '" + arg + "'; " + USAGE);
                        return 2;
                    }
                    dir = arg;
                }
            }
        }
        if (dir == null) {
            err.println("sandbox-mcp audit: no directory given; " + USAGE);
            return 2;
        }
        if (watch && accept) {
            err.println("sandbox-mcp audit: --watch reports, it does not accept; run --accept on its own; " + USAGE);
            return 2;
        }
        try {
            Path tree = Path.of(dir).toRealPath();
            Path baselineFile = Baseline.location(tree, environment);
            if (watch) {
                new AuditWatch(tree, baselineFile, home(environment), override, AuditWatch.logFile(baselineFile), out)
                        .run(interval, () -> true);
                return 0;
            }
            long started = System.nanoTime();
            Path checked = ForgedObjects.checkedFile(baselineFile);
            ForgedObjects.loadChecked(checked);
            TreeAudit.Result result = TreeAudit.run(tree, "git", home(environment), override);
            try {
                ForgedObjects.saveChecked(checked);
            } catch (IOException e) {
                err.println("sandbox-mcp audit: cannot save what was checked to " + checked
                        + " (the next audit checks it again): " + e.getMessage());
            }
            long millis = (System.nanoTime() - started) / 1_000_000;
            Baseline baseline = Baseline.load(baselineFile);
            Set<Finding> known = new HashSet<>(baseline.accepted());
            List<Finding> fresh = result.findings().stream().filter(finding -> !known.contains(finding)).toList();
            out.println("sandbox-mcp audit of " + tree + ": " + result.entries() + " entries in " + millis + " ms; "
                    + result.findings().size() + (result.findings().size() == 1 ? " thing" : " things")
                    + " the host would run by itself, " + fresh.size() + " new"
                    + (baseline.acceptedAt() == null ? " (nothing accepted yet)" : " since " + baseline.acceptedAt()));
            for (Finding finding : all ? result.findings() : fresh) {
                out.println((known.contains(finding) ? "  known  " : "  new    ") + finding.line());
            }
            if (accept) {
                Baseline.save(baselineFile, tree, result.findings());
                out.println("accepted all " + result.findings().size() + " as known: " + baselineFile);
                return 0;
            }
            return fresh.isEmpty() ? 0 : 1;
        } catch (IOException | RuntimeException e) {
            err.println("sandbox-mcp audit: " + e.getMessage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 2;
        }
    }

    /** The host user's home, for the {@code ~/} git expands in include paths and core.hooksPath. */
    static Path home(Map<String, String> environment) {
        String home = environment.get("HOME");
        return home != null && home.startsWith("/") ? Path.of(home) : null;
    }

    private static Duration seconds(String text) {
        try {
            long seconds = Long.parseLong(text);
            return seconds >= 1 && seconds <= 3600 ? Duration.ofSeconds(seconds) : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
