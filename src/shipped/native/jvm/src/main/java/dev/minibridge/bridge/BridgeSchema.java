package dev.minibridge.bridge;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The bridge schema (generated/sdk/bridge.schema.json, bundled from openapi/bridge.schema.yaml)
 * and a validator for it. The rules are read from the schema itself, never copied into code: a
 * host app bundles the same bridge.schema.json the JS SDK was built from, so both sides refuse
 * exactly the same messages.
 *
 * <p>The validator knows the JSON Schema 2020-12 keywords the bridge schema uses, and the
 * contract's {@code x-decimal} (digit limits judged on a number's source text, so
 * {@code 12345678901234567.89} is counted as written). Loading a schema that uses any other
 * keyword fails at once rather than ignoring a rule (ADR 0040).
 */
public final class BridgeSchema {
    /** One way a value breaks the schema: where (a JSON pointer, "" for the whole value) and why. */
    public record Violation(String path, String message) {
        @Override
        public String toString() {
            return (path.isEmpty() ? "/" : path) + " " + message;
        }
    }

    /** Keywords that validate; everything here is implemented below. */
    private static final Set<String> ASSERTIONS = Set.of(
            "type", "const", "enum", "required", "properties", "additionalProperties", "minLength", "maxLength", "pattern",
            "minimum", "maximum", "anyOf", "oneOf", "allOf", "if", "then", "else", "$ref", "x-decimal");
    /** Keywords that only describe. */
    private static final Set<String> ANNOTATIONS = Set.of(
            "$schema", "$id", "$defs", "$comment", "title", "description", "examples", "x-error-codes");

    private final JsonValue.Obj root;
    private final Map<String, Pattern> patterns = new HashMap<>();

    private BridgeSchema(JsonValue.Obj root) {
        this.root = root;
    }

    /** Reads bridge.schema.json and checks that every keyword in it is one this validator applies. */
    public static BridgeSchema parse(String schemaJson) throws Json.ParseException {
        JsonValue value = Json.parse(schemaJson);
        if (!(value instanceof JsonValue.Obj root)) throw new IllegalArgumentException("the bridge schema is not a JSON object");
        BridgeSchema schema = new BridgeSchema(root);
        schema.checkKeywords(root, "#");
        return schema;
    }

    /** Validates value against {@code $defs/<definition>}; an empty list when it conforms. */
    public List<Violation> validate(String definition, JsonValue value) {
        List<Violation> violations = new ArrayList<>();
        check(definition(definition), value, "", violations);
        return violations;
    }

    /** The {@code const} of a definition, e.g. {@code Protocol} gives the protocol marker. */
    public JsonValue constOf(String definition) {
        JsonValue value = definition(definition).get("const");
        if (value == null) throw new IllegalStateException("bridge schema: $defs/" + definition + " has no const");
        return value;
    }

    /** The {@code const} of a definition's member, e.g. ("PayRequest", "type") gives "pay". */
    public String memberConst(String definition, String member) {
        JsonValue properties = definition(definition).get("properties");
        JsonValue property = properties instanceof JsonValue.Obj object ? object.get(member) : null;
        if (property instanceof JsonValue.Obj object && object.get("const") instanceof JsonValue.Str text) return text.value();
        throw new IllegalStateException("bridge schema: $defs/" + definition + "/properties/" + member + " has no string const");
    }

    /** A code of {@code ErrorDetail.code}'s {@code x-error-codes}; throws when the schema does not list it. */
    public String errorCode(String code) {
        JsonValue.Obj detail = definition("ErrorDetail");
        JsonValue codes = ((JsonValue.Obj) ((JsonValue.Obj) detail.get("properties")).get("code")).get("x-error-codes");
        if (codes instanceof JsonValue.Obj listed && listed.has(code)) return code;
        throw new IllegalStateException("bridge schema: x-error-codes does not list " + code);
    }

