package dev.sandboxmcp.runner;

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
 * lock is held, only after it has been free for the grace, and at once on a new channel volume,
 * where no runner ever had a secret.
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
        TicketOffice office = TicketOffice.start(listener, link, grace, () -> "ok");
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
        try (FileChannel channel = FileChannel.open(dir.resolve(TicketOffice.LOCK), StandardOpenOption.READ)) {
            FileLock lock = channel.lock(0, Long.MAX_VALUE, true);
            office(grace);
            Thread.sleep(grace.multipliedBy(3));
            assertThat(ticket()).as("a runner lives").doesNotExist();
            lock.release();
        }
        Instant released = Instant.now();
        awaitTicket();
        // Load can only make it later: the office publishes at least the grace after it saw the lock free.
        assertThat(Files.getLastModifiedTime(ticket()).toInstant())
                .isAfterOrEqualTo(released.plus(grace).minusMillis(20));
    }

    @Test
    void theStateSaysSinceWhenItsStatusHasHeldSoAFailureStreakNeedsNoCountOfTheRunners() {
        TicketOffice.State state = new TicketOffice.State("", 0, 0).next("ok", 100).next("ok", 105);
        assertThat(state.line()).isEqualTo("ok 105 100\n");
        state = state.next("failing", 110).next("failing", 115).next("failing", 120);
        assertThat(state.line()).as("failing since the first failing write").isEqualTo("failing 120 110\n");
        state = state.next("disconnected", 125);
        assertThat(state.line()).isEqualTo("disconnected 125 125\n");
        assertThat(state.next("ok", 130).line()).isEqualTo("ok 130 130\n");
    }
}
