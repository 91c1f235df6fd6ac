package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.core.JsonParser;
import tools.jackson.core.ObjectReadContext;

/**
 * A call is held to the runner's bounds as it is encoded, without a second parse: what the
 * encoder refuses is exactly what the runner's parser would refuse, bound by bound.
 */
class ProtocolTest {

    static final Bounds TIGHT = new Bounds(4096, 100, 6, 300);

    static Map<String, Object> arguments(Object value) {
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("command", "true");
        arguments.put("v", value);
        return arguments;
    }

    /** Whether the runner's parser, within {@code bounds}, takes the line; the tokens it counted. */
    static long parsedTokens(byte[] line, Bounds bounds) throws Exception {
        try (JsonParser parser = bounds.factory().createParser(ObjectReadContext.empty(), line, 0, line.length - 1)) {
            while (parser.nextToken() != null) {
                if (parser.currentToken().isScalarValue()) {
                    parser.getText(); // strings are held to their bound when read, as the runner reads them
                }
            }
            return parser.currentTokenCount();
        }
    }

    static boolean runnerTakes(Map<String, Object> arguments, Bounds bounds) {
        byte[] line = Protocol.encode(new Protocol.Call(1, "run_command", arguments, false));
        try {
            Protocol.decode(line, line.length - 1, Protocol.Sender.SERVER, Protocol.Phase.ESTABLISHED, bounds.factory());
            return line.length - 1 <= bounds.lineBytes();
        } catch (Protocol.Violation e) {
            return false;
        }
    }

    static boolean encoderTakes(Map<String, Object> arguments, Bounds bounds) {
        try {
            Protocol.encode(new Protocol.Call(1, "run_command", arguments, false), bounds);
            return true;
        } catch (Protocol.Violation e) {
            return false;
        }
    }

    static Object nested(int levels) {
        Object value = "x";
        for (int i = 0; i < levels; i++) {
            value = i % 2 == 0 ? List.of(value) : Map.of("k", value);
        }
        return value;
    }

    @Test
    void theTallyCountsTheTokensTheParserCounts() throws Exception {
        Bounds wide = new Bounds(1 << 20, 1 << 20, 64, 1 << 20);
        List<Object> values = List.of("s", 1, 2.5, true, List.of(), Map.of(), List.of(1, List.of(2, Map.of("a", 3))),
                nested(10), new BigInteger("123456789012345678901234567890"), new BigDecimal("1.5"),
                java.util.Collections.nCopies(100, Map.of("a", List.of(1, "b"))));
        for (Object value : values) {
            Map<String, Object> arguments = arguments(value);
            long parsed = parsedTokens(Protocol.encode(new Protocol.Call(7, "run_command", arguments, false)), wide);
            // Within a bound of exactly the parser's count it is taken; one less, refused.
            Bounds exact = new Bounds(1 << 20, Math.max(64, parsed), 64, 1 << 20);
            assertThat(encoderTakes(arguments, exact)).as("%s at %d tokens", value, parsed).isTrue();
            if (parsed > 64) {
                assertThat(encoderTakes(arguments, new Bounds(1 << 20, parsed - 1, 64, 1 << 20))).as("%d - 1", parsed)
                        .isFalse();
                assertThat(runnerTakes(arguments, new Bounds(1 << 20, parsed - 1, 64, 1 << 20))).isFalse();
            }
        }
    }

