import type { MessageEventLike, WindowLike } from '../../src/shipped/sdk/endpoints.js';

type Listener = (event: MessageEventLike) => void;

/**
 * A window that delivers posted messages the way a browser does: a structured clone, later (as a
 * microtask, so fake timers do not hold it back), with the sender's origin and window handle.
 */
export class FakeWindow implements WindowLike {
  private readonly listeners = new Set<Listener>();
  parent: WindowLike | null = null;

  constructor(readonly origin: string) {}

  addEventListener(_type: 'message', listener: Listener): void {
    this.listeners.add(listener);
  }

  removeEventListener(_type: 'message', listener: Listener): void {
    this.listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** A message posted by this window to itself (what a native host's `window.postMessage` does). */
  postMessage(message: unknown, targetOrigin: string): void {
    this.deliver(message, targetOrigin, this.origin, this);
  }

  deliver(message: unknown, targetOrigin: string, origin: string, source: unknown): void {
    if (targetOrigin !== '*' && targetOrigin !== this.origin) return; // the browser drops it
    const data = structuredClone(message);
    queueMicrotask(() => {
      for (const listener of [...this.listeners]) listener({ data, origin, source });
    });
  }
}

/** How one window sees another: posting through it delivers with the viewer as the source. */
class WindowHandle implements WindowLike {
  sourceSeenByTarget: WindowHandle | undefined;

  constructor(
    private readonly target: FakeWindow,
    private readonly viewer: FakeWindow,
    readonly posted: Array<{ message: unknown; targetOrigin: string }>,
  ) {}

  addEventListener(): void {}
  removeEventListener(): void {}

  postMessage(message: unknown, targetOrigin: string): void {
    this.posted.push({ message: structuredClone(message), targetOrigin });
    this.target.deliver(message, targetOrigin, this.viewer.origin, this.sourceSeenByTarget);
  }
}

export interface FramePair {
  /** The miniapp's window (inside the iframe); its `parent` is the host. */
  miniapp: FakeWindow;
  /** The host page's window. */
  host: FakeWindow;
  /** The iframe's contentWindow as the host sees it. */
  frame: WindowLike;
  /** Every message the miniapp posted to the host, in order. */
  toHost: Array<{ message: unknown; targetOrigin: string }>;
  /** Every message the host posted to the miniapp, in order. */
  toMiniapp: Array<{ message: unknown; targetOrigin: string }>;
  /** Delivers a message to the miniapp as if another frame (not the host) had posted it. */
  postFromStranger(message: unknown, origin?: string): void;
}

export function framePair(hostOrigin = 'https://host.example', miniappOrigin = 'https://miniapp.example'): FramePair {
  const host = new FakeWindow(hostOrigin);
  const miniapp = new FakeWindow(miniappOrigin);
  const toHost: FramePair['toHost'] = [];
  const toMiniapp: FramePair['toMiniapp'] = [];
  const parentSeenByMiniapp = new WindowHandle(host, miniapp, toHost);
  const frameSeenByHost = new WindowHandle(miniapp, host, toMiniapp);
  parentSeenByMiniapp.sourceSeenByTarget = frameSeenByHost;
  frameSeenByHost.sourceSeenByTarget = parentSeenByMiniapp;
  miniapp.parent = parentSeenByMiniapp;
  return {
    miniapp,
    host,
    frame: frameSeenByHost,
    toHost,
    toMiniapp,
    postFromStranger: (message, origin = 'https://evil.example') => miniapp.deliver(message, '*', origin, {}),
  };
}

/** Lets every queued message delivery and the work it triggers (microtasks) run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
