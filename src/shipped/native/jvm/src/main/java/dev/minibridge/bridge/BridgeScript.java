package dev.minibridge.bridge;

/**
 * The JavaScript a host app runs in the miniapp's web view to deliver a message
 * ({@code evaluateJavascript} on Android, {@code evaluateJavaScript} on iOS). The message travels
 * as a string literal of its JSON text, so the page reads every digit of the amount exactly as the
 * core wrote it (the JS SDK parses it; the conformance page checks it).
 */
public final class BridgeScript {
    private BridgeScript() {}

    /** {@code window.postMessage("<json>", '*');} with the JSON text escaped as a JavaScript string. */
    public static String postMessage(String messageJson) {
        return "window.postMessage(" + Json.quote(messageJson) + ", '*');";
    }
}
