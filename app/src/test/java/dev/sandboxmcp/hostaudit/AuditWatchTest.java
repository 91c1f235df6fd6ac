package dev.sandboxmcp.hostaudit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The watcher from the user's side: a planting is reported once, within seconds, to its output and its log. */
class AuditWatchTest {

    @TempDir
    Path temp;

    @Test
    void aPlantingIsReportedOnceWithinSecondsAndAcceptedOnesAreNot() throws Exception {
        Path tree = Files.createDirectories(temp.resolve("dev"));
        Path repo = Files.createDirectories(tree.resolve("repo"));
        TreeAuditTest.git(repo, "init", "-q");
        TreeAuditTest.git(repo, "config", "core.pager", "less -R; true");
        Path baseline = Baseline.location(tree.toRealPath(), Map.of("XDG_STATE_HOME", temp.resolve("state").toString()));
        Baseline.save(baseline, tree.toRealPath(), TreeAudit.run(tree, "git").findings()); // the pager is accepted
        Path log = AuditWatch.logFile(baseline);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        AtomicBoolean keepGoing = new AtomicBoolean(true);
        AuditWatch watch = new AuditWatch(tree.toRealPath(), baseline, null, null, log, out);
        Thread watcher = Thread.ofPlatform().start(() -> {
            try {
                watch.run(Duration.ofMillis(500), keepGoing::get);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            TimeUnit.SECONDS.sleep(1);
            TreeAuditTest.git(repo, "config", "core.fsmonitor", "touch /tmp/planted");
            long planted = System.nanoTime();
            String line = "new    repo/.git/config: core.fsmonitor: touch /tmp/planted";
            while (!bytes.toString(StandardCharsets.UTF_8).contains(line)
                    && System.nanoTime() - planted < TimeUnit.SECONDS.toNanos(10)) {
                TimeUnit.MILLISECONDS.sleep(50);
            }
            System.out.println("reported after " + (System.nanoTime() - planted) / 1_000_000 + " ms");
            assertThat(bytes.toString(StandardCharsets.UTF_8)).contains(line);
            TimeUnit.MILLISECONDS.sleep(1500); // three more rounds: still reported once
        } finally {
            keepGoing.set(false);
            watcher.join(10_000);
        }
        String output = bytes.toString(StandardCharsets.UTF_8);
        assertThat(output.lines().filter(l -> l.contains("core.fsmonitor"))).hasSize(1);
        assertThat(output).doesNotContain("core.pager").contains("watching " + tree.toRealPath());
        assertThat(Files.readString(log)).isEqualTo(output);
    }
}
