package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What the idle sweep kills. Outside a container no process has a parent outside the PID
 * namespace, so what it spares is decided here on snapshots written out, and tried for real in
 * the e2e {@code RunnerHealthTest}; what it kills is tried here on real escaped processes too.
 */
class IdleSweepTest {

    private static final long RUNNER = 7;

    @TempDir
    Path dir;
    private final List<Long> started = new ArrayList<>();
    /** Process groups to kill whole: a fork chain outruns a kill of its pids. */
    private final List<Long> groups = new ArrayList<>();

    @AfterEach
    void killWhatWasStarted() throws Exception {
        killGroups();
        started.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    private void killGroups() throws Exception {
        for (long group : groups) {
            startWhenAPidIsFree(new ProcessBuilder("kill", "-KILL", "--", "-" + group)).waitFor();
        }
        groups.clear();
    }

    /** A container: the init (ppid 0), the runner under it, and what the test adds. */
    private static Map<Long, ProcStat> container() {
        Map<Long, ProcStat> processes = new HashMap<>();
        processes.put(1L, new ProcStat('S', 0, 1, 100));
        processes.put(RUNNER, new ProcStat('S', 1, 1, 110));
        return processes;
    }

    @Test
    void sparesTheInitTheRunnerAndWhatDockerExecEnteredWithItsDescendants() {
        Map<Long, ProcStat> processes = container();
        processes.put(40L, new ProcStat('S', 0, 40, 500)); // docker exec sh
        processes.put(41L, new ProcStat('S', 40, 40, 501)); // its child
        processes.put(42L, new ProcStat('S', 41, 42, 502)); // a grandchild in a session of its own
        processes.put(50L, new ProcStat('S', 0, 50, 600)); // Docker's health check
        processes.put(51L, new ProcStat('R', 50, 50, 600)); // its nc, started in the same tick
        assertThat(IdleSweep.leftovers(processes, RUNNER)).isEmpty();
    }

    @Test
    void killsEveryOrphanOfTheInitWhateverItsSessionNameOrEnvironment() {
        Map<Long, ProcStat> processes = container();
        processes.put(20L, new ProcStat('S', 1, 20, 300)); // setsid
        processes.put(21L, new ProcStat('S', 1, 7, 301)); // double fork, still in a command's session
        processes.put(22L, new ProcStat('S', 21, 7, 302)); // its child
        processes.put(23L, new ProcStat('R', RUNNER, 23, 303)); // a child of the runner itself
        assertThat(IdleSweep.leftovers(processes, RUNNER)).containsExactlyInAnyOrder(20L, 21L, 22L, 23L);
    }

    @Test
    void whatAnOperatorsSessionLeavesBehindWhenItEndsIsSwept() {
        Map<Long, ProcStat> processes = container();
        processes.put(41L, new ProcStat('S', 1, 40, 501)); // the exec'd shell is gone: reparented to the init
        assertThat(IdleSweep.leftovers(processes, RUNNER)).containsExactly(41L);
    }

    @Test
    void aLinkThatCannotBeTrustedSparesNothing() {
        Map<Long, ProcStat> processes = container();
        // Its parent's pid now belongs to a docker exec process that started after it: a reused pid.
        processes.put(60L, new ProcStat('S', 0, 60, 900));
        processes.put(30L, new ProcStat('S', 60, 30, 400));
        // Its parent left the snapshot while it was read.
        processes.put(31L, new ProcStat('S', 99, 31, 400));
        // Its parent is a zombie: it was reparented after the read.
        processes.put(70L, new ProcStat('Z', 0, 70, 350));
        processes.put(32L, new ProcStat('S', 70, 32, 400));
        // Its parent is being released, when the kernel shows ppid and session 0 (and maybe a live state).
        processes.put(80L, new ProcStat('R', 0, 0, 360));
        processes.put(33L, new ProcStat('S', 80, 33, 400));
        // A loop only a torn snapshot can show.
        processes.put(34L, new ProcStat('S', 35, 34, 400));
        processes.put(35L, new ProcStat('S', 34, 34, 400));
        assertThat(IdleSweep.leftovers(processes, RUNNER)).contains(30L, 31L, 32L, 33L, 34L, 35L)
                .doesNotContain(60L, 1L, RUNNER);
    }

    @Test
    void aRunnerEnteredWithDockerExecStillSweepsItsOwnTree() {
        Map<Long, ProcStat> processes = container();
        processes.remove(RUNNER);
        processes.put(90L, new ProcStat('S', 0, 90, 200)); // docker exec sh -c 'java ... runner'
        processes.put(91L, new ProcStat('S', 90, 90, 201)); // the runner
        processes.put(92L, new ProcStat('S', 91, 92, 300)); // a command's daemon, its parent still alive
        processes.put(93L, new ProcStat('S', 1, 93, 301)); // an orphan
        assertThat(IdleSweep.leftovers(processes, 91)).containsExactlyInAnyOrder(92L, 93L);
    }

    @Test
    void killsRealEscapedDaemonsAndSparesThisProcessAndItsAncestors() throws Exception {
        // Each escapes a different way; the outer shell exits, so they are orphans (init or a subreaper).
        String script = """
                setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! >setsid
                (sleep 300 </dev/null >/dev/null 2>&1 & echo $! >double) &
                env -i /bin/sleep 300 </dev/null >/dev/null 2>&1 & echo $! >env
                bash -c 'exec -a "x) S 0 1 1 0" sleep 300' </dev/null >/dev/null 2>&1 & echo $! >argv
                sh -c 'printf "x) S 0 1 1 0" >/proc/$$/comm; echo $$ >comm; sleep 300; :' </dev/null >/dev/null 2>&1 &
                wait_for() { while [ ! -s "$1" ]; do sleep 0.01; done; }
                for f in setsid double env argv comm; do wait_for $f; done
                """;
        Process outer = new ProcessBuilder("/bin/sh", "-c", script).directory(dir.toFile()).start();
        assertThat(outer.waitFor(20, TimeUnit.SECONDS)).isTrue();
        Map<String, Long> daemons = new HashMap<>();
        for (String way : List.of("setsid", "double", "env", "argv", "comm")) {
            long pid = Long.parseLong(Files.readString(dir.resolve(way), StandardCharsets.US_ASCII).strip());
            started.add(pid);
            daemons.put(way, pid);
        }
        Thread.sleep(100); // `exec -a` and the rename take effect
        Map<Long, ProcStat> processes = IdleSweep.snapshot(new byte[ProcStat.BUFFER_BYTES]);
        assertThat(processes.get(daemons.get("comm")).ppid()).as("a name that mimics a stat line fools no parser")
                .isNotZero();
        long self = ProcessHandle.current().pid();
        var leftovers = IdleSweep.leftovers(processes, self);
        assertThat(leftovers).containsAll(daemons.values()).doesNotContain(self, 1L);
        for (ProcessHandle up = ProcessHandle.current().parent().orElse(null); up != null; up = up.parent().orElse(null)) {
            assertThat(leftovers).as("an ancestor of the runner").doesNotContain(up.pid());
        }
    }

    /**
     * The last id handed out, which a sweep judges first, is as often a thread's as a process's,
     * and {@code /proc/<tid>/stat} reads though {@code /proc} lists no thread: a runner thread's
     * stat names the init as parent, so it reads as a leftover, and {@code kill(2)} on it kills
     * the runner. This JVM stands for the runner: none of its threads, fresh ones among them, is a
     * victim when its id comes as the newest one, while an escaped daemon's id is. The decision
     * is asked, and nothing signalled: a wrong answer fails the test rather than killing its JVM.
     */
    @Test
    void neverTakesAThreadOfTheRunnerForALeftover() throws Exception {
        long self = ProcessHandle.current().pid();
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> fresh = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            fresh.add(Thread.ofPlatform().start(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        try {
            Process outer = new ProcessBuilder("/bin/sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!").start();
            long daemon = Long.parseLong(new String(outer.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip());
            started.add(daemon);
            assertThat(outer.waitFor(10, TimeUnit.SECONDS)).isTrue();
            List<Long> threads;
            try (var tasks = Files.list(Path.of("/proc/self/task"))) {
                threads = tasks.map(task -> Long.parseLong(task.getFileName().toString())).filter(tid -> tid != self).toList();
            }
            assertThat(threads).as("this JVM's threads but its main one").hasSizeGreaterThan(fresh.size());
            IdleSweep.Scan scan = new IdleSweep.Scan(self, stat -> true, new byte[ProcStat.BUFFER_BYTES]);
            for (long thread : threads) {
                assertThat(scan.victim(thread, false)).as("thread %d of this JVM", thread).isFalse();
            }
            assertThat(scan.victim(self, false)).as("this JVM").isFalse();
            assertThat(scan.victim(daemon, false)).as("an escaped daemon").isTrue();
        } finally {
            release.countDown();
            for (Thread thread : fresh) {
                thread.join();
            }
        }
    }

    /**
     * A fork chain: a process that forks its successor and exits, over and over, each generation
     * gone within a fork's time (a tenth of a millisecond), so that a pid seen is usually dead
     * before it is signalled. The sweep is confined to the chains' sessions here (this JVM may
     * kill anything); each chain's reaper, the subreaper of its generations as the runner is of a
     * command's orphans, stands outside them and exits once its chain is gone.
     *
     * <p>A sweep that ends clean must have left no chain, whatever the load. One may be cut short
     * by its budget when the chains and the machine's load keep it off the CPU, and the runner
     * then sweeps again, {@link IdleSweep#RETRIES} times at most; so does this test, and each
     * round's chains must be gone within 1 + that many sweeps. Measured on 2 cores in 5 runs
     * under two busy loops on top of a load average of 17 to 46: 15 of 65 sweeps cut short, at
     * most 3 in a row (a JVM's first, cold ones); in 5 runs without the busy loops, 1 of 51. The
     * sweep that ended on one snapshot with nothing alive, before fork chains were known, ends
     * "clean" with chains alive (at its first sweep, tried) and fails here.
     */
    @ParameterizedTest
    @EnumSource(Generation.class)
    void forkChainsAreGoneOnceASweepEndsClean(Generation generation) throws Exception {
        Path chain = forkChain(generation);
        long self = ProcessHandle.current().pid();
        int allSweeps = 0;
        int cutShort = 0;
        for (int round = 0; round < 10; round++) {
            List<Process> reapers = new ArrayList<>();
            Set<Long> sessions = new HashSet<>();
            for (int i = 0; i < 8; i++) {
                Process reaper = startWhenAPidIsFree(new ProcessBuilder(chain.toString()).redirectErrorStream(true));
                started.add(reaper.pid());
                reapers.add(reaper);
                String session = new BufferedReader(new InputStreamReader(reaper.getInputStream(), StandardCharsets.US_ASCII))
                        .readLine();
                groups.add(Long.parseLong(session));
                sessions.add(Long.parseLong(session));
            }
            Thread.sleep(20);
            int sweeps = 0;
            IdleSweep.Outcome outcome;
            do {
                outcome = IdleSweep.sweep(self, stat -> sessions.contains(stat.session()));
                sweeps++;
                cutShort += outcome == IdleSweep.Outcome.CUT_SHORT ? 1 : 0;
            } while (outcome == IdleSweep.Outcome.CUT_SHORT && sweeps <= IdleSweep.RETRIES);
            assertThat(outcome).as("round %d: how the last of %d sweeps ended", round, sweeps).isEqualTo(IdleSweep.Outcome.CLEAN);
            for (Process reaper : reapers) {
                assertThat(reaper.waitFor(2, TimeUnit.SECONDS)).as("round %d: a chain outlived a sweep that ended clean", round)
                        .isTrue();
            }
            allSweeps += sweeps;
            killGroups();
        }
        System.out.printf("fork chains whose generations %s: %d of %d sweeps cut short%n", generation, cutShort, allSweeps);
    }

    /**
     * Starts a process (a chain's reaper, a kill). The chains' zombies can take every pid the
     * kernel has (32,768 here) until their reapers catch up, and a start then fails with EAGAIN;
     * that is the machine's state for a moment, not what is tested, so the start is tried again
     * for a while.
     */
    private static Process startWhenAPidIsFree(ProcessBuilder builder) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try {
                return builder.start();
            } catch (IOException e) {
                if (!String.valueOf(e.getMessage()).contains("Resource temporarily unavailable") || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    /**
     * What a generation of a fork chain does before it forks the next and exits. With a short
     * child, the last id handed out, which a sweep reads first, is half the time a dead child's.
     * (Generations that start a thread are tried in the runner's container, e2e {@code
     * PrivilegeSeparationTest}: on a host with no pids limit, the zombies of their thread groups
     * outran the reapers here, thousands of them, and one scan of {@code /proc} took 44 to 102 s.)
     */
    enum Generation {
        /** Nothing. */
        FORKS_AT_ONCE(""),
        /** Forks a child that exits at once. */
        FORKS_A_SHORT_CHILD("if (fork() == 0) _exit(0);");

        final String prelude;

        Generation(String prelude) {
            this.prelude = prelude;
        }
    }

    /** Compiles the fork chain and its reaper; the test is skipped where there is no C compiler. */
    private Path forkChain(Generation generation) throws Exception {
        Path source = Files.writeString(dir.resolve("chain.c"), """
                #include <errno.h>
                #include <stdio.h>
                #include <sys/prctl.h>
                #include <sys/wait.h>
                #include <unistd.h>
                int main(void) {
                    prctl(PR_SET_CHILD_SUBREAPER, 1);
                    if (fork() == 0) {
                        setsid();
                        printf("%d\\n", getpid());
                        fclose(stdout);
                        for (;;) { PRELUDE if (fork()) _exit(0); }
                    }
                    fclose(stdout);
                    while (wait(NULL) > 0 || errno == EINTR);
                    return 0;
                }
                """.replace("PRELUDE", generation.prelude));
        Path binary = dir.resolve("chain");
        boolean compiled;
        try {
            Process cc = new ProcessBuilder("cc", "-O2", "-o", binary.toString(), source.toString()).inheritIO().start();
            compiled = cc.waitFor(60, TimeUnit.SECONDS) && cc.exitValue() == 0;
        } catch (java.io.IOException noCompiler) {
            compiled = false;
        }
        assumeTrue(compiled, "no C compiler");
        return binary;
    }
}
