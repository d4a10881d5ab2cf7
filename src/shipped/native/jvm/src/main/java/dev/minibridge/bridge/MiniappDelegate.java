package dev.minibridge.bridge;

/**
 * What the host app implements: the specification's delegate. Methods are called on the thread
 * that called {@link Miniapp#receive(String)}; return quickly (show the sheet on your UI thread).
 */
public interface MiniappDelegate {
    /**
     * The miniapp asks to pay (E9 {@code pay}). Show your payment sheet for
     * {@code paymentData.orderPaymentId()}; when the person is done and your server has reported the
     * outcome (E5), call {@code paymentData.setStatus(...)} and {@code miniapp.sendPaymentEvent(paymentData)}.
     * Only one sheet is open at a time: the core refuses another {@code pay} until then. A
     * RuntimeException thrown here is answered as {@code failed}.
     */
    void didReceivePaymentEvent(Miniapp miniapp, PaymentData paymentData);

    /**
     * A custom event. Settle it with {@code event.resolve(...)} or {@code event.reject(...)} when it
     * expects a reply. By default a host app handles none: such events are refused with
     * UNSUPPORTED_MESSAGE.
     */
    default void didReceiveCustomEvent(Miniapp miniapp, CustomEvent event) {
        if (event.expectsReply()) event.reject("UNSUPPORTED_MESSAGE", "this host app does not handle custom events");
    }

    /** A message was refused or ignored, and why: for your logs. */
    default void didRefuseMessage(Miniapp miniapp, String text, String reason) {}
}
