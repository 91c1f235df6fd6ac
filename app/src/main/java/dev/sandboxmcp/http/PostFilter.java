package dev.sandboxmcp.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** A filter of message bodies: it sees POSTs, the requests that carry one; every other method passes. */
abstract class PostFilter extends HttpFilter {

    @Override
    protected final void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if ("POST".equals(request.getMethod())) {
            doPost(request, response, chain);
        } else {
            chain.doFilter(request, response);
        }
    }

    abstract void doPost(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException;
}
