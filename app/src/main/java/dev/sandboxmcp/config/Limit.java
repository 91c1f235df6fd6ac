package dev.sandboxmcp.config;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The declaration of one bound, on its component of {@link Limits}: its default, the variable that
 * sets it (none: a fixed bound, not a setting), its unit, the range a setting must fall in, and
 * the line that documents it. Everything that reads a limit (the environment, the runner's welcome,
 * docs/configuration.md's table through its test) reads it from here.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.RECORD_COMPONENT)
@interface Limit {

    /**
     * What a number stands for: a duration ({@code Duration} component) or a size ({@code int}
     * component; {@code MEBIBYTES} for one too large for an int of bytes).
     */
    enum Unit { SECONDS, MILLIS, BYTES, MEBIBYTES, COUNT }

    Unit unit();

    long byDefault();

    /** The environment variable that sets it; "" for a fixed bound. */
    String variable() default "";

    /** The smallest value a setting may have (a fixed bound has only its default). */
    long min() default 0;

    long max() default 0;

    /** Another component, declared before this one, that this one may not exceed; when unset it takes the smaller. */
    String atMost() default "";

    /** What it bounds: the meaning column of docs/configuration.md for a setting. */
    String doc();
}
