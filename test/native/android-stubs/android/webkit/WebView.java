package android.webkit;

/** Stand-in for android.webkit.WebView: the methods the guide's glue calls, with Android's signatures. */
public class WebView {
    public void addJavascriptInterface(Object object, String name) {
        throw new UnsupportedOperationException("stand-in");
    }

    public void evaluateJavascript(String script, ValueCallback<String> resultCallback) {
        throw new UnsupportedOperationException("stand-in");
    }

    /** View.post */
    public boolean post(Runnable action) {
        throw new UnsupportedOperationException("stand-in");
    }
}