    /** The {@code maxLength} of a definition's string member, e.g. ("ErrorDetail", "message"). */
    public int maxLength(String definition, String member) {
        JsonValue properties = definition(definition).get("properties");
        JsonValue property = properties instanceof JsonValue.Obj object ? object.get(member) : null;
        if (property instanceof JsonValue.Obj object && object.get("maxLength") instanceof JsonValue.Num max) return max.decimal().intValueExact();
        throw new IllegalStateException("bridge schema: $defs/" + definition + "/properties/" + member + " has no maxLength");
    }

    /** The statuses a host may set (the enum of {@code PaymentResultStatus}). */
    public List<String> paymentResultStatuses() {
        List<String> statuses = new ArrayList<>();
        if (definition("PaymentResultStatus").get("enum") instanceof JsonValue.Arr values) {
            for (JsonValue value : values.items()) if (value instanceof JsonValue.Str text) statuses.add(text.value());
        }
        return statuses;
    }

    private JsonValue.Obj definition(String name) {
        JsonValue defs = root.get("$defs");
        JsonValue found = defs instanceof JsonValue.Obj object ? object.get(name) : null;
        if (found instanceof JsonValue.Obj schema) return schema;
        throw new IllegalArgumentException("bridge schema: no $defs/" + name);
    }

    private void checkKeywords(JsonValue.Obj schema, String where) {
        for (Map.Entry<String, JsonValue> entry : schema.members().entrySet()) {
            String keyword = entry.getKey();
            JsonValue value = entry.getValue();
            if (!ASSERTIONS.contains(keyword) && !ANNOTATIONS.contains(keyword)) {
                throw new IllegalArgumentException("bridge schema: this validator does not apply the keyword " + keyword + " (at " + where + ")");
            }
            switch (keyword) {
                case "properties", "$defs" -> {
                    for (Map.Entry<String, JsonValue> member : ((JsonValue.Obj) value).members().entrySet()) {
                        if (member.getValue() instanceof JsonValue.Obj inner) checkKeywords(inner, where + "/" + keyword + "/" + member.getKey());
                    }
                }
                case "anyOf", "oneOf", "allOf" -> {
                    int index = 0;
                    for (JsonValue item : ((JsonValue.Arr) value).items()) {
                        if (item instanceof JsonValue.Obj inner) checkKeywords(inner, where + "/" + keyword + "/" + index);
                        index++;
                    }
                }
                case "additionalProperties", "if", "then", "else" -> {
                    if (value instanceof JsonValue.Obj inner) checkKeywords(inner, where + "/" + keyword);
                }
                case "pattern" -> patterns.computeIfAbsent(((JsonValue.Str) value).value(), Pattern::compile);
                default -> {}
            }
        }
    }

    private boolean conforms(JsonValue schema, JsonValue value, String path) {
        List<Violation> scratch = new ArrayList<>();
        check(schema, value, path, scratch);
        return scratch.isEmpty();
    }

