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

    /** A number, kept as its source text; {@link #decimal()} reads it exactly, never as a double. */
    record Num(String text) implements JsonValue {
        /** The exact value, or null when the exponent is beyond what BigDecimal holds (such a number is valid JSON but no amount). */
        public BigDecimal decimal() {
            try {
                return new BigDecimal(text);
            } catch (NumberFormatException | ArithmeticException tooLarge) {
                return null;
            }
        }

        @Override
        public String typeName() {
            return "number";
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
