package dev.minibridge.bridge;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The core's own cases, beyond the shared vectors: the JSON reader's edges, the schema loader's
 * refusal of keywords it does not apply, and what the API refuses a host app (a second answer, a
 * status outside the schema, another sheet's paymentData, a detail breaking the schema).
 */
final class CoreTests {
    private static final String SUITE = "core";
    private static final String PAY = "{\"protocol\":\"minibridge-bridge\",\"version\":1,\"id\":\"%s\",\"type\":\"pay\",\"paymentData\":%s}";
    private static final String DATA = "{\"amount\":\"125000.50\",\"currency\":\"VND\",\"orderPaymentId\":\"hop_1\"}";
    private static final String CUSTOM_EVENT = "{\"protocol\":\"minibridge-bridge\",\"version\":1,\"id\":\"%s\",\"type\":\"custom_event\",\"eventName\":\"MinibridgeWebAppCustomEvent\",\"data\":{\"type\":\"t\",\"payload\":%s},\"expectsReply\":%s}";

    private CoreTests() {}

    /** A failed expectation inside a case. */
    private static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message);
        }
    }

    @FunctionalInterface
    private interface Case {
        void run() throws Exception;
    }

    private static void expect(boolean condition, String message) {
        if (!condition) throw new Failure(message);
    }

    private static void expectEquals(Object expected, Object actual, String what) {
        if (!expected.equals(actual)) throw new Failure(what + ": expected " + expected + ", got " + actual);
    }

    private static <T extends Throwable> T expectThrows(Class<T> type, Case body, String what) {
        try {
            body.run();
        } catch (Throwable thrown) {
            if (type.isInstance(thrown)) return type.cast(thrown);
            throw new Failure(what + ": threw " + thrown + ", not " + type.getSimpleName());
        }
        throw new Failure(what + ": did not throw " + type.getSimpleName());
    }

    /** A JSON number: sign, leading zeros only alone, digits on both sides of the point, an exponent. */
    private static String randomNumber(java.util.Random random, String[] exponents) {
        StringBuilder number = new StringBuilder();
        if (random.nextBoolean()) number.append('-');
        int digits = 1 + random.nextInt(random.nextInt(5) == 0 ? 40 : 4);
        number.append(random.nextInt(3) == 0 ? "0" : String.valueOf(1 + random.nextInt(9)));
        if (number.charAt(number.length() - 1) != '0') for (int i = 1; i < digits; i++) number.append(random.nextInt(10));
        if (random.nextBoolean()) {
            number.append('.');
            int fraction = 1 + random.nextInt(6);
            for (int i = 0; i < fraction; i++) number.append(random.nextInt(3) == 0 ? '0' : (char) ('0' + random.nextInt(10)));
        }
        return number.append(exponents[random.nextInt(exponents.length)]).toString();
    }

    /** A host that records what it is handed and what it posts. */
    private static final class Recorder implements MiniappDelegate {
        final List<PaymentData> payments = new ArrayList<>();
        final List<CustomEvent> events = new ArrayList<>();
        final List<String> refused = new ArrayList<>();
        final List<String> posted = new ArrayList<>();
        RuntimeException throwOnPay;
        RuntimeException throwOnEvent;

        @Override
        public void didReceivePaymentEvent(Miniapp miniapp, PaymentData paymentData) {
            payments.add(paymentData);
            if (throwOnPay != null) throw throwOnPay;
        }

        @Override
        public void didReceiveCustomEvent(Miniapp miniapp, CustomEvent event) {
            events.add(event);
            if (throwOnEvent != null) throw throwOnEvent;
        }

        @Override
        public void didRefuseMessage(Miniapp miniapp, String text, String reason) {
            refused.add(reason);
        }
    }

    static List<TestResult> run(String schemaText) throws Exception {
        BridgeSchema schema = BridgeSchema.parse(schemaText);
        Map<String, Case> cases = new LinkedHashMap<>();

        cases.put("json keeps every number's text", () -> {
            JsonValue.Obj value = (JsonValue.Obj) Json.parse("{\"a\":125000.50,\"b\":1E-7,\"c\":12345678901234567.89,\"d\":-0,\"e\":123456789012345678901234567890}");
            expectEquals("125000.50", value.get("a").text(), "a");
            expectEquals("1E-7", value.get("b").text(), "b");
            expectEquals("12345678901234567.89", value.get("c").text(), "c");
            expectEquals("-0", value.get("d").text(), "d");
            expectEquals("123456789012345678901234567890", value.get("e").text(), "e");
            expectEquals("{\"x\": [1, 2.50]}", ((JsonValue.Obj) Json.parse(" {\"o\": {\"x\": [1, 2.50]}} ")).get("o").text(), "nested source text");
        });
        cases.put("json refuses what is not one JSON value", () -> {
            for (String bad : List.of("", "{", "{\"a\":1,\"a\":2}", "{\"a\":1} x", "01", "1.", ".5", "+1", "1e", "\"abc", "\"a\u0001\"", "[1,]", "{\"a\" 1}", "nul", "\"\\x\"", "\"\\u12\"")) {
                expectThrows(Json.ParseException.class, () -> Json.parse(bad), "parse " + Json.quote(bad));
            }
        });
        cases.put("json reads deep nesting without recursion", () -> {
            int depth = 200_000;
            String deep = "[".repeat(depth) + "]".repeat(depth);
            expect(Json.parse(deep) instanceof JsonValue.Arr, "an array");
            String payload = "{\"protocol\":\"minibridge-bridge\",\"version\":1,\"id\":\"d-1\",\"type\":\"custom_event\",\"eventName\":\"MinibridgeWebAppCustomEvent\",\"data\":{\"type\":\"deep\",\"payload\":"
                    + deep + "},\"expectsReply\":false}";
            Recorder host = new Recorder();
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            miniapp.receive(payload);
            expectEquals(1, host.events.size(), "events handed");
            miniapp.receive(null);
            expectEquals(0, host.posted.size(), "nothing answered");
        });
        cases.put("json decodes escapes and quote() writes JavaScript-safe literals", () -> {
            JsonValue.Str text = (JsonValue.Str) Json.parse("\"\\u0070-\\ud83c\\udf81\\n\\/\"");
            expectEquals("p-\uD83C\uDF81\n/", text.value(), "decoded");
            expectEquals("\"a\\\"b\\\\c\\n\\u2028\\u2029\\u0001\"", Json.quote("a\"b\\c\n\u2028\u2029\u0001"), "quoted");
            expectEquals("window.postMessage(\"{\\\"a\\\":\\\"</script>\\u2028\\\"}\", '*');", BridgeScript.postMessage("{\"a\":\"</script>\u2028\"}"), "script");
        });
        cases.put("the schema loader refuses keywords it does not apply", () -> {
            String withFormat = schemaText.replaceFirst("\"maxLength\": 100", "\"maxLength\": 100, \"format\": \"uuid\"");
            expect(!withFormat.equals(schemaText), "the schema was changed");
            IllegalArgumentException refused = expectThrows(IllegalArgumentException.class, () -> BridgeSchema.parse(withFormat), "format");
            expect(refused.getMessage().contains("format"), "names the keyword: " + refused.getMessage());
        });
        cases.put("x-decimal counts the digits written", () -> {
            for (String good : List.of("12345678901234567.89", "99999999999999999999", "0", "0.5", "\"125000.50\"")) {
                expect(schema.validate("PaymentData", Json.parse("{\"amount\":" + good + ",\"currency\":\"VND\",\"orderPaymentId\":\"p\"}")).isEmpty(), good + " is valid");
            }
            for (String bad : List.of("123456789012345678901", "1.001", "-0", "-1", "1E5", "1e400", "\"1.001\"", "\"-0\"", "\"01\"")) {
                expect(!schema.validate("PaymentData", Json.parse("{\"amount\":" + bad + ",\"currency\":\"VND\",\"orderPaymentId\":\"p\"}")).isEmpty(), bad + " is refused");
            }
        });
        cases.put("numbers compare exactly, as BigDecimal does (seeded)", () -> {
            java.util.Random random = new java.util.Random(26);
            String[] exponents = {"", "e0", "E+3", "e-2", "E17", "e-21"};
            for (int i = 0; i < 5_000; i++) {
                String a = randomNumber(random, exponents);
                String b = random.nextInt(4) == 0 ? a : randomNumber(random, exponents);
                int expected = Integer.signum(new java.math.BigDecimal(a).compareTo(new java.math.BigDecimal(b)));
                int actual = Integer.signum(new JsonValue.Num(a).compareTo(new JsonValue.Num(b)));
                expectEquals(expected, actual, a + " vs " + b);
                boolean integer = new java.math.BigDecimal(a).stripTrailingZeros().scale() <= 0;
                expectEquals(integer, new JsonValue.Num(a).isInteger(), a + " is an integer");
            }
        });
        cases.put("numbers beyond BigDecimal's exponent are still numbers the schema judges", () -> {
            Recorder host = new Recorder();
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            // An integer of at least 1, but not 1: another version, not a malformed envelope.
            miniapp.receive("{\"protocol\":\"minibridge-bridge\",\"version\":1e99999999999999999999,\"id\":\"n-1\",\"type\":\"pay\"}");
            expect(host.posted.get(0).contains("\"code\":\"UNSUPPORTED_VERSION\""), host.posted.toString());
            // payload is any JSON value (`{}`): the core must not refuse a number it cannot hold.
            miniapp.receive(String.format(CUSTOM_EVENT, "n-2", "1e-2147483649", "false"));
            expectEquals(1, host.events.size(), "the custom event is handed on");
            expectEquals("1e-2147483649", host.events.get(0).payloadJson(), "payload text");
        });
        cases.put("a number of a million digits is judged in time linear in its text", () -> {
            // BigDecimal reads a number's digits in quadratic time: a 1 MB version held the lock
            // of receive (and so every sendPaymentEvent on the UI thread) for tens of minutes.
            String million = "0".repeat(1_000_000);
            Recorder host = new Recorder();
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            miniapp.receive("{\"protocol\":\"minibridge-bridge\",\"version\":1." + million + ",\"id\":\"m-1\",\"type\":\"pay\",\"paymentData\":" + DATA + "}");
            expectEquals(1, host.payments.size(), "version 1.000… is version 1: the pay is handed on");
            miniapp.receive("{\"protocol\":\"minibridge-bridge\",\"version\":1" + million + ",\"id\":\"m-2\",\"type\":\"custom_event\"}");
            miniapp.receive("{\"protocol\":\"minibridge-bridge\",\"version\":1." + million + "1,\"id\":\"m-3\",\"type\":\"custom_event\"}");
            miniapp.receive(String.format(CUSTOM_EVENT, "m-4", "9" + million.replace('0', '7') + "e-999999", "false"));
            expectEquals(2, host.posted.size(), "two refusals: " + host.posted.size());
            expect(host.posted.get(0).contains("\"replyTo\":\"m-2\"") && host.posted.get(0).contains("UNSUPPORTED_VERSION"), "m-2");
            expect(host.posted.get(1).contains("\"replyTo\":\"m-3\"") && host.posted.get(1).contains("INVALID_MESSAGE"), "m-3");
            expectEquals(1, host.events.size(), "the payload of a million digits is handed on");
        });
        cases.put("a pay is answered once: a second sendPaymentEvent throws and posts nothing", () -> {
            Recorder host = new Recorder();
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            miniapp.receive(String.format(PAY, "p-1", DATA));
            PaymentData paymentData = host.payments.get(0);
            expect(miniapp.paymentSheetOpen(), "the sheet is open");
            paymentData.setStatus("success");
            miniapp.sendPaymentEvent(paymentData);
            expectThrows(IllegalStateException.class, () -> miniapp.sendPaymentEvent(paymentData), "second answer");
            expectEquals(1, host.posted.size(), "posted");
            expect(host.posted.get(0).contains("\"amount\":\"125000.50\"") && host.posted.get(0).endsWith(",\"status\":\"success\"}}"), host.posted.get(0));
            expect(!miniapp.paymentSheetOpen(), "the sheet is closed");
        });
        cases.put("status must be set, and one of the schema's", () -> {
            Recorder host = new Recorder();
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            miniapp.receive(String.format(PAY, "p-2", DATA));
            PaymentData paymentData = host.payments.get(0);
            expectThrows(IllegalStateException.class, () -> miniapp.sendPaymentEvent(paymentData), "no status");
            expectThrows(IllegalArgumentException.class, () -> paymentData.setStatus("paid"), "paid");
            expectThrows(IllegalArgumentException.class, () -> paymentData.setStatus(null), "null");
            expectEquals(0, host.posted.size(), "posted");
            expectEquals(List.of("success", "failed", "cancelled"), schema.paymentResultStatuses(), "statuses from the schema");
        });
        cases.put("only the open sheet's paymentData can be answered", () -> {
            Recorder host = new Recorder();
            Miniapp first = new Miniapp(schema, host, host.posted::add);
            Miniapp second = new Miniapp(schema, host, host.posted::add);
            first.receive(String.format(PAY, "p-3", DATA));
            second.receive(String.format(PAY, "p-4", DATA));
            PaymentData other = host.payments.get(1);
            other.setStatus("cancelled");
            expectThrows(IllegalArgumentException.class, () -> first.sendPaymentEvent(other), "another sheet's");
            expectEquals(0, host.posted.size(), "posted");
        });
        cases.put("a delegate that throws on pay answers failed and closes the sheet", () -> {
            Recorder host = new Recorder();
            host.throwOnPay = new IllegalStateException("no UI");
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            miniapp.receive(String.format(PAY, "p-5", DATA));
            expectEquals(1, host.posted.size(), "posted");
            expect(host.posted.get(0).contains("\"replyTo\":\"p-5\"") && host.posted.get(0).contains("\"status\":\"failed\""), host.posted.get(0));
            expect(!miniapp.paymentSheetOpen(), "closed");
        });
        cases.put("custom events: answered once, never for send, refused by default and when the delegate throws", () -> {
            Recorder host = new Recorder();
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            String event = "{\"protocol\":\"minibridge-bridge\",\"version\":1,\"id\":\"%s\",\"type\":\"custom_event\",\"eventName\":\"MinibridgeWebAppCustomEvent\",\"data\":{\"type\":\"t\",\"payload\":[1.50]},\"expectsReply\":%s}";
            miniapp.receive(String.format(event, "c-1", "true"));
            CustomEvent promised = host.events.get(0);
            expectEquals("[1.50]", promised.payloadJson(), "payload text");
            promised.resolve("{\"n\":1.50}");
            expectThrows(IllegalStateException.class, () -> promised.resolve(null), "second answer");
            expect(host.posted.get(0).contains("\"replyTo\":\"c-1\",\"ok\":true,\"result\":{\"n\":1.50}"), host.posted.get(0));
            miniapp.receive(String.format(event, "c-2", "false"));
            expectThrows(IllegalStateException.class, () -> host.events.get(1).resolve(null), "send");
            expectThrows(IllegalArgumentException.class, () -> {
                miniapp.receive(String.format(event, "c-3", "true"));
                host.events.get(2).resolve("not json");
            }, "result not JSON");
            host.throwOnEvent = new IllegalStateException("not now");
            miniapp.receive(String.format(event, "c-4", "true"));
            expect(host.posted.get(host.posted.size() - 1).contains("\"replyTo\":\"c-4\",\"ok\":false,\"error\":{\"code\":\"REJECTED\",\"message\":\"not now\"}"), host.posted.toString());
            List<String> posted = new ArrayList<>();
            Miniapp plain = new Miniapp(schema, (MiniappDelegate) (m, p) -> {}, posted::add);
            plain.receive(String.format(event, "c-5", "true"));
            expect(posted.get(0).contains("\"code\":\"UNSUPPORTED_MESSAGE\""), posted.toString());
        });
        cases.put("host events: a detail breaking the schema is refused and nothing is posted", () -> {
            Recorder host = new Recorder();
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            expectThrows(IllegalArgumentException.class, () -> miniapp.sendHostEvent("{\"type\":\"MinibridgeWebAppCustomEvent\",\"data\":{\"payload\":1}}"), "no data.type");
            expectThrows(IllegalArgumentException.class, () -> miniapp.sendHostEvent("{\"type\":"), "not JSON");
            expectEquals(0, host.posted.size(), "posted");
            miniapp.sendCustomEvent("coupon", "{\"code\":\"A\"}");
            expect(host.posted.get(0).contains("\"detail\":{\"type\":\"MinibridgeWebAppCustomEvent\",\"data\":{\"type\":\"coupon\",\"payload\":{\"code\":\"A\"}}}"), host.posted.toString());
        });
        cases.put("ids with escapes and version 1.0 are what they mean", () -> {
            Recorder host = new Recorder();
            Miniapp miniapp = new Miniapp(schema, host, host.posted::add);
            miniapp.receive("{\"protocol\":\"minibridge-bridge\",\"version\":1.0,\"id\":\"\\u0070-9\",\"type\":\"pay\",\"paymentData\":" + DATA + "}");
            expectEquals(1, host.payments.size(), "handed");
            host.payments.get(0).setStatus("success");
            miniapp.sendPaymentEvent(host.payments.get(0));
            JsonValue.Obj answer = (JsonValue.Obj) Json.parse(host.posted.get(0));
            expectEquals("p-9", ((JsonValue.Str) answer.get("replyTo")).value(), "replyTo");
        });
        cases.put("one sheet at a time across threads", () -> {
            Recorder host = new Recorder();
            List<String> posted = java.util.Collections.synchronizedList(new ArrayList<>());
            Miniapp miniapp = new Miniapp(schema, host, posted::add);
            int threads = 8;
            int each = 25;
            CountDownLatch start = new CountDownLatch(1);
            AtomicInteger counter = new AtomicInteger();
            List<Thread> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread thread = new Thread(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    for (int i = 0; i < each; i++) miniapp.receive(String.format(PAY, "t-" + counter.incrementAndGet(), DATA));
                });
                running.add(thread);
                thread.start();
            }
            start.countDown();
            for (Thread thread : running) thread.join(30_000);
            expectEquals(1, host.payments.size(), "sheets opened");
            expectEquals(threads * each - 1, posted.size(), "PAYMENT_IN_PROGRESS answers");
            expect(posted.stream().allMatch(text -> text.contains("\"code\":\"PAYMENT_IN_PROGRESS\"")), "every other pay is refused");
        });

        List<TestResult> results = new ArrayList<>();
        for (Map.Entry<String, Case> entry : cases.entrySet()) {
            List<String> problems = new ArrayList<>();
            try {
                entry.getValue().run();
            } catch (Failure failure) {
                problems.add(failure.getMessage());
            } catch (Exception | Error unexpected) {
                problems.add("threw " + unexpected);
            }
            results.add(new TestResult(SUITE, entry.getKey(), problems));
        }
        return results;
    }
}
