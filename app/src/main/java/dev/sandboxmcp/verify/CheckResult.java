package dev.sandboxmcp.verify;

/** One line of the verify table. */
public record CheckResult(String name, boolean passed, String detail) {

    static CheckResult pass(String name, String detail) {
        return new CheckResult(name, true, detail);
    }

    static CheckResult fail(String name, String detail) {
        return new CheckResult(name, false, detail);
    }
}
