package dev.minibridge.bridge;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs every vector of openapi/bridge.vectors.json against the core, scripting the host app as
 * each vector says, and judges exactly: after each step, the messages posted to the page (the
 * envelope, every member the vector gives, numbers by their text, nothing added, the schema) and
 * what the delegate was handed. One test per vector, named by its id.
 */
final class VectorTests {
    private static final String SUITE = "vectors";

    private VectorTests() {}

    static List<TestResult> run(BridgeSchema schema, JsonValue.Obj file) {
        Map<String, Set<String>> freeText = pathsByType((JsonValue.Obj) file.get("freeText"));
        List<TestResult> results = new ArrayList<>();
        for (JsonValue item : ((JsonValue.Arr) file.get("vectors")).items()) {
            JsonValue.Obj vector = (JsonValue.Obj) item;
            String id = ((JsonValue.Str) vector.get("id")).value();
            List<String> problems = new ArrayList<>();
            try {
                runVector(schema, vector, freeText, problems);
            } catch (RuntimeException unexpected) {
                problems.add("threw " + unexpected);
            }
            results.add(new TestResult(SUITE, id, problems));
        }
        return results;
    }

    /** The host app as the vector scripts it: records what it is handed, keyed by the request being received. */
    private static final class ScriptedHost implements MiniappDelegate {
        final List<String> handed = new ArrayList<>();
        final Map<String, PaymentData> sheets = new HashMap<>();
        final Map<String, CustomEvent> events = new HashMap<>();
        String receiving;

        @Override
        public void didReceivePaymentEvent(Miniapp miniapp, PaymentData paymentData) {
            handed.add("{\"payment\":" + paymentData.json() + "}");
            sheets.put(receiving, paymentData);
        }

        @Override
        public void didReceiveCustomEvent(Miniapp miniapp, CustomEvent event) {
            handed.add("{\"customEvent\":{\"data\":" + event.dataJson() + ",\"expectsReply\":" + event.expectsReply() + "}}");
            if (event.expectsReply()) events.put(receiving, event);
        }
    }

    private static void runVector(BridgeSchema schema, JsonValue.Obj vector, Map<String, Set<String>> freeText, List<String> problems) {
        ScriptedHost host = new ScriptedHost();
        List<String> posted = new ArrayList<>();
        Miniapp miniapp = new Miniapp(schema, host, posted::add);
        Set<String> hostIds = new HashSet<>();
        int index = 0;
        for (JsonValue item : ((JsonValue.Arr) vector.get("steps")).items()) {
            JsonValue.Obj step = (JsonValue.Obj) item;
            String where = "step " + (++index);
            int postedBefore = posted.size();
            int handedBefore = host.handed.size();
            if (step.has("toHost")) {
                JsonValue message = step.get("toHost");
                host.receiving = message instanceof JsonValue.Obj object && object.get("id") instanceof JsonValue.Str id ? id.value() : null;
                // The message's text exactly as written in the vectors file: digits included.
                miniapp.receive(message.text());
            } else if (step.has("toHostText")) {
                host.receiving = null;
                miniapp.receive(((JsonValue.Str) step.get("toHostText")).value());
            } else if (step.get("user") instanceof JsonValue.Obj user && user.has("finishPayment")) {
                PaymentData sheet = host.sheets.get(((JsonValue.Str) user.get("finishPayment")).value());
                if (sheet == null) {
                    problems.add(where + ": the delegate was not handed this pay");
                } else {
                    sheet.setStatus(((JsonValue.Str) user.get("status")).value());
                    miniapp.sendPaymentEvent(sheet);
                }
            } else if (step.get("user") instanceof JsonValue.Obj user) {
                miniapp.sendHostEvent(((JsonValue.Obj) user.get("sendHostEvent")).get("detail").text());
            } else {
                JsonValue.Obj answer = (JsonValue.Obj) step.get("host");
                CustomEvent event = host.events.get(((JsonValue.Str) answer.get("answerCustomEvent")).value());
                if (event == null) {
                    problems.add(where + ": the delegate was not handed this custom event");
                } else if (((JsonValue.Bool) answer.get("ok")).value()) {
                    event.resolve(answer.has("result") ? answer.get("result").text() : null);
                } else {
                    JsonValue.Obj error = (JsonValue.Obj) answer.get("error");
                    event.reject(((JsonValue.Str) error.get("code")).value(), ((JsonValue.Str) error.get("message")).value());
                }
            }
            List<JsonValue> expected = step.get("answers") instanceof JsonValue.Arr answers ? answers.items() : List.of();
            List<String> sent = posted.subList(postedBefore, posted.size());
            if (sent.size() != expected.size()) problems.add(where + ": posted " + sent.size() + " message(s), expected " + expected.size() + ": " + sent);
            for (int i = 0; i < Math.min(sent.size(), expected.size()); i++) {
                String mismatch = answerMismatch(schema, (JsonValue.Obj) expected.get(i), sent.get(i), freeText, hostIds);
                if (mismatch != null) problems.add(where + ", answer " + (i + 1) + ": " + mismatch);
            }
            List<JsonValue> delivered = step.get("delivered") instanceof JsonValue.Arr deliveries ? deliveries.items() : List.of();
            List<String> handed = host.handed.subList(handedBefore, host.handed.size());
            if (handed.size() != delivered.size()) problems.add(where + ": the delegate was handed " + handed.size() + " thing(s), expected " + delivered.size());
            for (int i = 0; i < Math.min(handed.size(), delivered.size()); i++) {
                String difference = difference(delivered.get(i), parse(handed.get(i)), "handed", Set.of());
                if (difference != null) problems.add(where + ": " + difference);
            }
        }
    }

