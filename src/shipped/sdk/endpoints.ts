/**
 * Where bridge messages go and come from. The SDK and the host side only see an endpoint, so the
 * same code runs in an iframe, in a native web view and against the fake windows of the tests.
 */
export interface BridgeEndpoint {
  /** Sends one message to the other side. */
  post(message: object): void;
  /** Calls receive with every message from the other side; the returned function stops listening. */
  listen(receive: (data: unknown) => void): () => void;
}

/** The little of a DOM MessageEvent the bridge reads (the package is compiled without DOM types). */
export interface MessageEventLike {
  data: unknown;
  origin: string;
  source: unknown;
}

type MessageListener = (event: MessageEventLike) => void;

/** The little of a DOM Window the bridge uses. */
export interface WindowLike {
  addEventListener(type: 'message', listener: MessageListener): void;
  removeEventListener(type: 'message', listener: MessageListener): void;
  postMessage(message: unknown, targetOrigin: string): void;
  readonly parent?: WindowLike | null;
}

/** The handler objects native web views inject (see docs/guides/07-native-bridge.md). */
interface NativeHandlers {
  webkit?: { messageHandlers?: { minibridge?: { postMessage(text: string): void } } };
  MinibridgeAndroid?: { postMessage(text: string): void };
}

/** Calls receive with the data of each message event on win that accept lets through; returns a stop function. */
export function listenOn(win: WindowLike, accept: (event: MessageEventLike) => boolean, receive: (data: unknown) => void): () => void {
  const listener: MessageListener = (event) => {
    if (accept(event)) receive(event.data);
  };
  win.addEventListener('message', listener);
  return () => win.removeEventListener('message', listener);
}

/**
 * Miniapp in an iframe: talks to the parent window. Only messages whose source is the parent
 * (and, when hostOrigin is given, whose origin is hostOrigin) are accepted.
 */
export function parentFrameEndpoint(win: WindowLike, hostOrigin = '*'): BridgeEndpoint {
  const parent = win.parent;
  if (!parent || parent === win) throw new TypeError('parentFrameEndpoint: this window has no parent frame');
  return {
    post: (message) => parent.postMessage(message, hostOrigin),
    listen: (receive) => listenOn(win, fromParentFrame(win, hostOrigin), receive),
  };
}

/** Which message events come from the host app to a page in an iframe: its parent, at hostOrigin unless `*`. */
export function fromParentFrame(win: WindowLike, hostOrigin = '*'): (event: MessageEventLike) => boolean {
  return (event) => event.source === win.parent && (hostOrigin === '*' || event.origin === hostOrigin);
}

/** Which message events come from a native host app: it runs `window.postMessage` in the page itself. */
export function fromNativeHost(win: WindowLike): (event: MessageEventLike) => boolean {
  return (event) => event.source === win || event.source === null;
}

/**
 * Miniapp in a native web view: sends JSON text to the handler the host app injected
 * (iOS `webkit.messageHandlers.minibridge`, Android `MinibridgeAndroid`); the host answers by
 * running `window.postMessage(<message>, '*')` in the page, so answers come from the window itself.
 */
export function nativeWebViewEndpoint(win: WindowLike): BridgeEndpoint {
  const handler = nativeHandler(win);
  if (!handler) throw new TypeError('nativeWebViewEndpoint: no native message handler in this web view');
  return {
    post: (message) => handler.postMessage(JSON.stringify(message)),
    listen: (receive) =>
      listenOn(win, fromNativeHost(win), (data) => receive(typeof data === 'string' ? parseJsonOrUndefined(data) : data)),
  };
}

function nativeHandler(win: WindowLike): { postMessage(text: string): void } | undefined {
  const handlers = win as WindowLike & NativeHandlers;
  return handlers.webkit?.messageHandlers?.minibridge ?? handlers.MinibridgeAndroid;
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The endpoint of the host this page runs in: a native web view, a parent frame, or none. */
export function detectEndpoint(win: WindowLike | undefined, hostOrigin?: string): BridgeEndpoint | undefined {
  if (!win) return undefined;
  if (nativeHandler(win)) return nativeWebViewEndpoint(win);
  if (win.parent && win.parent !== win) return parentFrameEndpoint(win, hostOrigin);
  return undefined;
}

/**
 * Host side of an iframe: talks to the miniapp frame. Only messages from that frame's window
 * and from miniappOrigin are accepted; answers are posted to miniappOrigin only.
 */
export function miniappFrameEndpoint(
  hostWindow: WindowLike,
  frame: () => WindowLike | null | undefined,
  miniappOrigin: string,
): BridgeEndpoint {
  return {
    post: (message) => frame()?.postMessage(message, miniappOrigin),
    listen: (receive) =>
      listenOn(hostWindow, (event) => event.source != null && event.source === frame() && event.origin === miniappOrigin, receive),
  };
}
