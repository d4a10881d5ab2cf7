package dev.minibridge.bridge;

import java.math.BigDecimal;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A JSON value as {@link Json#parse} read it. Every value remembers its exact source text
 * ({@link #text()}), so a number keeps every digit as written ({@code 125000.50} stays
 * {@code 125000.50}) and a value the host hands back is the value the miniapp sent. Money never
 * passes through a {@code double} here.
 */
public sealed interface JsonValue permits JsonValue.Obj, JsonValue.Arr, JsonValue.Str, JsonValue.Num, JsonValue.Bool, JsonValue.Null {

    /** The value's source text, exactly as it appeared in the parsed document. */
    String text();

    /** The JSON type's name as JSON Schema spells it ("object", "array", "string", "number", "boolean", "null"). */
    String typeName();

    /** An object; members in document order, names distinct (the reader refuses repeated names). */
    record Obj(Map<String, JsonValue> members, Source source) implements JsonValue {
        public Obj {
            members = Collections.unmodifiableMap(members);
        }

        public JsonValue get(String name) {
            return members.get(name);
        }

        public boolean has(String name) {
            return members.containsKey(name);
        }

        @Override
        public String text() {
            return source.text();
        }

        @Override
        public String typeName() {
            return "object";
        }
    }

    record Arr(List<JsonValue> items, Source source) implements JsonValue {
        public Arr {
            items = Collections.unmodifiableList(items);
        }

        @Override
        public String text() {
            return source.text();
        }

        @Override
        public String typeName() {
            return "array";
        }
    }

    /** A string: its decoded value and its source text (quotes and escapes as written). */
    record Str(String value, Source source) implements JsonValue {
        /** A string made by code rather than read: its text is its JSON literal. */
        public static Str of(String value) {
            String literal = Json.quote(value);
            return new Str(value, new Source(literal, 0, literal.length()));
        }

        @Override
        public String text() {
            return source.text();
        }

        @Override
        public String typeName() {
            return "string";
        }
    }

    /**
     * A number, kept as its source text; {@link #decimal()} reads it exactly, never as a double.
     * {@link #compareTo(Num)} and {@link #isInteger()} work on the text in time linear in its
     * length: BigDecimal reads digits in quadratic time, so the validator never builds one for a
     * number from a message (a version of a million digits would hold the bridge for minutes).
     */
    record Num(String text) implements JsonValue {
        /** The exact value, or null when the exponent is beyond what BigDecimal holds (such a number is valid JSON but no amount). */
        public BigDecimal decimal() {
            try {
                return new BigDecimal(text);
            } catch (NumberFormatException | ArithmeticException tooLarge) {
                return null;
            }
        }

        /** Compares the values exactly ({@code 1}, {@code 1.0} and {@code 10e-1} are equal), whatever their size. */
        public int compareTo(Num other) {
            Normal a = Normal.of(text);
            Normal b = Normal.of(other.text);
            if (a.sign() != b.sign()) return Integer.compare(a.sign(), b.sign());
            if (a.sign() == 0) return 0;
            int magnitude = a.point() != b.point() ? Long.compare(a.point(), b.point()) : a.digits().compareTo(b.digits());
            return a.sign() * Integer.signum(magnitude);
        }

        /** Whether the value is a whole number ({@code 1.0} and {@code 1E2} are; {@code 1.5} and {@code 1E-2} are not). */
        public boolean isInteger() {
            Normal normal = Normal.of(text);
            return normal.sign() == 0 || normal.digits().length() <= normal.point();
        }

        @Override
        public String typeName() {
            return "number";
        }

        /**
         * value = sign × 0.{@code digits} × 10^{@code point}: digits without leading or trailing
         * zeros (empty for zero). An exponent of more than 18 digits is held as ±2^60: numbers that
         * large or small compare rightly with any number of a sensible size, such as the schema's.
         */
        private record Normal(int sign, String digits, long point) {
            private static final long FAR = 1L << 60;

            static Normal of(String text) {
                int at = 0;
                boolean negative = text.startsWith("-");
                if (negative) at++;
                int exponentAt = Math.max(text.indexOf('e'), text.indexOf('E'));
                int end = exponentAt < 0 ? text.length() : exponentAt;
                int pointAt = text.indexOf('.', at);
                String integer = text.substring(at, pointAt < 0 ? end : pointAt);
                String mantissa = pointAt < 0 ? integer : integer + text.substring(pointAt + 1, end);
                int first = 0;
                while (first < mantissa.length() && mantissa.charAt(first) == '0') first++;
                if (first == mantissa.length()) return new Normal(0, "", 0);
                int last = mantissa.length();
                while (mantissa.charAt(last - 1) == '0') last--;
                long exponent = exponentAt < 0 ? 0 : exponent(text.substring(exponentAt + 1));
                return new Normal(negative ? -1 : 1, mantissa.substring(first, last), integer.length() - first + exponent);
            }

            private static long exponent(String text) {
                boolean negative = text.startsWith("-");
                int at = negative || text.startsWith("+") ? 1 : 0;
                while (at < text.length() - 1 && text.charAt(at) == '0') at++;
                String digits = text.substring(at);
                long value = digits.length() > 18 ? FAR : Math.min(Long.parseLong(digits), FAR);
                return negative ? -value : value;
            }
        }
    }

    record Bool(boolean value) implements JsonValue {
        @Override
        public String text() {
            return value ? "true" : "false";
        }

        @Override
        public String typeName() {
            return "boolean";
        }
    }

    record Null() implements JsonValue {
        @Override
        public String text() {
            return "null";
        }

        @Override
        public String typeName() {
            return "null";
        }
    }

    /** Where a value sits in its document: the text is cut out only when asked for. */
    record Source(String document, int start, int end) {
        public String text() {
            return document.substring(start, end);
        }
    }
}
