package android.content.res;

import java.io.IOException;
import java.io.InputStream;

/** Stand-in for android.content.res.AssetManager. */
public final class AssetManager {
    public InputStream open(String fileName) throws IOException {
        throw new IOException("stand-in");
    }
}
