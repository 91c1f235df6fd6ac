package dev.sandboxmcp.bench;

import java.util.Arrays;
import java.util.Locale;

/** A first call and the median of the calls after it, in milliseconds. */
record Timing(double first, double later) {

    static final int LATER_CALLS = 9;

    /** One call; {@code round} counts from 0 (the first call), for calls that must differ each time. */
    interface Call {
        void run(int round) throws Exception;
    }

    /** Times the first call, then {@link #LATER_CALLS} more. */
    static Timing of(Call call) throws Exception {
        long started = System.nanoTime();
        call.run(0);
        double first = (System.nanoTime() - started) / 1e6;
        long[] later = new long[LATER_CALLS];
        for (int i = 0; i < LATER_CALLS; i++) {
            started = System.nanoTime();
            call.run(i + 1);
            later[i] = System.nanoTime() - started;
        }
        Arrays.sort(later);
        return new Timing(first, later[LATER_CALLS / 2] / 1e6);
    }

    /** Milliseconds with one decimal, as the tables show them. */
    static String millis(double millis) {
        return String.format(Locale.ROOT, "%.1f", millis);
    }
}
