package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** infra/host/deps.sh, the README's `make deps`, run for real on this host. */
class DepsScriptTest {

    @TempDir
    Path dir;

    /** The links of {@link #pathWithout}, removed here so that JUnit's clean-up has none to warn of. */
    @AfterEach
    void removeLinks() throws IOException {
        Path bin = dir.resolve("bin");
        if (Files.isDirectory(bin)) {
            try (Stream<Path> links = Files.list(bin)) {
                for (Path link : links.toList()) {
                    Files.delete(link);
                }
            }
        }
    }

    static Commands.Result deps(Map<String, String> env, String... flags) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", Repo.path("infra/host/deps.sh").toString()));
        command.addAll(List.of(flags));
        return Commands.run(command, env, Repo.root(), 300);
    }

    static String lastLine(Commands.Result result) {
        List<String> lines = result.output().lines().toList();
        return lines.getLast();
    }

    /** A PATH directory with links to every program on this PATH but the ones left out. */
    Path pathWithout(Set<String> leftOut) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        for (String entry : System.getenv("PATH").split(File.pathSeparator)) {
            Path directory = Path.of(entry);
            if (!Files.isDirectory(directory)) {
                continue;
            }
            try (Stream<Path> programs = Files.list(directory)) {
                for (Path program : programs.toList()) {
                    Path link = bin.resolve(program.getFileName().toString());
                    if (!leftOut.contains(program.getFileName().toString()) && Files.isExecutable(program)
                            && !Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                        Files.createSymbolicLink(link, program);
                    }
                }
            }
        }
        return bin;
    }

    @Test
    void aSecondRunInstallsNothingAndSaysSo() throws Exception {
        Commands.Result first = deps(Map.of(), "--tests", "--no-daemon");
        boolean root = "0".equals(Commands.run(List.of("id", "-u"), 10).output().strip());
        assumeTrue(first.exitCode() == 0 || root, "SKIPPED: this host lacks something deps.sh would install and this "
                + "test is not root (run make deps-test first):\n" + first.output());
        assertThat(first.exitCode()).as(first.output()).isZero();

        Commands.Result second = deps(Map.of(), "--tests", "--no-daemon");
        assertThat(second.exitCode()).as(second.output()).isZero();
        assertThat(second.output()).contains("deps: nothing to install").doesNotContain("installing");
        assertThat(lastLine(second)).startsWith("deps: ready: ").contains("Java 25 (").endsWith("; nothing missing");
    }

    @Test
    void withoutAJdkItNamesWhatToInstallAndHowToPointJavaHomeAtIt() throws Exception {
        Path noJdks = Files.createDirectories(dir.resolve("jvm"));
        Path notAJdk = Files.createDirectories(dir.resolve("jdk-17-somewhere"));
        Map<String, String> env = new HashMap<>(Map.of("SANDBOX_JDK_DIRS", noJdks.toString(),
                "JAVA_HOME", notAJdk.toString(), "PATH", pathWithout(Set.of("java", "javac", "jlink")).toString()));

        // --check: where the distribution packages openjdk-25-jdk, a real run would install it.
        Commands.Result result = deps(env, "--check", "--no-daemon");

        assertThat(result.exitCode()).as(result.output()).isEqualTo(1);
        assertThat(result.output())
                .contains("JAVA_HOME=" + notAJdk + " is not a Java 25 JDK")
                .contains("no Java 25 JDK (java, javac and jlink of version 25)")
                .contains("Temurin 25")
                .contains("export JAVA_HOME=");
        assertThat(lastLine(result)).contains("NOT ready: a Java 25 JDK");
    }

    @Test
    void onASystemItDoesNotKnowItInstallsNothingAndSaysWhatIsMissing() throws Exception {
        Path osRelease = Files.writeString(dir.resolve("os-release"),
                "ID=fedora\nVERSION_ID=40\nPRETTY_NAME=\"Fedora Linux 40\"\n");
        Map<String, String> env = Map.of("SANDBOX_OS_RELEASE", osRelease.toString(),
                "PATH", pathWithout(Set.of("mmdebstrap")).toString());

        Commands.Result result = deps(env, "--no-daemon");

        assertThat(result.exitCode()).as(result.output()).isEqualTo(2);
        assertThat(result.output())
                .contains("this system (Fedora Linux 40) is not one this script knows")
                .contains("missing: mmdebstrap (the base images)")
                .contains("docs/install.md")
                .doesNotContain("installing");
    }
}
