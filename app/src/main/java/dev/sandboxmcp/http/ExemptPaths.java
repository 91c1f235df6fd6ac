package dev.sandboxmcp.http;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Set;

/** Paths that answer without a token or an Origin check: the health probes, which reveal nothing. */
record ExemptPaths(Set<String> paths) {
    boolean contains(HttpServletRequest request) {
        return paths.contains(request.getRequestURI());
    }
}
