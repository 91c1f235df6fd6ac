package dev.sandboxmcp.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;

/**
 * Lets a Streamable HTTP answer go out whole, with its length: the SDK's stateless transport
 * flushes the JSON it has written before the request ends, which commits the response as chunked
 * and sends its last chunk in a second write, so that a client reads the answer in two parts (the
 * second often a wake-up later). Held until the request ends, an answer that fits Jetty's output
 * buffer goes out in one write with a {@code Content-Length}; a larger one streams as before.
 */
final class WholeAnswerFilter extends HttpFilter {

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        chain.doFilter(request, new HttpServletResponseWrapper(response) {
            private PrintWriter writer;

            @Override
            public PrintWriter getWriter() throws IOException {
                if (writer == null) {
                    writer = new PrintWriter(super.getWriter(), false) {
                        @Override
                        public void flush() {
                            // sent as the request ends
                        }
                    };
                }
                return writer;
            }
        });
    }
}
