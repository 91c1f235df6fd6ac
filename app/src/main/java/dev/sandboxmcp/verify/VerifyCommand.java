package dev.sandboxmcp.verify;

import java.io.PrintStream;
import java.net.URI;
import java.util.List;
import java.util.Map;

/**
 * {@code java -jar sandbox-mcp.jar verify <base-url>}: runs the checklist and prints a PASS/FAIL
 * table. The token comes from {@code MCP_AUTH_TOKEN}; {@code --insecure} accepts any TLS
 * certificate. Exit code 0 when every check passes, 1 when any fails, 2 on bad usage.
 */
public final class VerifyCommand {

    private VerifyCommand() {
    }

    public static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        boolean insecure = args.contains("--insecure");
        boolean egress = args.contains("--egress");
        List<String> rest = args.stream().filter(a -> !a.equals("--insecure") && !a.equals("--egress")).toList();
        if (rest.size() != 1 || !rest.getFirst().matches("https?://.+")) {
            err.println("usage: java -jar sandbox-mcp.jar verify [--insecure] [--egress] <base-url>");
            err.println("       e.g. verify http://127.0.0.1:18080/mcp-sandbox; the token is read from MCP_AUTH_TOKEN;");
            err.println("       --insecure accepts any TLS certificate (test proxies only);");
            err.println("       --egress checks the sandbox's egress mode from inside it (container deployments)");
            return 2;
        }
        String token = env.get("MCP_AUTH_TOKEN");
        if (token == null || token.isBlank()) {
            err.println("verify: MCP_AUTH_TOKEN is not set (make verify reads it from .env)");
            return 2;
        }
        URI base = URI.create(rest.getFirst());
        out.println("verify " + base);
        List<CheckResult> results = new Verifier(base, token.strip(), insecure, egress).run();
        int width = results.stream().mapToInt(r -> r.name().length()).max().orElse(10);
        for (CheckResult result : results) {
            out.printf("%-4s  %-" + width + "s  %s%n", result.passed() ? "PASS" : "FAIL", result.name(), result.detail());
        }
        long failed = results.stream().filter(r -> !r.passed()).count();
        out.println(failed == 0 ? "all " + results.size() + " checks passed"
                : failed + " of " + results.size() + " checks FAILED");
        return failed == 0 ? 0 : 1;
    }
}
