package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the server sees of the runner's lock: flocks, of this process or another, read-only opens. */
class FlockTest {

    @TempDir
    Path dir;

    @Test
    void aSharedFlockIsSeenUntilItsHolderLetsGo() throws Exception {
        Path file = Files.createFile(dir.resolve("runner.lock"));
        assertThat(Flock.held(file)).isFalse();
        assertThat(Flock.held(file)).as("looking took and released it").isFalse();
        try (Flock.Held first = Flock.holdShared(file); Flock.Held second = Flock.holdShared(file)) {
            assertThat(Flock.held(file)).as("another open of this process holds it").isTrue();
            first.close();
            assertThat(Flock.held(file)).as("one shared holder left").isTrue();
        }
        assertThat(Flock.held(file)).isFalse();
    }

    @Test
    void aFlockOfAnotherProcessIsSeenUntilThatProcessEnds() throws Exception {
        Path file = Files.createFile(dir.resolve("runner.lock"));
        // As the runner's init takes it: a shared flock on a descriptor, which outlives the flock utility.
        Process holder = new ProcessBuilder("bash", "-c", "exec 9<\"$1\" && flock -s 9 && echo locked && sleep 2", "-",
                file.toString()).redirectErrorStream(true).start();
        try {
            assertThat(new String(holder.getInputStream().readNBytes(7))).isEqualTo("locked\n");
            assertThat(Flock.held(file)).isTrue();
            assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(Flock.held(file)).as("freed as its holder exited").isFalse();
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void aFileThatCannotBeOpenedIsAnError() throws Exception {
        assertThatThrownBy(() -> Flock.held(dir.resolve("missing"))).isInstanceOf(IOException.class);
        Files.writeString(dir.resolve("read-only"), "");
        assertThat(dir.resolve("read-only").toFile().setReadOnly()).isTrue();
        assertThat(Flock.held(dir.resolve("read-only"))).as("a read-only file: an open for reading is enough").isFalse();
    }
}
