package dev.sandboxmcp.runner;

import static dev.sandboxmcp.runner.TicketOffice.Status.DISCONNECTED;
import static dev.sandboxmcp.runner.TicketOffice.Status.FAILING;
import static dev.sandboxmcp.runner.TicketOffice.Status.OK;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the ticket (the secret of the runner's next start) is published: never while the runner's
 * lock (a flock, which its init holds) is held, by this process or another, only after it has
 * been free for the grace, and at once on a new channel volume, where no runner ever had a secret.
 * A POSIX record lock (what the runner's JVM used to hold, and a command could) does not count.
 */
class TicketOfficeTest {

    static final Duration LONG_GRACE = Duration.ofHours(1);

    @TempDir
    Path dir;

    final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
    }

    TicketOffice office(Duration grace) throws Exception {
        RunnerLink link = new RunnerLink(ChannelTest.BOUNDS, (tool, arguments) -> ChannelTest.DEADLINE);
        ChannelListener listener = ChannelListener.start(dir.resolve("runner.sock"), link, ChannelTest.BOUNDS,
                dev.sandboxmcp.config.Limits.defaults());
        open.add(listener);
        TicketOffice office = TicketOffice.start(listener, link, grace, () -> true);
        open.add(office);
        return office;
    }

    Path ticket() {
        return dir.resolve(TicketOffice.TICKET);
    }

    void awaitTicket() throws InterruptedException {
        for (int i = 0; i < 600 && !Files.exists(ticket()); i++) {
            Thread.sleep(50);
        }
        assertThat(ticket()).exists();
    }

    @Test
    void aNewVolumeGetsItsTicketWithoutTheGrace() throws Exception {
        office(LONG_GRACE);
        awaitTicket();
        assertThat(Files.readString(ticket()).strip()).hasSize(64);
    }

    @Test
    void aVolumeWhereARunnerMayHaveLivedWaitsForTheGrace() throws Exception {
        Files.createFile(dir.resolve(TicketOffice.LOCK));
        office(LONG_GRACE);
        Thread.sleep(TicketOffice.TICK.multipliedBy(5));
        assertThat(ticket()).as("a lock file: a runner may have died just now").doesNotExist();
    }

    @Test
    void noTicketWhileTheLockIsHeldAndNoneBeforeTheGraceAfterItsRelease() throws Exception {
        Files.createFile(dir.resolve(TicketOffice.LOCK));
        Duration grace = Duration.ofMillis(500);
        try (Flock.Held lock = Flock.holdShared(dir.resolve(TicketOffice.LOCK))) {
            office(grace);
            Thread.sleep(grace.multipliedBy(3));
            assertThat(ticket()).as("a runner lives").doesNotExist();
        }
        Instant released = Instant.now();
        awaitTicket();
        // Load can only make it later: the office publishes at least the grace after it saw the lock free.
        assertThat(Files.getLastModifiedTime(ticket()).toInstant())
                .isAfterOrEqualTo(released.plus(grace).minusMillis(20));
    }

    /**
     * The runner's init holds a shared flock with the flock utility for as long as it lives: no
     * ticket until that process has ended, and then only after the grace.
     */
    @Test
    void aFlockOfAnotherProcessKeepsTheTicketBackUntilThatProcessHasEndedAndTheGrace() throws Exception {
        Path lock = Files.createFile(dir.resolve(TicketOffice.LOCK));
        Duration grace = Duration.ofMillis(500);
        Process init = new ProcessBuilder("flock", "-s", lock.toString(), "sleep", "3").inheritIO().start();
        try {
            for (int i = 0; i < 200 && !Flock.held(lock); i++) {
                Thread.sleep(10);
            }
            assertThat(Flock.held(lock)).as("the other process took the lock").isTrue();
            office(grace);
            Thread.sleep(grace.multipliedBy(3));
            assertThat(init.isAlive()).as("the test's premise: the lock's holder still lives").isTrue();
            assertThat(ticket()).as("a runner's init lives").doesNotExist();
            assertThat(init.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        } finally {
            init.destroyForcibly();
        }
        Instant ended = Instant.now();
        awaitTicket();
        assertThat(Files.getLastModifiedTime(ticket()).toInstant()).isAfterOrEqualTo(ended.plus(grace).minusMillis(20));
    }

    /**
     * A POSIX record lock (fcntl, Java's FileChannel.lock: what the runner's JVM held before its
     * init did, and what dies with the JVM) is not the runner's lock: the office publishes after the
     * grace as though the file were free.
     */
    @Test
    void aRecordLockIsNotTheRunnersLock() throws Exception {
        Path lock = Files.createFile(dir.resolve(TicketOffice.LOCK));
        Duration grace = Duration.ofMillis(500);
        try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.READ)) {
            FileLock recordLock = channel.lock(0, Long.MAX_VALUE, true);
            assertThat(Flock.held(lock)).isFalse();
            Instant started = Instant.now();
            office(grace);
            awaitTicket();
            assertThat(recordLock.isValid()).isTrue();
            assertThat(Files.getLastModifiedTime(ticket()).toInstant()).isAfterOrEqualTo(started.plus(grace).minusMillis(20));
        }
    }

    @Test
    void theStateSaysHowLongTheRunnerHasBeenOkOrNotOnTheMonotonicClock() {
        long second = 1_000_000_000L;
        String fresh = " " + TicketOffice.STATE_FRESH_FOR.toSeconds() + "\n"; // how long each line is current
        TicketOffice.State state = TicketOffice.State.NONE.next(OK, 100, 7 * second).next(OK, 105, 12 * second);
        assertThat(state.line()).isEqualTo("ok 105 5" + fresh);
        state = state.next(FAILING, 110, 17 * second).next(FAILING, 115, 22 * second);
        assertThat(state.line()).as("held since the first failing write").isEqualTo("failing 115 5" + fresh);
        state = state.next(FAILING, 60, 27 * second);
        assertThat(state.line()).as("the wall clock stepped back: still held 10 s").isEqualTo("failing 60 10" + fresh);
        state = state.next(DISCONNECTED, 65, 32 * second);
        assertThat(state.line()).as("not ok since the first failing write").isEqualTo("disconnected 65 15" + fresh);
        assertThat(state.next(OK, 70, 37 * second).line()).isEqualTo("ok 70 0" + fresh);
    }
}