    private static String answerMismatch(BridgeSchema schema, JsonValue.Obj expected, String text, Map<String, Set<String>> freeText, Set<String> hostIds) {
        JsonValue parsed = parse(text);
        if (!(parsed instanceof JsonValue.Obj actual)) return "the answer is not an object: " + text;
        if (!BridgeSchema.same(actual.get("protocol"), schema.constOf("Protocol"))) return "protocol is " + actual.get("protocol");
        JsonValue version = expected.has("version") ? expected.get("version") : schema.constOf("ProtocolVersion");
        if (!(actual.get("version") instanceof JsonValue.Num number) || !number.text().equals(version.text())) return "version is not " + version.text() + ": " + text;
        if (actual.get("id") == null || !schema.validate("MessageId", actual.get("id")).isEmpty()) return "id is not a message id: " + text;
        if (!hostIds.add(((JsonValue.Str) actual.get("id")).value())) return "the host reused its message id: " + text;
        String type = ((JsonValue.Str) expected.get("type")).value();
        Set<String> skip = freeText.getOrDefault(type, Set.of());
        for (String member : actual.members().keySet()) {
            if (!expected.has(member) && !Set.of("protocol", "version", "id").contains(member) && !skip.contains(member)) return "the member " + member + " was added: " + text;
        }
        for (Map.Entry<String, JsonValue> member : expected.members().entrySet()) {
            String difference = difference(member.getValue(), actual.get(member.getKey()), member.getKey(), skip);
            if (difference != null) return difference + ": " + text;
        }
        String definition = switch (type) {
            case "pay_result" -> "PayResult";
            case "custom_event_result" -> "CustomEventResult";
            case "host_event" -> "HostEvent";
            default -> "BridgeError";
        };
        List<BridgeSchema.Violation> violations = schema.validate(definition, actual);
        return violations.isEmpty() ? null : "breaks the schema: " + violations;
    }

    /** Where two values differ (numbers by their text, strings by value, objects by members), or null. */
    static String difference(JsonValue expected, JsonValue actual, String path, Set<String> skip) {
        if (skip.contains(path)) return actual == null ? path + " is missing" : null;
        if (actual == null) return path + " is missing";
        if (expected instanceof JsonValue.Num number) {
            return actual instanceof JsonValue.Num other && other.text().equals(number.text()) ? null : path + " is " + actual.text() + ", not " + number.text();
        }
        if (expected instanceof JsonValue.Obj object) {
            if (!(actual instanceof JsonValue.Obj other)) return path + " is not an object";
            for (String key : other.members().keySet()) {
                if (!object.has(key) && !skip.contains(path + "." + key)) return "the member " + path + "." + key + " was added";
            }
            for (Map.Entry<String, JsonValue> member : object.members().entrySet()) {
                String difference = difference(member.getValue(), other.get(member.getKey()), path + "." + member.getKey(), skip);
                if (difference != null) return difference;
            }
            return null;
        }
        if (expected instanceof JsonValue.Arr array) {
            if (!(actual instanceof JsonValue.Arr other) || other.items().size() != array.items().size()) return path + " is not an array of " + array.items().size();
            for (int i = 0; i < array.items().size(); i++) {
                String difference = difference(array.items().get(i), other.items().get(i), path + "[" + i + "]", skip);
                if (difference != null) return difference;
            }
            return null;
        }
        return BridgeSchema.same(expected, actual) && expected.typeName().equals(actual.typeName()) ? null : path + " is " + actual.text() + ", not " + expected.text();
    }

    private static Map<String, Set<String>> pathsByType(JsonValue.Obj byType) {
        Map<String, Set<String>> paths = new HashMap<>();
        for (Map.Entry<String, JsonValue> entry : byType.members().entrySet()) {
            Set<String> set = new HashSet<>();
            for (JsonValue path : ((JsonValue.Arr) entry.getValue()).items()) set.add(((JsonValue.Str) path).value());
            paths.put(entry.getKey(), set);
        }
        return paths;
    }

    static JsonValue parse(String text) {
        try {
            return Json.parse(text);
        } catch (Json.ParseException broken) {
            throw new IllegalStateException("not JSON: " + text, broken);
        }
    }
}
