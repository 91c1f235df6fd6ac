package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code audit [--accept] [--all] <dir>}, run on the host: what under {@code dir} a program on the
 * host would run by itself, compared with what the user accepted before. Exit code 0 when nothing
 * is new, 1 when something is (each new finding printed with its file, key and command), 2 when
 * the audit could not run. {@code --accept} records the findings as the new baseline.
 */
public final class AuditCommand {

    private static final String USAGE = "usage: java -jar sandbox-mcp.jar audit [--accept] [--all] <directory>";

    private AuditCommand() {
    }

    public static int run(List<String> args, Map<String, String> environment, PrintStream out, PrintStream err) {
        boolean accept = false;
        boolean all = false;
        String dir = null;
        for (String arg : args) {
            switch (arg) {
                case "--accept" -> accept = true;
                case "--all" -> all = true;
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
        try {
            Path tree = Path.of(dir).toRealPath();
            Path baselineFile = Baseline.location(tree, environment);
            long started = System.nanoTime();
            TreeAudit.Result result = TreeAudit.run(tree, "git");
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
        }
    }
}
