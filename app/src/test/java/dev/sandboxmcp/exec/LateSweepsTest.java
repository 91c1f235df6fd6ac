package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sweeps after a call: trees due together share one scan of /proc, and what a scan finds of
 * any of them is killed, in its session or by its marker after it left the session.
 */
class LateSweepsTest {

    @TempDir
    Path dir;

    static final Map<String, String> ENV = Map.of("PATH", System.getenv("PATH"));

    /** A shell that leaves one process in its session and one in a session of its own (marked), then exits. */
    SessionShell.Started leaving() throws Exception {
        SessionShell.Started shell = SessionShell.start("sleep 300 & setsid sleep 300 & sleep 0.3", dir, ENV, false, false);
        assertThat(shell.process().waitFor()).isZero();
        return shell;
    }

    @Test
    void oneScanFindsTheMembersOfEveryTree() throws Exception {
        List<SessionShell.Started> shells = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            shells.add(leaving());
        }
        try {
            Map<ProcessTree, Set<Long>> members = ProcessTree.liveMembers(shells.stream().map(SessionShell.Started::tree)
                    .toList());
            for (SessionShell.Started shell : shells) {
                assertThat(members.get(shell.tree())).as("the session's sleep and the marked one").hasSize(2)
                        .isEqualTo(shell.tree().liveMembers());
            }
        } finally {
            shells.forEach(shell -> shell.tree().terminate(Duration.ZERO));
        }
    }

    @Test
    void treesAddedTogetherAreSweptAndTheirLeftoversKilled() throws Exception {
        LateSweeps late = new LateSweeps();
        List<SessionShell.Started> shells = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                SessionShell.Started shell = leaving();
                shells.add(shell);
                late.add(shell.tree(), Duration.ofMillis(100));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (shells.stream().anyMatch(shell -> !shell.tree().liveMembers().isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            for (SessionShell.Started shell : shells) {
                assertThat(shell.tree().liveMembers()).as("left over, after the late sweeps").isEmpty();
            }
        } finally {
            shells.forEach(shell -> shell.tree().terminate(Duration.ZERO));
        }
    }
}