    private void check(JsonValue schemaValue, JsonValue value, String path, List<Violation> out) {
        if (schemaValue instanceof JsonValue.Bool bool) {
            if (!bool.value()) out.add(new Violation(path, "is not allowed here"));
            return;
        }
        JsonValue.Obj schema = (JsonValue.Obj) schemaValue;
        if (schema.get("$ref") instanceof JsonValue.Str ref) check(resolve(ref.value()), value, path, out);
        JsonValue type = schema.get("type");
        if (type != null && !hasType(type, value)) {
            out.add(new Violation(path, "must be " + typeNames(type)));
            return; // the other keywords would only repeat it
        }
        JsonValue constant = schema.get("const");
        if (constant != null && !same(constant, value)) out.add(new Violation(path, "must be " + constant.text()));
        if (schema.get("enum") instanceof JsonValue.Arr values && values.items().stream().noneMatch(item -> same(item, value))) {
            out.add(new Violation(path, "must be one of " + values.text()));
        }
        if (value instanceof JsonValue.Str text) checkString(schema, text.value(), path, out);
        if (value instanceof JsonValue.Num number) checkNumber(schema, number, path, out);
        if (value instanceof JsonValue.Obj object) checkObject(schema, object, path, out);
        if (schema.get("x-decimal") instanceof JsonValue.Obj rule) {
            String text = value instanceof JsonValue.Str string ? string.value() : value instanceof JsonValue.Num number ? number.text() : null;
            String problem = text == null ? null : Decimals.violation(text, rule);
            if (problem != null) out.add(new Violation(path, problem));
        }
        if (schema.get("allOf") instanceof JsonValue.Arr all) for (JsonValue item : all.items()) check(item, value, path, out);
        if (schema.get("anyOf") instanceof JsonValue.Arr any && any.items().stream().noneMatch(item -> conforms(item, value, path))) {
            out.add(new Violation(path, "matches none of its allowed forms"));
        }
        if (schema.get("oneOf") instanceof JsonValue.Arr one) {
            long matches = one.items().stream().filter(item -> conforms(item, value, path)).count();
            if (matches != 1) out.add(new Violation(path, matches == 0 ? "matches none of its allowed forms" : "matches more than one of its forms"));
        }
        JsonValue condition = schema.get("if");
        if (condition != null) {
            JsonValue branch = conforms(condition, value, path) ? schema.get("then") : schema.get("else");
            if (branch != null) check(branch, value, path, out);
        }
    }

    private void checkString(JsonValue.Obj schema, String value, String path, List<Violation> out) {
        int length = value.codePointCount(0, value.length());
        if (schema.get("minLength") instanceof JsonValue.Num min && length < min.decimal().intValueExact()) {
            out.add(new Violation(path, "must have at least " + min.text() + " characters"));
        }
        if (schema.get("maxLength") instanceof JsonValue.Num max && length > max.decimal().intValueExact()) {
            out.add(new Violation(path, "must have at most " + max.text() + " characters"));
        }
        if (schema.get("pattern") instanceof JsonValue.Str pattern && !patterns.get(pattern.value()).matcher(value).find()) {
            out.add(new Violation(path, "must match " + pattern.value()));
        }
    }

    private void checkNumber(JsonValue.Obj schema, JsonValue.Num number, String path, List<Violation> out) {
        // Compared on the text (JsonValue.Num): never a BigDecimal of a number from a message.
        if (schema.get("minimum") instanceof JsonValue.Num min && number.compareTo(min) < 0) {
            out.add(new Violation(path, "must be at least " + min.text()));
        }
        if (schema.get("maximum") instanceof JsonValue.Num max && number.compareTo(max) > 0) {
            out.add(new Violation(path, "must be at most " + max.text()));
        }
    }

    private void checkObject(JsonValue.Obj schema, JsonValue.Obj object, String path, List<Violation> out) {
        if (schema.get("required") instanceof JsonValue.Arr required) {
            for (JsonValue name : required.items()) {
                String member = ((JsonValue.Str) name).value();
                if (!object.has(member)) out.add(new Violation(path, "must have the member " + member));
            }
        }
        JsonValue.Obj properties = schema.get("properties") instanceof JsonValue.Obj found ? found : null;
        JsonValue additional = schema.get("additionalProperties");
        for (Map.Entry<String, JsonValue> member : object.members().entrySet()) {
            String at = path + "/" + member.getKey().replace("~", "~0").replace("/", "~1");
            JsonValue property = properties == null ? null : properties.get(member.getKey());
            if (property != null) check(property, member.getValue(), at, out);
            else if (additional instanceof JsonValue.Bool allowed && !allowed.value()) out.add(new Violation(path, "must not have the member " + member.getKey()));
            else if (additional instanceof JsonValue.Obj) check(additional, member.getValue(), at, out);
        }
    }

