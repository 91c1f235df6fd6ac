package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WholeCharsTest {

    private static final String EMOJI = "\uD83D\uDE00";

    @Test
    void aShortEnoughTextIsItself() {
        String text = "ab" + EMOJI;
        assertThat(WholeChars.prefix(text, 4)).isSameAs(text);
    }

    @Test
    void aCutNeverEndsInTheFirstHalfOfAPair() {
        assertThat(WholeChars.prefix("ab" + EMOJI + "c", 3)).isEqualTo("ab");
        assertThat(WholeChars.prefix("ab" + EMOJI + "c", 4)).isEqualTo("ab" + EMOJI);
        assertThat(WholeChars.prefix("abcd", 3)).isEqualTo("abc");
    }

    @Test
    void aLoneSecondHalfIsCutLikeAnyOtherChar() {
        assertThat(WholeChars.prefix("a\uDE00bc", 2)).isEqualTo("a\uDE00");
    }
}
