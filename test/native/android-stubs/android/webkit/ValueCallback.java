package android.webkit;

/** Stand-in for android.webkit.ValueCallback. */
public interface ValueCallback<T> {
    void onReceiveValue(T value);
}
