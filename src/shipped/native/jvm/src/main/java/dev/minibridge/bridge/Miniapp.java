package dev.minibridge.bridge;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The host app's side of the bridge for one miniapp web view: the platform-independent part of a
 * native host (ADR 0040). Platform glue hands it every message the page sends
 * ({@link #receive(String)}, from the web view's script handler) and delivers what it posts
 * (the {@code toPage} consumer: run {@link BridgeScript#postMessage(String)} in the web view).
 *
 * <p>It parses without losing digits, validates against the bridge schema, keeps one payment sheet
 * open at a time, composes every answer and keeps the amount's text exactly as sent:
 * <ul>
 *   <li>text that is not one JSON object with the protocol marker: ignored;</li>
 *   <li>a request breaking the schema: {@code error} INVALID_MESSAGE (ignored when its id cannot
 *       be read: there is nobody to answer);</li>
 *   <li>a request or an unknown type of another protocol version: {@code error} UNSUPPORTED_VERSION with this core's version;</li>
 *   <li>{@code pay}: {@link MiniappDelegate#didReceivePaymentEvent}, answered once by
 *       {@link #sendPaymentEvent(PaymentData)}; another {@code pay} meanwhile: PAYMENT_IN_PROGRESS;</li>
 *   <li>{@code custom_event}: {@link MiniappDelegate#didReceiveCustomEvent}, answered when it expects
 *       a reply;</li>
 *   <li>answers and events ({@code pay_result}, {@code custom_event_result}, {@code host_event},
 *       {@code error}), whatever their version or envelope, and any other type of this version:
 *       ignored, never answered.</li>
 * </ul>
 *
 * <p>Every public method is synchronized: call them from any thread. {@code toPage} is called
 * under the lock, in the order the messages were composed.
 */
public final class Miniapp {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final BridgeSchema schema;
    private final MiniappDelegate delegate;
    private final Consumer<String> toPage;
    private final String protocol;
    private final JsonValue version;
    private final String payType;
    private final String customEventType;
    private final String customEventName;
    private final String invalidMessage;
    private final String unsupportedVersion;
    private final String paymentInProgress;
    private final String rejected;
    private final String failed;
    private final int errorMessageMaxLength;
    /** The types a host app sends (answers, events): never answered, whatever their version or envelope. */
    private final java.util.Set<String> hostMessageTypes;
    private final String session = HexFormat.of().formatHex(RANDOM.generateSeed(4));
    private long counter;
    private OpenSheet sheet;

    private record OpenSheet(String requestId, PaymentData paymentData) {}

    /**
     * @param schema   the bridge schema (bundle generated/sdk/bridge.schema.json with your app)
     * @param delegate your host app
     * @param toPage   delivers one message (JSON text) to the page, e.g.
     *                 {@code json -> webView.post(() -> webView.evaluateJavascript(BridgeScript.postMessage(json), null))}
     */
    public Miniapp(BridgeSchema schema, MiniappDelegate delegate, Consumer<String> toPage) {
        this.schema = schema;
        this.delegate = delegate;
        this.toPage = toPage;
        // Everything the core names comes from the schema; a schema without it stops here.
        this.protocol = ((JsonValue.Str) schema.constOf("Protocol")).value();
        this.version = schema.constOf("ProtocolVersion");
        this.payType = schema.memberConst("PayRequest", "type");
        this.customEventType = schema.memberConst("CustomEventRequest", "type");
        this.customEventName = ((JsonValue.Str) schema.constOf("CustomEventName")).value();
        this.invalidMessage = schema.errorCode("INVALID_MESSAGE");
        this.unsupportedVersion = schema.errorCode("UNSUPPORTED_VERSION");
        this.paymentInProgress = schema.errorCode("PAYMENT_IN_PROGRESS");
        this.rejected = schema.errorCode("REJECTED");
        schema.errorCode("UNSUPPORTED_MESSAGE"); // the delegate's default refusal
        if (!schema.paymentResultStatuses().contains("failed")) throw new IllegalStateException("bridge schema: PaymentResultStatus lacks failed");
        this.failed = "failed";
        this.errorMessageMaxLength = schema.maxLength("ErrorDetail", "message");
        this.hostMessageTypes = java.util.Set.of(
                schema.memberConst("PayResult", "type"),
                schema.memberConst("CustomEventResult", "type"),
                schema.memberConst("HostEvent", "type"),
                schema.memberConst("BridgeError", "type"));
    }

    public BridgeSchema schema() {
        return schema;
    }

    /** One message from the page, as the web view's handler received it (JSON text). */
    public synchronized void receive(String text) {
        if (text == null) return; // a page calling the handler without an argument
        JsonValue value;
        try {
            value = Json.parse(text);
        } catch (Json.ParseException notJson) {
            delegate.didRefuseMessage(this, text, "ignored: not one JSON value (" + notJson.getMessage() + ")");
            return;
        }
        if (!(value instanceof JsonValue.Obj message) || !(message.get("protocol") instanceof JsonValue.Str marker) || !marker.value().equals(protocol)) {
            return; // other traffic on the same handler
        }
        if (message.get("type") instanceof JsonValue.Str answer && hostMessageTypes.contains(answer.value())) {
            // Refusing another side's refusal (of another version, or malformed) could be answered
            // back and forth forever: an answer or event is never answered (bridge.schema.yaml).
            delegate.didRefuseMessage(this, text, "ignored: a " + answer.value() + " message is not a request a host app answers");
            return;
        }
        List<BridgeSchema.Violation> envelope = schema.validate("Envelope", message);
        if (!envelope.isEmpty()) {
            refuse(message, invalidMessage, describe(envelope));
            return;
        }
        if (!BridgeSchema.same(message.get("version"), version)) {
            refuse(message, unsupportedVersion, "this host speaks bridge protocol version " + version.text() + ", not " + message.get("version").text());
            return;
        }
        String type = ((JsonValue.Str) message.get("type")).value();
        if (type.equals(payType)) {
            List<BridgeSchema.Violation> violations = schema.validate("PayRequest", message);
            if (!violations.isEmpty()) refuse(message, invalidMessage, describe(violations));
            else pay(message);
        } else if (type.equals(customEventType)) {
            List<BridgeSchema.Violation> violations = schema.validate("CustomEventRequest", message);
            if (!violations.isEmpty()) refuse(message, invalidMessage, describe(violations));
            else customEvent(message);
        } else {
            // Not a request this host handles (a type a later version adds): never answered.
            delegate.didRefuseMessage(this, text, "ignored: a " + type + " message is not a request a host app answers");
        }
    }

    /**
     * The answer to the open payment sheet: paymentData exactly as the miniapp sent it, with the
     * status set. Throws IllegalStateException when no sheet is open for it (already answered)
     * or its status is not set, IllegalArgumentException when it is not the open sheet's.
     */
    public synchronized void sendPaymentEvent(PaymentData paymentData) {
        if (sheet == null) throw new IllegalStateException("no payment sheet is open: each pay is answered once");
        if (sheet.paymentData() != paymentData) {
            throw new IllegalArgumentException("this paymentData is not the open sheet's (" + sheet.paymentData().orderPaymentId() + ")");
        }
        String status = paymentData.status();
        if (status == null) throw new IllegalStateException("set paymentData.status first (" + schema.paymentResultStatuses() + ")");
        StringBuilder data = new StringBuilder("{");
        for (Map.Entry<String, JsonValue> member : paymentData.source().members().entrySet()) {
            // The miniapp's own text: the amount's digits and type, extraParams, all as sent.
            data.append(Json.quote(member.getKey())).append(':').append(member.getValue().text()).append(',');
        }
        data.append("\"status\":").append(Json.quote(status)).append('}');
        String answer = compose(schema.memberConst("PayResult", "type"), "\"replyTo\":" + Json.quote(sheet.requestId()) + ",\"paymentData\":" + data, "PayResult");
        sheet = null;
        toPage.accept(answer);
    }

    /** Sends an event to the page's {@code subscribe} callbacks: detailJson is {@code {type, data}}. */
    public synchronized void sendHostEvent(String detailJson) {
        JsonValue detail;
        try {
            detail = Json.parse(detailJson);
        } catch (Json.ParseException notJson) {
            throw new IllegalArgumentException("detail is not JSON: " + notJson.getMessage(), notJson);
        }
        post(schema.memberConst("HostEvent", "type"), "\"detail\":" + detail.text(), "HostEvent");
    }

    /** Sends a custom event to the page: {@code detail {type: MinibridgeWebAppCustomEvent, data: {type, payload}}}. */
    public synchronized void sendCustomEvent(String type, String payloadJson) {
        String data = "{\"type\":" + Json.quote(type) + (payloadJson == null ? "" : ",\"payload\":" + payloadJson) + "}";
        sendHostEvent("{\"type\":" + Json.quote(customEventName) + ",\"data\":" + data + "}");
    }

    /** Whether a payment sheet is open (a {@code pay} waits for {@link #sendPaymentEvent}). */
    public synchronized boolean paymentSheetOpen() {
        return sheet != null;
    }

    synchronized void settle(CustomEvent event, boolean ok, String resultJson, String code, String message) {
        if (!event.expectsReply()) throw new IllegalStateException("a custom event sent without expectsReply is never answered");
        if (!event.markSettled()) throw new IllegalStateException("this custom event was already answered");
        StringBuilder members = new StringBuilder("\"replyTo\":").append(Json.quote(event.requestId())).append(",\"ok\":").append(ok);
        if (ok && resultJson != null) {
            try {
                members.append(",\"result\":").append(Json.parse(resultJson).text());
            } catch (Json.ParseException notJson) {
                throw new IllegalArgumentException("result is not JSON: " + notJson.getMessage(), notJson);
            }
        }
        if (!ok) members.append(",\"error\":{\"code\":").append(Json.quote(code)).append(",\"message\":").append(Json.quote(message)).append('}');
        post(schema.memberConst("CustomEventResult", "type"), members.toString(), "CustomEventResult");
    }

    private void pay(JsonValue.Obj message) {
        PaymentData paymentData = new PaymentData((JsonValue.Obj) message.get("paymentData"), schema);
        if (sheet != null) {
            refuse(message, paymentInProgress, "the payment sheet for " + sheet.paymentData().orderPaymentId() + " is still open");
            return;
        }
        sheet = new OpenSheet(((JsonValue.Str) message.get("id")).value(), paymentData);
        try {
            delegate.didReceivePaymentEvent(this, paymentData);
        } catch (RuntimeException failure) {
            // The host could not show its sheet: the miniapp learns it failed rather than waiting.
            if (sheet != null && sheet.paymentData() == paymentData) {
                paymentData.setStatus(failed);
                sendPaymentEvent(paymentData);
            }
        }
    }

    private void customEvent(JsonValue.Obj message) {
        CustomEvent event = new CustomEvent(
                this,
                ((JsonValue.Str) message.get("id")).value(),
                (JsonValue.Obj) message.get("data"),
                ((JsonValue.Bool) message.get("expectsReply")).value());
        try {
            delegate.didReceiveCustomEvent(this, event);
        } catch (RuntimeException failure) {
            if (event.expectsReply() && !event.isSettled()) settle(event, false, null, rejected, clip(String.valueOf(failure.getMessage())));
        }
    }

    /** Answers a refused request with an error naming it, when its id can be read. */
    private void refuse(JsonValue.Obj message, String code, String why) {
        delegate.didRefuseMessage(this, message.text(), code + ": " + why);
        JsonValue id = message.get("id");
        if (id == null || !schema.validate("MessageId", id).isEmpty()) return; // nobody to answer
        String members = "\"replyTo\":" + id.text() + ",\"error\":{\"code\":" + Json.quote(code) + ",\"message\":" + Json.quote(clip(why)) + "}";
        post(schema.memberConst("BridgeError", "type"), members, "BridgeError");
    }

    /** Composes a message and hands it to the page. */
    private void post(String type, String members, String definition) {
        toPage.accept(compose(type, members, definition));
    }

    /** {protocol, version, id, type, ...members} as JSON text, checked against the schema's definition of it. */
    private String compose(String type, String members, String definition) {
        counter += 1;
        String id = "host-" + session + "-" + counter;
        String json = "{\"protocol\":" + Json.quote(protocol) + ",\"version\":" + version.text() + ",\"id\":" + Json.quote(id)
                + ",\"type\":" + Json.quote(type) + "," + members + "}";
        List<BridgeSchema.Violation> violations;
        try {
            violations = schema.validate(definition, Json.parse(json));
        } catch (Json.ParseException broken) {
            throw new IllegalArgumentException("the answer is not JSON: " + broken.getMessage(), broken);
        }
        if (!violations.isEmpty()) {
            counter -= 1;
            throw new IllegalArgumentException("the " + type + " would break the bridge schema: " + describe(violations));
        }
        return json;
    }

    private static String describe(List<BridgeSchema.Violation> violations) {
        StringBuilder text = new StringBuilder();
        for (BridgeSchema.Violation violation : violations) {
            if (text.length() > 0) text.append("; ");
            text.append(violation);
        }
        return text.toString();
    }

    /** Cut to ErrorDetail.message's maxLength. */
    private String clip(String text) {
        int limit = errorMessageMaxLength;
        return text.codePointCount(0, text.length()) <= limit ? text : text.substring(0, text.offsetByCodePoints(0, limit - 1)) + "…";
    }
}
