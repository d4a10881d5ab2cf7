package dev.minibridge.bridge;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A native host app without the web view, for the conformance page's runner: each line on stdin
 * is a JSON string literal holding the text the page sent (what a web view's script handler
 * receives); each line on stdout is the JavaScript the glue would run in the web view
 * ({@link BridgeScript#postMessage}). Its person acts on the page's Waiting prompts: finishes the
 * named sheet with the status asked for, sends an event, answers the custom events it holds.
 *
 * <pre>java -cp out dev.minibridge.bridge.ConformanceHost generated/sdk/bridge.schema.json minibridge.conformance.waiting</pre>
 */
public final class ConformanceHost implements MiniappDelegate {
    private final String waitingEventType;
    private final Map<String, PaymentData> sheets = new HashMap<>();
    private final List<CustomEvent> held = new ArrayList<>();
    private int emitted;

    private ConformanceHost(String waitingEventType) {
        this.waitingEventType = waitingEventType;
    }

    public static void main(String[] args) throws Exception {
        BridgeSchema schema = BridgeSchema.parse(Files.readString(Path.of(args[0]), StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Miniapp miniapp = new Miniapp(schema, new ConformanceHost(args[1]), json -> out.println(BridgeScript.postMessage(json)));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) continue;
            miniapp.receive(((JsonValue.Str) Json.parse(line)).value());
        }
    }

    @Override
    public void didReceivePaymentEvent(Miniapp miniapp, PaymentData paymentData) {
        sheets.put(paymentData.orderPaymentId(), paymentData);
    }

    @Override
    public void didReceiveCustomEvent(Miniapp miniapp, CustomEvent event) {
        if (!event.type().equals(waitingEventType)) {
            if (event.expectsReply()) held.add(event); // answered when the page says it waits, like a host calling its server
            return;
        }
        JsonValue.Obj waiting;
        try {
            waiting = (JsonValue.Obj) Json.parse(event.payloadJson());
        } catch (Json.ParseException broken) {
            throw new IllegalStateException(broken);
        }
        String kind = ((JsonValue.Str) waiting.get("for")).value();
        switch (kind) {
            case "finish-payment" -> {
                PaymentData sheet = sheets.remove(((JsonValue.Str) waiting.get("orderPaymentId")).value());
                if (sheet != null) {
                    sheet.setStatus(((JsonValue.Str) waiting.get("status")).value());
                    miniapp.sendPaymentEvent(sheet);
                }
            }
            case "send-host-event" -> miniapp.sendCustomEvent("conformance_ping", "{\"n\":" + (++emitted) + "}");
            case "answer-custom-events" -> {
                for (CustomEvent pending : new ArrayList<>(held)) pending.resolve("{\"received\":" + Json.quote(pending.type()) + "}");
                held.clear();
            }
            default -> {}
        }
    }
}
