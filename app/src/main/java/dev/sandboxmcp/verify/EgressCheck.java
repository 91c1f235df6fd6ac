package dev.sandboxmcp.verify;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The sandbox's egress, checked from inside it with run_command (verify --egress): the mode, read
 * from the command environment (HTTPS_PROXY and SANDBOX_EGRESS_ALLOW, which compose.egress.yaml
 * sets); off: the sandbox has no interface but loopback; an allow-list: its first name answers
 * through the proxy and a name that is not listed gets the proxy's 403.
 */
final class EgressCheck {

    /** A name no allow-list holds (RFC 6761 reserves .invalid); the proxy refuses it before any lookup. */
    static final String UNLISTED = "sandbox-mcp-verify.invalid";
    private static final Pattern HOST_NAME = Pattern.compile("[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?");
    private static final String PROBE = "printf '%s\\n' \"${HTTPS_PROXY:-}\" \"${SANDBOX_EGRESS_ALLOW:-}\"; "
            + "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -vx lo | paste -sd, -";

    private EgressCheck() {
    }

    static List<CheckResult> run(McpSyncClient client) {
        List<CheckResult> results = new ArrayList<>();
        Optional<String> probe = stdout(client, PROBE);
        if (probe.isEmpty()) {
            results.add(CheckResult.fail("egress mode", "run_command failed: cannot read the sandbox's environment"));
            return results;
        }
        String[] lines = (probe.get() + "\n\n\n").split("\n", -1);
        String proxy = lines[0].strip();
        String allow = lines[1].strip();
        String interfaces = lines[2].strip();
        if (proxy.isEmpty()) {
            results.add(interfaces.isEmpty()
                    ? CheckResult.pass("egress mode", "off: the sandbox has no network (loopback only)")
                    : CheckResult.fail("egress mode", "off, but the sandbox has network interfaces (" + interfaces
                            + "): is this the container deployment?"));
            return results;
        }
        results.add(CheckResult.pass("egress mode", "allow-list through " + proxy + ": " + allow));
        Optional<String> allowed = Arrays.stream(allow.split(",")).map(n -> n.strip().toLowerCase().replaceFirst("^\\*\\.", ""))
                .filter(n -> HOST_NAME.matcher(n).matches()).findFirst();
        if (allowed.isEmpty()) {
            results.add(CheckResult.fail("egress allowed name answers", "no host name in SANDBOX_EGRESS_ALLOW: '" + allow + "'"));
        } else {
            results.add(allowedAnswers(client, allowed.get()));
        }
        results.add(unlistedRefused(client));
        return results;
    }

    /** The tunnel is set up and the host answers over TLS (certificate not checked: reachability only). */
    private static CheckResult allowedAnswers(McpSyncClient client, String name) {
        String check = "egress " + name + " answers";
        Optional<String> out = stdout(client, "curl -sS -k -m 20 -o /dev/null -w '%{http_connect} %{http_code}' https://" + name
                + "/ 2>&1");
        String answer = out.orElse("(run_command failed)").strip();
        return answer.matches("200 [1-5][0-9][0-9]")
                ? CheckResult.pass(check, "CONNECT 200, then HTTP " + answer.substring(4))
                : CheckResult.fail(check, "curl https://" + name + "/ through the proxy: " + lastLine(answer));
    }

    private static CheckResult unlistedRefused(McpSyncClient client) {
        String check = "egress refuses " + UNLISTED;
        Optional<String> out = stdout(client, "curl -sS -m 20 -w '\\n%{http_code}' http://" + UNLISTED + "/ 2>&1");
        String answer = out.orElse("(run_command failed)").strip();
        return answer.endsWith("\n403") && answer.contains("not on the allow-list")
                ? CheckResult.pass(check, "403 from the proxy, naming the host")
                : CheckResult.fail(check, "want the proxy's 403, got: " + lastLine(answer));
    }

    private static String lastLine(String text) {
        List<String> lines = text.lines().toList();
        return lines.isEmpty() ? "(nothing)" : lines.getLast();
    }

    private static Optional<String> stdout(McpSyncClient client, String command) {
        CallToolResult result = client.callTool(new CallToolRequest("run_command",
                Map.of("command", command, "timeout_seconds", 30)));
        if (Boolean.TRUE.equals(result.isError()) || !(result.structuredContent() instanceof Map<?, ?> m)
                || !(m.get("stdout") instanceof String text)) {
            return Optional.empty();
        }
        return Optional.of(text);
    }
}
