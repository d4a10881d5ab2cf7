/**
 * Preloaded (`--expose-gc --import`) into a platform whose memory a soak judges: a full collection
 * every second, so the heap in use the soak samples falls to what is live at least once in each of
 * its windows. Without it the floor of a window is wherever V8's last major collection happened to
 * leave it, and a window without one reads as growth (a slope over a few windows then moves with
 * the machine's speed, not with a leak).
 */
setInterval(() => globalThis.gc?.(), 1_000).unref();
