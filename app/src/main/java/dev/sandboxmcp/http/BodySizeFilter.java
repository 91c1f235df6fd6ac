package dev.sandboxmcp.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a message POST's body as it arrives, in chunks, each charged to the
 * {@link RequestBodyBudget} before it is read (for its bytes: what its parse costs is charged
 * once the envelope check has counted its tokens, and a body refused there never costs more), and
 * hands it on as a {@link ReceivedBody} holding the charge until the message is answered. A body
 * past {@code maxBytes} is answered 413, after reading at most {@code maxBytes + 1} of it into
 * nothing unless the client waits for {@code 100 Continue} (uncharged: a proxy still sending a
 * refused body would otherwise see the connection reset and turn the 413 into a 502); one that
 * finds no room in the budget in time, 503
 * with {@code Retry-After}. What a body holds is what it has sent: declaring 8 MiB and sending
 * nothing holds nothing, so slow clients cannot starve the others.
 */
final class BodySizeFilter extends PostFilter {

    /** Bytes read, and charged, at a time. */
    static final int CHUNK = 64 * 1024;

    private final int maxBytes;
    private final RequestBodyBudget budget;

    BodySizeFilter(int maxBytes, RequestBodyBudget budget) {
        this.maxBytes = maxBytes;
        this.budget = budget;
    }

    @Override
    void doPost(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        long declared = request.getContentLengthLong();
        if (declared > maxBytes) {
            discardUnlessWaitedFor(request);
            JsonRpcErrors.write(response, null, Problem.tooLarge(maxBytes));
            return;
        }
        if (declared * JsonBounds.COST_PER_BYTE > budget.capacity()) {
            discardUnlessWaitedFor(request);
            JsonRpcErrors.write(response, null, Problem.tooCostly(declared * JsonBounds.COST_PER_BYTE, budget.capacity()));
            return;
        }
        try (RequestBodyBudget.Charge charge = budget.open()) {
            Received received = read(request.getInputStream(), declared, charge);
            switch (received.outcome()) {
                case CHARGED -> {
                    if (received.length() > maxBytes) {
                        JsonRpcErrors.write(response, null, Problem.tooLarge(maxBytes));
                    } else {
                        request.setAttribute(RequestBodyBudget.CHARGE_ATTRIBUTE, charge);
                        chain.doFilter(new ReceivedBody(request, received.chunks(), charge), response);
                    }
                }
                case BUSY -> {
                    charge.close();
                    discard(request.getInputStream());
                    response.setHeader("Retry-After", "5");
                    JsonRpcErrors.write(response, null, Problem.busy(budget.capacity()));
                }
                case PAST_THE_BUDGET -> {
                    charge.close();
                    discard(request.getInputStream());
                    JsonRpcErrors.write(response, null,
                            Problem.tooCostly(received.length() * JsonBounds.COST_PER_BYTE, budget.capacity()));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for room for a body", e);
        }
    }

    /** The chunks read, their length, and whether the budget had room for all of them. */
    private record Received(List<byte[]> chunks, long length, RequestBodyBudget.Outcome outcome) {
    }

    /**
     * The body in chunks, up to one byte past the cap (so that a larger chunked body is seen to
     * be larger), each charged before it is read; stops at the first chunk the budget has no room for.
     */
    private Received read(InputStream in, long declared, RequestBodyBudget.Charge charge)
            throws IOException, InterruptedException {
        List<byte[]> chunks = new ArrayList<>();
        long limit = declared >= 0 ? declared : maxBytes + 1L;
        long total = 0;
        while (total < limit) {
            int size = (int) Math.min(CHUNK, limit - total);
            RequestBodyBudget.Outcome outcome = charge.add(size);
            if (outcome != RequestBodyBudget.Outcome.CHARGED) {
                return new Received(chunks, total + size, outcome);
            }
            byte[] chunk = new byte[size];
            int n = in.readNBytes(chunk, 0, size);
            if (n < size) {
                charge.refund(size - n);
                chunk = Arrays.copyOf(chunk, n);
            }
            if (n > 0) {
                chunks.add(chunk);
            }
            total += n;
            if (n < size) {
                break;
            }
        }
        if (declared >= 0 && total == declared && in.read() >= 0) {
            total++; // more than declared (the framing forbids it): refused as too large, if past the cap
        }
        // Reading to the end lets the connection see the request complete, which cancels its body
        // deadline (ReadDeadline); stopping at the declared length left it to close a long call.
        return new Received(chunks, total, RequestBodyBudget.Outcome.CHARGED);
    }

    /**
     * A body refused by its declared length: a client that waits for {@code 100 Continue} is
     * answered at once and sends nothing (reading would have Jetty ask for the body); any other is
     * already sending it, and that is read into nothing first.
     */
    private void discardUnlessWaitedFor(HttpServletRequest request) throws IOException {
        if (!"100-continue".equalsIgnoreCase(request.getHeader("Expect"))) {
            discard(request.getInputStream());
        }
    }

    /**
     * Reads the rest of a refused body, at most {@code maxBytes + 1}, into nothing: a client or
     * proxy still sending it would otherwise see a reset instead of the answer. Past that, Jetty
     * closes the connection after the answer.
     */
    private void discard(InputStream in) throws IOException {
        byte[] buffer = new byte[16384];
        long left = maxBytes + 1L;
        int n;
        while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) >= 0) {
            left -= n;
        }
    }
}
