package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class OutputViewTest {

    private static OutputLog log(String text, int head, int cap) {
        OutputLog log = new OutputLog(head, cap);
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i += 1000) {
            byte[] chunk = java.util.Arrays.copyOfRange(bytes, i, Math.min(bytes.length, i + 1000));
            log.append(chunk, chunk.length);
        }
        return log;
    }

    private static String lines(int from, int to) {
        StringBuilder s = new StringBuilder();
        for (int i = from; i <= to; i++) {
            s.append("line ").append(i).append('\n');
        }
        return s.toString();
    }

    @Test
    void smallOutputIsShownWhole() {
        OutputView[] views = OutputView.of(log("a\nb\n", 1024, 4096), log("", 1024, 4096), 1024);
        assertThat(views[0].cut()).isFalse();
        assertThat(views[0].head()).isEqualTo("a\nb\n");
        assertThat(views[1].head()).isEmpty();
    }

    @Test
    void largeOutputShowsHeadAndTailOnLineEndsAndCountsWhatIsLeftOut() {
        String text = lines(1, 10_000); // 108,894 bytes
        OutputView view = OutputView.of(log(text, 4096, 200_000), log("", 4096, 200_000), 2048)[0];
        assertThat(view.cut()).isTrue();
        assertThat(view.head()).startsWith("line 1\n").endsWith("\n");
        assertThat(view.tail()).endsWith("line 10000\n").doesNotStartWith("\n");
        assertThat(view.head().length() + view.tail().length()).isLessThanOrEqualTo(2048);
        assertThat(view.omittedFrom()).isEqualTo(view.head().length());
        assertThat(view.omittedTo()).isEqualTo(text.length() - view.tail().length());
        String omitted = text.substring((int) view.omittedFrom(), (int) view.omittedTo());
        assertThat(view.omittedLines()).isEqualTo(omitted.chars().filter(c -> c == '\n').count());
        assertThat(view.droppedBytes()).isZero();
    }

    @Test
    void streamsShareTheViewAndAQuietOneLeavesItsPartToTheOther() {
        OutputView[] both = OutputView.of(log("o".repeat(50_000), 4096, 65536), log("e".repeat(50_000), 4096, 65536), 4096);
        assertThat(both[0].head().length() + both[0].tail().length()).isEqualTo(2048);
        assertThat(both[1].head().length() + both[1].tail().length()).isEqualTo(2048);

        OutputView[] one = OutputView.of(log("o".repeat(50_000), 4096, 65536), log("e".repeat(100), 4096, 65536), 4096);
        assertThat(one[1].cut()).isFalse();
        assertThat(one[0].head().length() + one[0].tail().length()).isEqualTo(4096 - 100);
    }

    @Test
    void whatNoLongerFitsTheLogIsCountedAsDroppedAndReadingSkipsIt() {
        OutputLog log = log("x".repeat(100_000), 4096, 10_000);
        OutputView view = OutputView.of(log, log("", 4096, 10_000), 4096)[0];
        assertThat(view.droppedBytes()).isEqualTo(100_000 - 4096 - 10_000);
        OutputPage head = log.read(view.omittedFrom(), 64 * 1024);
        assertThat(head.start()).isEqualTo(view.omittedFrom());
        assertThat(head.next()).isEqualTo(4096);
        OutputPage rest = log.read(head.next(), 64 * 1024);
        assertThat(rest.dropped()).isEqualTo(100_000 - 4096 - 10_000);
        assertThat(rest.start()).isEqualTo(90_000);
        assertThat(rest.next()).isEqualTo(100_000);
    }

    @Test
    void cutsNeverSplitACharacter() {
        OutputLog log = log("é".repeat(10_000), 4096, 65536);
        OutputView view = OutputView.of(log, log("", 4096, 65536), 1001)[0];
        assertThat(view.head()).doesNotContain("\uFFFD");
        assertThat(view.tail()).doesNotContain("\uFFFD");
        assertThat(view.omittedFrom() % 2).isZero();
        assertThat(view.omittedTo() % 2).isZero();
    }

    /** The text's size as the channel writes it in JSON: a control character six bytes, a newline two. */
    private static long asJson(String text) {
        return text.chars().mapToLong(c -> c == '\n' ? 2 : c < 0x20 ? 6 : 1).sum();
    }

    @Test
    void controlCharactersCountAsTheSixBytesJsonMakesOfThem() {
        String control = ("\u0001".repeat(99) + "\n").repeat(1000);
        OutputView view = OutputView.of(log(control, 4096, 200_000), log("", 4096, 200_000), 4096)[0];
        assertThat(view.cut()).isTrue();
        assertThat(asJson(view.head()) + asJson(view.tail())).isLessThanOrEqualTo(4096).isGreaterThan(4096 - 2 * 600);
        assertThat(control).startsWith(view.head()).endsWith(view.tail());

        String small = "\u0001".repeat(600); // 3,600 bytes as JSON
        assertThat(OutputView.of(log(small, 4096, 200_000), log("", 4096, 200_000), 3600)[0].cut()).isFalse();
        assertThat(OutputView.of(log(small, 4096, 200_000), log("", 4096, 200_000), 3599)[0].cut()).isTrue();

        OutputPage page = log("\u0001".repeat(100_000), 4096, 200_000).read(0, 6000);
        assertThat(page.next()).isEqualTo(1000);
        assertThat(asJson(page.text())).isLessThanOrEqualTo(6000);
    }

    @Test
    void aCharacterAcrossTheEndOfTheKeptHeadDoesNotStopPaging() {
        for (String rest : new String[] {"b".repeat(10), "x".repeat(100_000)}) {
            OutputLog log = log("a".repeat(4095) + "€" + rest, 4096, 10_000);
            StringBuilder read = new StringBuilder();
            long offset = 0;
            for (int pages = 0; offset < log.totalBytes(); pages++) {
                assertThat(pages).as("pages").isLessThan(10);
                OutputPage page = log.read(offset, 64 * 1024);
                assertThat(page.next()).as("from %d", offset).isGreaterThan(offset);
                read.append(page.text());
                offset = page.next();
            }
            assertThat(read.toString()).startsWith("a".repeat(4095)).endsWith(rest.substring(rest.length() - 10));
        }
    }

    /**
     * A view of a command still writing (run_command handing it over to a job) is of one moment:
     * what it shows fits its share, and the lines it says it left out are those between what it
     * shows, whatever the command wrote meanwhile.
     */
    @Test
    void aViewTakenWhileTheCommandWritesIsOfOneMoment() throws Exception {
        byte[] chunk = "x\n".repeat(32).getBytes(StandardCharsets.UTF_8);
        int views = 0;
        for (int round = 0; round < 100; round++) {
            OutputLog stdout = new OutputLog(4096, 65536);
            Thread writer = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 400; i++) {
                    stdout.append(chunk, chunk.length);
                }
            });
            while (writer.isAlive()) {
                OutputView view = OutputView.of(stdout, new OutputLog(4096, 65536), 1024)[0];
                assertThat(asJson(view.head()) + asJson(view.tail())).as("what a view shows").isLessThanOrEqualTo(1024);
                assertThat(newlines(view.head()) + view.omittedLines() + newlines(view.tail()))
                        .as("lines shown and left out, of %d bytes", view.totalBytes()).isEqualTo(view.totalBytes() / 2);
                views++;
            }
            writer.join();
        }
        assertThat(views).as("views taken while the writer wrote").isPositive();
    }

    private static long newlines(String text) {
        return text.chars().filter(c -> c == '\n').count();
    }
}
