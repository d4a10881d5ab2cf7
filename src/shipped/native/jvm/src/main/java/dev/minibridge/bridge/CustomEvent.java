package dev.minibridge.bridge;

/**
 * A custom event from the miniapp ({@code send} or {@code sendPromise} of the JS SDK). When
 * {@link #expectsReply()} is true, settle it exactly once with {@link #resolve(String)} or
 * {@link #reject(String, String)}, from any thread; the miniapp's promise waits for it (the SDK
 * gives up after its time-out).
 */
public final class CustomEvent {
    private final Miniapp miniapp;
    private final String requestId;
    private final JsonValue.Obj data;
    private final boolean expectsReply;
    private boolean settled;

    CustomEvent(Miniapp miniapp, String requestId, JsonValue.Obj data, boolean expectsReply) {
        this.miniapp = miniapp;
        this.requestId = requestId;
        this.data = data;
        this.expectsReply = expectsReply;
    }

    /** The identifier your host app handles ({@code data.type}). */
    public String type() {
        return ((JsonValue.Str) data.get("type")).value();
    }

    /** {@code data.payload} as JSON text exactly as sent, or null when absent. */
    public String payloadJson() {
        JsonValue payload = data.get("payload");
        return payload == null ? null : payload.text();
    }

    /** The whole {@code data} ({@code {type, payload}}) as JSON text, as sent. */
    public String dataJson() {
        return data.text();
    }

    /** True for {@code sendPromise}: the miniapp waits for one answer. */
    public boolean expectsReply() {
        return expectsReply;
    }

    /** Answers {@code ok: true}, with resultJson as {@code result} (any JSON text; null for none). */
    public void resolve(String resultJson) {
        miniapp.settle(this, true, resultJson, null, null);
    }

    /** Answers {@code ok: false} with an error code (REJECTED, or another of x-error-codes) and a message. */
    public void reject(String code, String message) {
        miniapp.settle(this, false, null, code, message);
    }

    String requestId() {
        return requestId;
    }

    boolean isSettled() {
        return settled;
    }

    /** Marks the event answered; false when it already was. Called under the miniapp's lock. */
    boolean markSettled() {
        if (settled) return false;
        settled = true;
        return true;
    }
}
