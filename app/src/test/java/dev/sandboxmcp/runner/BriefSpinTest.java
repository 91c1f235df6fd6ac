package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where a call's thread spins before it parks: only alone, one thread at a time, with more than
 * one processor, never past its bound, and no longer than the answer takes.
 */
class BriefSpinTest {

    static final Duration LONG = Duration.ofSeconds(30);

    @Test
    void anAnswerEndsTheSpinAtOnce() throws Exception {
        BriefSpin spin = new BriefSpin(LONG, 2);
        CompletableFuture<String> answer = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            sleep(50);
            answer.complete("reply");
        });
        long start = System.nanoTime();
        assertThat(spin.await(answer, true)).isTrue();
        assertThat(answer).isDone();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void noAnswerEndsTheSpinAtItsBound() {
        Duration bound = Duration.ofMillis(20);
        BriefSpin spin = new BriefSpin(bound, 2);
        long start = System.nanoTime();
        assertThat(spin.await(new CompletableFuture<>(), true)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(bound);
    }

    @Test
    void oneThreadSpinsAtATime() throws Exception {
        BriefSpin spin = new BriefSpin(LONG, 2);
        CompletableFuture<String> first = new CompletableFuture<>();
        Thread spinner = Thread.ofPlatform().start(() -> spin.await(first, true));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!spin.spinning() && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        assertThat(spin.spinning()).as("the first thread spins").isTrue();
        assertThat(spin.await(new CompletableFuture<>(), true)).as("a second thread parks at once").isFalse();
        first.complete("reply");
        spinner.join(10_000);
        assertThat(spinner.isAlive()).isFalse();
        assertThat(spin.spinning()).isFalse();
        assertThat(spin.await(CompletableFuture.completedFuture("x"), true)).as("a done answer needs no spin").isFalse();
        CompletableFuture<String> later = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            sleep(20);
            later.complete("reply");
        });
        assertThat(spin.await(later, true)).as("free again once the first spinner stopped").isTrue();
    }

    @Test
    void neitherBesideOtherCallsNorOnOneProcessor() {
        CompletableFuture<String> never = new CompletableFuture<>();
        assertThat(new BriefSpin(LONG, 2).await(never, false)).isFalse();
        assertThat(new BriefSpin(LONG, 1).await(never, true)).isFalse();
        assertThat(new BriefSpin(Duration.ZERO, 8).await(never, true)).isFalse();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
