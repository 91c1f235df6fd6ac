package dev.sandboxmcp.config;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The limits as {@link Limits} declares them, read once from its components' {@link Limit}s: how
 * a set of numbers becomes a {@code Limits}, from the environment or from the runner's welcome,
 * each checked against its declaration. A declaration that makes no sense (a unit that does not
 * fit the component's type, a default outside its range, an {@code atMost} that names no earlier
 * limit) fails the class's initialisation, so every test fails with it.
 */
final class DeclaredLimits {

    /** One limit: its component's name, its declaration, and its accessor. */
    record Declared(String name, Limit limit, Method accessor) {

        boolean setting() {
            return !limit.variable().isEmpty();
        }

        /** The smallest value it may have; a fixed bound has only its default. */
        long min() {
            return setting() ? limit.min() : limit.byDefault();
        }

        long max() {
            return setting() ? limit.max() : limit.byDefault();
        }

        Object toValue(long number) {
            return switch (limit.unit()) {
                case SECONDS -> Duration.ofSeconds(number);
                case MILLIS -> Duration.ofMillis(number);
                case BYTES, MEBIBYTES, COUNT -> Math.toIntExact(number);
            };
        }

        long toNumber(Limits limits) {
            Object value;
            try {
                value = accessor.invoke(limits);
            } catch (IllegalAccessException | InvocationTargetException e) {
                throw new IllegalStateException("reading the limit " + name, e);
            }
            return switch (limit.unit()) {
                case SECONDS -> ((Duration) value).toSeconds();
                case MILLIS -> ((Duration) value).toMillis();
                case BYTES, MEBIBYTES, COUNT -> (Integer) value;
            };
        }
    }

    static final List<Declared> DECLARED;
    private static final Map<String, Integer> INDEX;
    private static final Constructor<Limits> CANONICAL;
    static final Limits DEFAULTS;

    static {
        RecordComponent[] components = Limits.class.getRecordComponents();
        List<Declared> declared = new ArrayList<>();
        Map<String, Integer> index = new HashMap<>();
        Class<?>[] types = new Class<?>[components.length];
        for (RecordComponent component : components) {
            Declared limit = new Declared(component.getName(), component.getAnnotation(Limit.class), component.getAccessor());
            check(limit, component.getType(), declared);
            types[declared.size()] = component.getType();
            index.put(limit.name(), declared.size());
            declared.add(limit);
        }
        DECLARED = List.copyOf(declared);
        INDEX = Map.copyOf(index);
        try {
            CANONICAL = Limits.class.getDeclaredConstructor(types);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("a record has its canonical constructor", e);
        }
        DEFAULTS = build(DECLARED.stream().mapToLong(d -> d.limit().byDefault()).toArray());
    }

    private DeclaredLimits() {
    }

    private static void check(Declared limit, Class<?> type, List<Declared> before) {
        String name = "the limit " + limit.name();
        if (limit.limit() == null) {
            throw new IllegalStateException(name + " has no @Limit declaration");
        }
        Limit.Unit unit = limit.limit().unit();
        boolean duration = unit == Limit.Unit.SECONDS || unit == Limit.Unit.MILLIS;
        if (type != (duration ? Duration.class : int.class)) {
            throw new IllegalStateException(name + " is a " + type.getSimpleName() + " in " + unit);
        }
        long byDefault = limit.limit().byDefault();
        if (limit.min() > byDefault || byDefault > limit.max() || limit.max() > Integer.MAX_VALUE) {
            throw new IllegalStateException(name + "'s default " + byDefault + " is outside " + limit.min() + ".."
                    + limit.max());
        }
        String atMost = limit.limit().atMost();
        if (!atMost.isEmpty()) {
            Declared other = before.stream().filter(d -> d.name().equals(atMost)).findFirst()
                    .orElseThrow(() -> new IllegalStateException(name + " is at most " + atMost
                            + ", which is not a limit declared before it"));
            if (other.limit().unit() != unit || other.min() < limit.min()) {
                throw new IllegalStateException(name + " is at most " + atMost + ", of another unit or a smaller minimum");
            }
        }
    }

    /** Every setting from its variable in {@code env}, or at its default; fixed bounds at theirs. */
    static Limits read(Map<String, String> env) throws ConfigException {
        long[] numbers = new long[DECLARED.size()];
        for (int i = 0; i < numbers.length; i++) {
            Declared limit = DECLARED.get(i);
            long max = max(limit, numbers);
            String raw = limit.setting() ? env.get(limit.limit().variable()) : null;
            if (raw == null || raw.isBlank()) {
                numbers[i] = Math.min(limit.limit().byDefault(), max);
                continue;
            }
            Long parsed = wholeNumber(raw.strip());
            if (parsed == null || parsed < limit.min() || parsed > max) {
                String cap = max < limit.max() ? " (at most " + variableOf(limit.limit().atMost()) + ")" : "";
                throw new ConfigException(limit.limit().variable() + " must be a whole number from " + limit.min()
                        + " to " + max + cap + ", got '" + raw + "'");
            }
            numbers[i] = parsed;
        }
        return build(numbers);
    }

    /** The limits named in {@code values}, each once and within its range. */
    static Limits fromValues(Map<String, Long> values) {
        for (String name : values.keySet()) {
            if (!INDEX.containsKey(name)) {
                throw new IllegalArgumentException("an unknown limit '" + name + "'");
            }
        }
        long[] numbers = new long[DECLARED.size()];
        for (int i = 0; i < numbers.length; i++) {
            Declared limit = DECLARED.get(i);
            Long value = values.get(limit.name());
            if (value == null) {
                throw new IllegalArgumentException("no value for the limit " + limit.name());
            }
            long max = max(limit, numbers);
            if (value < limit.min() || value > max) {
                throw new IllegalArgumentException("the limit " + limit.name() + " at " + value + ", outside "
                        + limit.min() + ".." + max);
            }
            numbers[i] = value;
        }
        return build(numbers);
    }

    static Map<String, Long> values(Limits limits) {
        Map<String, Long> values = new LinkedHashMap<>();
        DECLARED.forEach(limit -> values.put(limit.name(), limit.toNumber(limits)));
        return values;
    }

    /** The largest value {@code limit} may have once the limits before it are {@code numbers}. */
    private static long max(Declared limit, long[] numbers) {
        String atMost = limit.limit().atMost();
        return atMost.isEmpty() ? limit.max() : Math.min(limit.max(), numbers[INDEX.get(atMost)]);
    }

    private static Long wholeNumber(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String variableOf(String name) {
        return DECLARED.get(INDEX.get(name)).limit().variable();
    }

    private static Limits build(long[] numbers) {
        Object[] values = new Object[numbers.length];
        for (int i = 0; i < numbers.length; i++) {
            values[i] = DECLARED.get(i).toValue(numbers[i]);
        }
        try {
            return CANONICAL.newInstance(values);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("building the limits", e);
        }
    }
}
