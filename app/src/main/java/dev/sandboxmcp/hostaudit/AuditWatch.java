package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * {@code audit --watch}: the audit again and again, each finding that is new (not accepted, not
 * already reported while it stays) printed once with the time it was seen, to standard output
 * (the journal, under systemd) and appended to a log file. A full audit every interval rather
 * than inotify: a repository is planted through paths inotify would have to be watching already
 * (a fresh {@code .git} anywhere in the tree), and a tree of 100,000 files takes well under a
 * second once it is in the page cache. The baseline is read again each round, so that an
 * {@code --accept} elsewhere takes effect at once.
 */
final class AuditWatch {

    /** How often the tree is audited: a planting is reported within this plus one audit's time. */
    static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(2);
    static final Duration SAVE_CHECKED_EVERY = Duration.ofMinutes(10);

    private final Path tree;
    private final Path baselineFile;
    private final Path home;
    /** The override make up wrote, read each round ({@link TreeAudit#run(Path, String, Path, Path)}); null: not checked. */
    private final Path override;
    private final Path log;
    private final PrintStream out;

    AuditWatch(Path tree, Path baselineFile, Path home, Path override, Path log, PrintStream out) {
        this.tree = tree;
        this.baselineFile = baselineFile;
        this.home = home;
        this.override = override;
        this.log = log;
        this.out = out;
    }

    /** Where the watcher of {@code tree} logs: beside its baseline. */
    static Path logFile(Path baselineFile) {
        return baselineFile.resolveSibling(baselineFile.getFileName().toString().replace(".json", "-watch.log"));
    }

    /**
     * Audits every {@code interval} until {@code keepGoing} says stop (for good: never, under
     * systemd). What the object checks keep ({@link ForgedObjects#saveChecked}) is read at the
     * start and saved after the first round and every {@link #SAVE_CHECKED_EVERY} after it.
     */
    void run(Duration interval, BooleanSupplier keepGoing) throws InterruptedException {
        Set<Finding> reported = new HashSet<>();
        report("watching " + tree + " every " + interval.toMillis() + " ms; new findings go to standard output and " + log);
        Path checked = ForgedObjects.checkedFile(baselineFile);
        try {
            ForgedObjects.loadChecked(checked);
        } catch (IOException e) {
            report("cannot read " + checked + " (every object is checked again): " + e.getMessage());
        }
        long savedAt = 0;
        while (keepGoing.getAsBoolean()) {
            try {
                List<Finding> findings = TreeAudit.run(tree, "git", home, override).findings();
                if (savedAt == 0 || System.nanoTime() - savedAt >= SAVE_CHECKED_EVERY.toNanos()) {
                    savedAt = System.nanoTime();
                    try {
                        ForgedObjects.saveChecked(checked);
                    } catch (IOException e) {
                        report("cannot save what was checked to " + checked + " (checked again after a restart): "
                                + e.getMessage());
                    }
                }
                Set<Finding> known = new HashSet<>(Baseline.load(baselineFile).accepted());
                reported.retainAll(new HashSet<>(findings)); // gone: reported again if it comes back
                for (Finding finding : findings) {
                    if (!known.contains(finding) && reported.add(finding)) {
                        report("new    " + finding.line());
                    }
                }
            } catch (IOException | RuntimeException e) {
                report("audit failed: " + e.getMessage());
            }
            Thread.sleep(interval);
        }
    }

    private void report(String line) {
        String stamped = Instant.now().truncatedTo(ChronoUnit.MILLIS) + " " + line;
        out.println(stamped);
        out.flush();
        try {
            Files.createDirectories(log.getParent());
            Files.writeString(log, stamped + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            out.println("sandbox-mcp audit --watch: cannot write " + log + ": " + e.getMessage());
        }
    }
}
