package dev.sandboxmcp.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NamesTest {

    @Test
    void printableNamesAreShownAsTheyAre() {
        for (String name : new String[] {"src/Main.java", "ü 日本 sp ace", "it's", "back\\slash", "a\"b", "\uD83D\uDE00"}) {
            assertThat(Names.display(name)).isEqualTo(name);
            assertThat(Names.quoted(name)).isEqualTo("'" + name + "'");
        }
    }

    @ParameterizedTest(name = "U+{0}")
    @CsvSource(delimiter = '|', textBlock = """
            000a | \\n
            000d | \\r
            0009 | \\t
            0000 | \\x00
            001b | \\x1b
            007f | \\x7f
            0085 | \\u0085
            009b | \\u009b
            2028 | \\u2028
            2029 | \\u2029
            202e | \\u202e
            2066 | \\u2066
            200f | \\u200f
            061c | \\u061c
            """)
    void controlSeparatorAndBidiCharactersAreEscapedInAQuotedName(String hex, String escape) {
        String character = Character.toString(Integer.parseInt(hex, 16));
        String shown = "\"x" + escape + "y\"";
        assertThat(Names.display("x" + character + "y")).isEqualTo(shown).doesNotContain(character);
        assertThat(Names.quoted("x" + character + "y")).isEqualTo(shown);
    }

    @Test
    void aQuotedNameEscapesQuotesAndBackslashesSoItReadsBackUnambiguously() {
        assertThat(Names.display("a\"b\\c\u0007")).isEqualTo("\"a\\\"b\\\\c\\x07\"");
        // A name that looks like a quoted one is quoted itself, so it cannot pass for another name.
        assertThat(Names.display("\"a\\nb\"")).isEqualTo("\"\\\"a\\\\nb\\\"\"");
        assertThat(Names.display("a\nb")).isEqualTo("\"a\\nb\"");
    }

    @Test
    void aMessageShowsANameToThePathLimitAndSaysHowLongItIs() {
        String atTheLimit = "\u0101".repeat(Names.MAX_PATH_CHARS);
        assertThat(Names.quoted(atTheLimit)).isEqualTo("'" + atTheLimit + "'");
        String long8MiB = "\u0101" + "x".repeat(8 * 1024 * 1024);
        assertThat(Names.quoted(long8MiB)).isEqualTo("'" + long8MiB.substring(0, Names.MAX_PATH_CHARS) + "'... ("
                + long8MiB.length() + " characters)");
        String quoting = "\n" + "x".repeat(Names.MAX_PATH_CHARS);
        assertThat(Names.quoted(quoting)).isEqualTo("\"\\n" + "x".repeat(Names.MAX_PATH_CHARS - 1) + "\"... ("
                + (Names.MAX_PATH_CHARS + 1) + " characters)");
        String pair = "x".repeat(Names.MAX_PATH_CHARS - 1) + "\ud83d\ude00";
        assertThat(Names.quoted(pair)).as("half a pair is not shown").isEqualTo("'" + "x".repeat(Names.MAX_PATH_CHARS - 1)
                + "'... (" + (Names.MAX_PATH_CHARS + 1) + " characters)");
    }
}
