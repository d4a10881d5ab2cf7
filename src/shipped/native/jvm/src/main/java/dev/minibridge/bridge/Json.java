package dev.minibridge.bridge;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader (RFC 8259) and string writer, because this core may depend on nothing but
 * the JDK (ADR 0040); swap in your own library if it keeps numbers' source text and refuses
 * repeated member names.
 *
 * <p>It keeps what a payment bridge needs and generic parsers lose: every number's exact text,
 * and the source text of every value. It refuses text a bridge message can never be: repeated
 * member names (two readers could see two different messages), anything after the value. It
 * reads iteratively, so deeply nested input cannot overflow the stack.
 */
public final class Json {
    private Json() {}

    /** Thrown for text that is not one JSON value. */
    public static final class ParseException extends Exception {
        private static final long serialVersionUID = 1L;

        ParseException(String message, int at) {
            super(message + " at character " + at);
        }
    }

    /** Reads exactly one JSON value (whitespace around it allowed). */
    public static JsonValue parse(String text) throws ParseException {
        return new Reader(text).document();
    }

    /**
     * A JSON string literal of value: quotes, backslashes and control characters escaped, and
     * U+2028 and U+2029 too, so the literal is also valid JavaScript source.
     */
    public static String quote(String value) {
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        return out.append('"').toString();
    }

    private static final class Frame {
        final boolean object;
        final int start;
        final Map<String, JsonValue> members = new LinkedHashMap<>();
        final List<JsonValue> items = new ArrayList<>();
        String pendingName;

        Frame(boolean object, int start) {
            this.object = object;
            this.start = start;
        }
    }

    private static final class Reader {
        private final String text;
        private int at;

        Reader(String text) {
            this.text = text;
        }

        JsonValue document() throws ParseException {
            Deque<Frame> open = new ArrayDeque<>();
            JsonValue done = null;
            skipWhitespace();
            while (true) {
                JsonValue value;
                char c = peek("a value");
                if (c == '{' || c == '[') {
                    Frame frame = new Frame(c == '{', at);
                    at++;
                    skipWhitespace();
                    char close = frame.object ? '}' : ']';
                    if (peek("a value or " + close) == close) {
                        at++;
                        value = finish(frame);
                    } else {
                        open.push(frame);
                        if (frame.object) readName(frame);
                        continue;
                    }
                } else {
                    value = scalar();
                }
                // Attach the finished value to the containers it completes, innermost first.
                while (true) {
                    Frame parent = open.peek();
                    if (parent == null) {
                        done = value;
                        break;
                    }
                    if (parent.object) parent.members.put(parent.pendingName, value);
                    else parent.items.add(value);
                    skipWhitespace();
                    char next = peek(parent.object ? "',' or '}'" : "',' or ']'");
                    if (next == ',') {
                        at++;
                        skipWhitespace();
                        if (parent.object) readName(parent);
                        break;
                    }
                    if (next != (parent.object ? '}' : ']')) throw new ParseException("expected " + (parent.object ? "',' or '}'" : "',' or ']'"), at);
                    at++;
                    open.pop();
                    value = finish(parent);
                }
                if (done != null) break;
            }
            skipWhitespace();
            if (at != text.length()) throw new ParseException("unexpected text after the value", at);
            return done;
        }

        private JsonValue finish(Frame frame) {
            JsonValue.Source source = new JsonValue.Source(text, frame.start, at);
            return frame.object ? new JsonValue.Obj(frame.members, source) : new JsonValue.Arr(frame.items, source);
        }

        private void readName(Frame frame) throws ParseException {
            if (peek("a member name") != '"') throw new ParseException("expected a member name", at);
            String name = string().value();
            if (frame.members.containsKey(name)) throw new ParseException("repeated member name " + quote(name), at);
            skipWhitespace();
            if (peek("':'") != ':') throw new ParseException("expected ':'", at);
            at++;
            skipWhitespace();
            frame.pendingName = name;
        }

        private JsonValue scalar() throws ParseException {
            char c = peek("a value");
            if (c == '"') return string();
            if (c == '-' || (c >= '0' && c <= '9')) return number();
            if (text.startsWith("true", at)) {
                at += 4;
                return new JsonValue.Bool(true);
            }
            if (text.startsWith("false", at)) {
                at += 5;
                return new JsonValue.Bool(false);
            }
            if (text.startsWith("null", at)) {
                at += 4;
                return new JsonValue.Null();
            }
            throw new ParseException("unexpected character " + quote(String.valueOf(c)), at);
        }

        private JsonValue.Str string() throws ParseException {
            int start = at;
            at++; // the opening quote
            StringBuilder value = new StringBuilder();
            while (true) {
                if (at >= text.length()) throw new ParseException("unterminated string", start);
                char c = text.charAt(at++);
                if (c == '"') break;
                if (c < 0x20) throw new ParseException("control character in a string", at - 1);
                if (c != '\\') {
                    value.append(c);
                    continue;
                }
                if (at >= text.length()) throw new ParseException("unterminated escape", at);
                char escape = text.charAt(at++);
                switch (escape) {
                    case '"' -> value.append('"');
                    case '\\' -> value.append('\\');
                    case '/' -> value.append('/');
                    case 'b' -> value.append('\b');
                    case 'f' -> value.append('\f');
                    case 'n' -> value.append('\n');
                    case 'r' -> value.append('\r');
                    case 't' -> value.append('\t');
                    case 'u' -> {
                        if (at + 4 > text.length()) throw new ParseException("short \\u escape", at);
                        int code = 0;
                        for (int i = 0; i < 4; i++) {
                            int digit = Character.digit(text.charAt(at + i), 16);
                            if (digit < 0) throw new ParseException("bad \\u escape", at);
                            code = code * 16 + digit;
                        }
                        at += 4;
                        value.append((char) code);
                    }
                    default -> throw new ParseException("bad escape \\" + escape, at - 1);
                }
            }
            return new JsonValue.Str(value.toString(), new JsonValue.Source(text, start, at));
        }

        private JsonValue.Num number() throws ParseException {
            int start = at;
            if (text.charAt(at) == '-') at++;
            if (at < text.length() && text.charAt(at) == '0') at++;
            else if (!digits()) throw new ParseException("bad number", start);
            if (at < text.length() && text.charAt(at) == '.') {
                at++;
                if (!digits()) throw new ParseException("bad number: no digit after the point", start);
            }
            if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
                at++;
                if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) at++;
                if (!digits()) throw new ParseException("bad number: no digit in the exponent", start);
            }
            return new JsonValue.Num(text.substring(start, at));
        }

        private boolean digits() {
            int start = at;
            while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') at++;
            return at > start;
        }

        private void skipWhitespace() {
            while (at < text.length()) {
                char c = text.charAt(at);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
                at++;
            }
        }

        private char peek(String expected) throws ParseException {
            if (at >= text.length()) throw new ParseException("expected " + expected + ", found the end", at);
            return text.charAt(at);
        }
    }
}