    @Test
    void theEncoderRefusesWhatTheRunnersParserRefusesBoundByBound() {
        List<Object> tokensAround = new ArrayList<>();
        for (int n = 0; n < 100; n++) {
            tokensAround.add(n);
        }
        Map<String, Object> longKey = new LinkedHashMap<>();
        longKey.put("k".repeat(Bounds.NAME_CHARS + 1), 1);
        List<Object> cases = new ArrayList<>(List.of(
                nested(3), nested(4), nested(5), nested(6), // depth around the bound of 6 (the message is 1, arguments 2)
                "x".repeat(300), "x".repeat(301), // the string bound
                tokensAround.subList(0, 80), tokensAround.subList(0, 88), tokensAround.subList(0, 89),
                tokensAround.subList(0, 95), // around 100 tokens
                Map.of("k".repeat(Bounds.NAME_CHARS), 1), longKey, // the key bound
                new BigInteger("9".repeat(Bounds.NUMBER_CHARS)), new BigInteger("9".repeat(Bounds.NUMBER_CHARS + 1)),
                new BigDecimal("1." + "5".repeat(Bounds.NUMBER_CHARS - 2)), new BigDecimal("1." + "5".repeat(40))));
        Bounds roomy = new Bounds(4096, 100, 64, 4096);
        java.util.Set<Boolean> outcomes = new java.util.HashSet<>();
        for (Object value : cases) {
            Map<String, Object> arguments = arguments(value);
            for (Bounds bounds : List.of(TIGHT, roomy)) {
                assertThat(encoderTakes(arguments, bounds)).as("%s within %s", value.toString().length() > 60
                        ? value.toString().substring(0, 60) + "..." : value, bounds)
                        .isEqualTo(runnerTakes(arguments, bounds));
                outcomes.add(runnerTakes(arguments, bounds));
            }
        }
        assertThat(outcomes).as("some taken, some refused").containsExactlyInAnyOrder(true, false);
    }

    @Test
    void aCallSaysWhetherItsClientListensForProgressAndMustSayIt() throws Exception {
        for (boolean listens : List.of(true, false)) {
            byte[] line = Protocol.encode(new Protocol.Call(3, "run_command", arguments(1), listens));
            assertThat(Protocol.decode(line, line.length - 1, Protocol.Sender.SERVER, Protocol.Phase.ESTABLISHED,
                    TIGHT.factory())).isEqualTo(new Protocol.Call(3, "run_command", arguments(1), listens));
        }
        for (String progress : List.of("", ",\"progress\":1", ",\"progress\":\"true\"", ",\"progress\":null")) {
            byte[] line = ("{\"kind\":\"call\",\"id\":3,\"tool\":\"run_command\"" + progress
                    + ",\"arguments\":{}}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertThatThrownBy(() -> Protocol.decode(line, line.length, Protocol.Sender.SERVER,
                    Protocol.Phase.ESTABLISHED, TIGHT.factory())).as(progress).isInstanceOf(Protocol.Violation.class)
                    .hasMessageContaining("progress");
        }
    }

    @Test
    void aLineOverTheByteBoundIsRefusedWithItsSize() {
        Bounds small = new Bounds(1024, 100, 6, 4096);
        assertThatThrownBy(() -> Protocol.encode(new Protocol.Call(1, "run_command", arguments("x".repeat(2000)), false), small))
                .isInstanceOf(Protocol.Violation.class).hasMessageContaining("over the bound of 1024");
    }
    @Test
    void aNumberPastADoublesRangeInAResultIsAViolationNotInfinity() throws Exception {
        for (String number : List.of("1e400", "-1e400")) {
            byte[] line = ("{\"kind\":\"reply\",\"id\":3,\"error\":false,\"text\":\"t\",\"structured\":{\"size\":"
                    + number + "},\"bytes\":0,\"timed_out\":false}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertThatThrownBy(() -> Protocol.decode(line, line.length, Protocol.Sender.RUNNER, Protocol.Phase.ESTABLISHED,
                    TIGHT.factory())).as(number).isInstanceOf(Protocol.Violation.class).hasMessageContaining("range");
        }
        byte[] fine = "{\"kind\":\"reply\",\"id\":3,\"error\":false,\"text\":\"t\",\"structured\":{\"size\":1e300},\"bytes\":0,\"timed_out\":false}"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(Protocol.decode(fine, fine.length, Protocol.Sender.RUNNER, Protocol.Phase.ESTABLISHED, TIGHT.factory()))
                .isInstanceOf(Protocol.Reply.class);
    }
}
