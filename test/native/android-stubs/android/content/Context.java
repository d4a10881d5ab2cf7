package android.content;

import android.content.res.AssetManager;

/** Stand-in for android.content.Context: the method the guide's glue calls. */
public abstract class Context {
    public abstract AssetManager getAssets();
}
