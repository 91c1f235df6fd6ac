package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher's systemd user unit as {@code make watch-install} writes it (infra/host/watch-unit.sh,
 * for a workspace whose path holds a space, a % and a $): systemd-analyze accepts it, and its
 * ExecStart, run as systemd would split it, reports a planting within 10 seconds. systemctl is a
 * stand-in that records its calls: the machine that runs the tests has no user session manager.
 */
class WatchUnitTest {

    @TempDir
    Path temp;

    @Test
    void installWritesAUnitWhoseCommandReportsAPlantingAndUninstallRemovesIt() throws Exception {
        Path workspace = Files.createDirectories(temp.resolve("my dev %i $HOME"));
        Path units = temp.resolve("units");
        Path calls = temp.resolve("calls");
        Path systemctl = temp.resolve("systemctl");
        Files.writeString(systemctl, "#!/bin/sh\necho \"$@\" >> '" + calls + "'\n");
        Files.setPosixFilePermissions(systemctl, PosixFilePermissions.fromString("rwx------"));
        Map<String, String> env = Map.of("SYSTEMCTL", systemctl.toString(), "SYSTEMD_USER_DIR", units.toString(),
                "SANDBOX_WATCH_DIR", temp.resolve("data").toString(), "XDG_STATE_HOME", temp.resolve("state").toString());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Commands.Result install = Commands.run(List.of(Repo.path("infra/host/watch-unit.sh").toString(), "install", java,
                Repo.path("app/target/sandbox-mcp.jar").toString(), workspace.toString()), env, Repo.root(), 60);
        assertThat(install.exitCode()).as(install.output()).isZero();
        Path unit = units.resolve("sandbox-mcp-audit-watch.service");
        assertThat(Files.readString(calls)).isEqualTo("--user daemon-reload\n"
                + "--user enable --now sandbox-mcp-audit-watch.service\n--user restart sandbox-mcp-audit-watch.service\n");
        Commands.Result verify = Commands.run(List.of("systemd-analyze", "verify", unit.toString()), Map.of(), temp, 60);
        assertThat(verify.exitCode()).as(verify.output()).isZero();

        String execStart = Files.readAllLines(unit).stream().filter(l -> l.startsWith("ExecStart=")).findFirst().orElseThrow();
        List<String> command = systemdWords(execStart.substring("ExecStart=".length()));
        assertThat(command.getLast()).isEqualTo(workspace.toRealPath().toString());
        assertThat(Files.readString(unit)).contains("Environment=\"XDG_STATE_HOME=" + temp.resolve("state") + "\"");
        Path out = temp.resolve("watch.out");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        builder.environment().put("XDG_STATE_HOME", temp.resolve("state").toString()); // the unit's Environment=
        Process watcher = builder.start();
        try {
            long started = System.nanoTime();
            while (!Files.readString(out).contains("watching ") && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(30)) {
                TimeUnit.MILLISECONDS.sleep(100);
            }
            Path repo = Files.createDirectories(workspace.resolve("planted"));
            ProtectGitScriptTest.git(repo, "init", "-q");
            ProtectGitScriptTest.git(repo, "config", "core.fsmonitor", "touch /tmp/planted");
            long planted = System.nanoTime();
            while (!Files.readString(out).contains("new    planted/.git/config: core.fsmonitor: touch /tmp/planted")
                    && System.nanoTime() - planted < TimeUnit.SECONDS.toNanos(10)) {
                TimeUnit.MILLISECONDS.sleep(100);
            }
            assertThat(Files.readString(out)).as("reported within 10 s").contains("new    planted/.git/config: core.fsmonitor");
        } finally {
            watcher.destroy();
            watcher.waitFor(10, TimeUnit.SECONDS);
        }

        Commands.Result uninstall = Commands.run(List.of(Repo.path("infra/host/watch-unit.sh").toString(), "uninstall"), env,
                Repo.root(), 60);
        assertThat(uninstall.exitCode()).as(uninstall.output()).isZero();
        assertThat(unit).doesNotExist();
        assertThat(Files.readString(calls))
                .endsWith("--user disable --now sandbox-mcp-audit-watch.service\n--user daemon-reload\n");
    }

    /** A command line as systemd splits it: double-quoted words with \ escapes, %% for %, $$ for $. */
    static List<String> systemdWords(String line) {
        List<String> words = new ArrayList<>();
        Matcher m = Pattern.compile("\"((?:\\\\.|[^\"\\\\])*)\"|(\\S+)").matcher(line);
        while (m.find()) {
            String word = m.group(1) != null ? m.group(1).replaceAll("\\\\(.)", "$1") : m.group(2);
            words.add(word.replace("%%", "%").replace("$$", "$"));
        }
        return words;
    }
}