    private JsonValue resolve(String ref) {
        if (!ref.startsWith("#")) throw new IllegalStateException("bridge schema: only local $refs are supported, not " + ref);
        JsonValue node = root;
        for (String part : ref.substring(1).split("/")) {
            if (part.isEmpty()) continue;
            String name = part.replace("~1", "/").replace("~0", "~");
            if (!(node instanceof JsonValue.Obj object) || !object.has(name)) throw new IllegalStateException("bridge schema: unresolvable $ref " + ref);
            node = object.get(name);
        }
        return node;
    }

    private static boolean hasType(JsonValue type, JsonValue value) {
        if (type instanceof JsonValue.Arr types) return types.items().stream().anyMatch(item -> hasType(item, value));
        String name = ((JsonValue.Str) type).value();
        if (name.equals("integer")) return value instanceof JsonValue.Num number && number.isInteger();
        return name.equals(value.typeName());
    }

    private static String typeNames(JsonValue type) {
        if (type instanceof JsonValue.Arr types) {
            List<String> names = new ArrayList<>();
            for (JsonValue item : types.items()) names.add(((JsonValue.Str) item).value());
            return "one of " + String.join(", ", names);
        }
        String name = ((JsonValue.Str) type).value();
        return (name.equals("integer") || name.equals("object") || name.equals("array") ? "an " : "a ") + name;
    }

    /** JSON equality: numbers by value (1 and 1.0 are the same number), objects by members. */
    static boolean same(JsonValue a, JsonValue b) {
        if (a instanceof JsonValue.Num x && b instanceof JsonValue.Num y) return x.compareTo(y) == 0;
        if (a instanceof JsonValue.Str x && b instanceof JsonValue.Str y) return x.value().equals(y.value());
        if (a instanceof JsonValue.Bool x && b instanceof JsonValue.Bool y) return x.value() == y.value();
        if (a instanceof JsonValue.Null && b instanceof JsonValue.Null) return true;
        if (a instanceof JsonValue.Arr x && b instanceof JsonValue.Arr y) {
            if (x.items().size() != y.items().size()) return false;
            for (int i = 0; i < x.items().size(); i++) if (!same(x.items().get(i), y.items().get(i))) return false;
            return true;
        }
        if (a instanceof JsonValue.Obj x && b instanceof JsonValue.Obj y) {
            if (!x.members().keySet().equals(y.members().keySet())) return false;
            for (String key : x.members().keySet()) if (!same(x.get(key), y.get(key))) return false;
            return true;
        }
        return false;
    }

    /** The contract's {@code x-decimal} rule (src/contract/decimal.ts): digits and range, on the text as sent. */
    static final class Decimals {
        private static final Pattern PLAIN = Pattern.compile("^(-?)(0|[1-9][0-9]*)(?:\\.([0-9]+))?$");

        private Decimals() {}

        static String violation(String text, JsonValue.Obj rule) {
            var match = PLAIN.matcher(text);
            if (!match.matches()) return "must be a plain decimal number (digits, an optional point, no exponent)";
            String integer = match.group(2);
            String fraction = match.group(3) == null ? "" : match.group(3);
            int precision = ((JsonValue.Num) rule.get("precision")).decimal().intValueExact();
            int scale = ((JsonValue.Num) rule.get("scale")).decimal().intValueExact();
            if (fraction.length() > scale || integer.length() + fraction.length() > precision) {
                return "must have at most " + precision + " digits and at most " + scale + " after the decimal point";
            }
            BigDecimal value = new BigDecimal(text);
            if (rule.get("minimum") instanceof JsonValue.Str min && value.compareTo(new BigDecimal(min.value())) < 0) return "must be at least " + min.value();
            if (rule.get("maximum") instanceof JsonValue.Str max && value.compareTo(new BigDecimal(max.value())) > 0) return "must be at most " + max.value();
            // A negative zero: a range without negative values admits no sign either (ADR 0015).
            if (!match.group(1).isEmpty() && rule.get("minimum") instanceof JsonValue.Str min && !min.value().startsWith("-")) {
                return "must be written without a sign";
            }
            return null;
        }
    }
}
