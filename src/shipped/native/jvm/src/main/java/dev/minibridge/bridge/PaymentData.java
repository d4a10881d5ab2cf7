package dev.minibridge.bridge;

/**
 * What the miniapp asks the host app to pay: the {@code paymentData} of a {@code pay} message, as
 * the specification hands it to {@code didReceivePaymentEvent(miniapp, paymentData)}. Everything
 * but {@link #setStatus(String) status} is read-only: {@code miniapp.sendPaymentEvent(paymentData)}
 * answers with the members exactly as the miniapp sent them (the amount's text included) and the
 * status the host app set.
 *
 * <p>Show the sheet for {@link #orderPaymentId()} and look the payment up on your server: the
 * amount in the page is what the miniapp claims, not what your server created with E3.
 */
public final class PaymentData {
    private final JsonValue.Obj source;
    private final BridgeSchema schema;
    private volatile String status;

    PaymentData(JsonValue.Obj source, BridgeSchema schema) {
        this.source = source;
        this.schema = schema;
    }

    /** The amount's exact text: a decimal string's content, or a number's digits as sent ({@code 125000.50}). */
    public String amount() {
        JsonValue amount = source.get("amount");
        return amount instanceof JsonValue.Str text ? text.value() : amount.text();
    }

    /** Whether the miniapp sent the amount as a JSON string ({@code "125000.50"}) rather than a number. */
    public boolean amountIsString() {
        return source.get("amount") instanceof JsonValue.Str;
    }

    public String currency() {
        return ((JsonValue.Str) source.get("currency")).value();
    }

    /** The order payment your server created with E3: the sheet to show. */
    public String orderPaymentId() {
        return ((JsonValue.Str) source.get("orderPaymentId")).value();
    }

    /** The miniapp's order reference, or null when it sent none. */
    public String miniappOrderId() {
        return source.get("miniappOrderId") instanceof JsonValue.Str text ? text.value() : null;
    }

    /** The extra parameters as JSON text exactly as sent, or null when there are none. */
    public String extraParamsJson() {
        JsonValue extra = source.get("extraParams");
        return extra == null ? null : extra.text();
    }

    /** The whole paymentData as the miniapp sent it, as JSON text (without status). */
    public String json() {
        return source.text();
    }

    /** The status set so far, or null. */
    public String status() {
        return status;
    }

    /** Sets the user-facing result: one of the schema's {@code PaymentResultStatus} ("success", "failed", "cancelled"). */
    public void setStatus(String status) {
        if (status == null || !schema.validate("PaymentResultStatus", JsonValue.Str.of(status)).isEmpty()) {
            throw new IllegalArgumentException("status must be one of " + schema.paymentResultStatuses() + ", not " + status);
        }
        this.status = status;
    }

    JsonValue.Obj source() {
        return source;
    }
}
