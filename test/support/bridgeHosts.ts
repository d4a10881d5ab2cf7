import type { BridgeEndpoint, HostBridge, HostBridgeOptions, ValidationResult } from '../../src/shipped/sdk/index.js';
import { isHostMessageType } from '../../src/shipped/sdk/messages.js';

/**
 * Web host apps for the conformance page's tests: the project's own web host bridge
 * (createHostBridge) with a scripted person behind it, and broken variants, each with one bug a
 * real host app could have. The person acts on the page's prompts (the `Waiting` custom event):
 * finishes the named payment sheet, sends an event, answers the custom events it holds.
 *
 * Besides types, only the SDK's list of message types is imported: the browser harness
 * (test/browser/bridgeHarness/) bundles this file and hands it the shipped minibridge-host.js
 * functions, and the node tests hand it the sources.
 */
export const BROKEN_HOSTS = {
  /** Posts every pay_result twice. */
  'answers-twice': 'pay-answered-once',
  /** Drops paymentData.status from the pay_result. */
  'drops-status': 'pay-status',
  /** Sends the amount back as a rounded number. */
  'rounds-amount': 'pay-data-unchanged',
  /** Opens a second payment sheet instead of refusing the second pay (one bridge object per sheet). */
  'second-sheet': 'pay-in-progress',
  /** Answers custom events with the id of the newest one that expects a reply (one variable for all). */
  'wrong-reply-to': 'reply-to-concurrency',
  /** Its payment sheet never reports back. */
  'never-answers': 'pay-answered',
  /** Refuses anything carrying an id, bridge message or not. */
  'answers-other-traffic': 'other-traffic-ignored',
  /** Answers types it does not handle with UNSUPPORTED_MESSAGE (what this web host did before ADR 0040). */
  'answers-unknown-types': 'unknown-type-ignored',
  /** Drops custom events that break the schema instead of refusing them. */
  'ignores-invalid-custom-events': 'invalid-message',
  /** Refuses another protocol version as INVALID_MESSAGE. */
  'refuses-other-versions-as-invalid': 'unsupported-version',
  /** Answers send(...) as if it were sendPromise(...). */
  'answers-send': 'custom-event-no-reply',
  /** Adds a member the schema does not know to every custom_event_result. */
  'result-breaks-schema': 'custom-event-reply',
  /** Never sends an event to the page. */
  'no-host-events': 'host-event-subscribe',
} as const;

export type BrokenHost = keyof typeof BROKEN_HOSTS;
export type HostVariant = 'good' | BrokenHost;

export interface HarnessOptions {
  createHostBridge(options: HostBridgeOptions): HostBridge;
  validateMessage(definition: 'CustomEventRequest', message: unknown): ValidationResult;
  /** Toward the miniapp's frame. */
  endpoint: BridgeEndpoint;
  variant: HostVariant;
  protocol: string;
  version: number;
  customEventName: string;
  /** `data.type` of the page's Waiting custom event. */
  waitingEventType: string;
}

type Message = Record<string, unknown>;

interface Instance {
  bridge?: HostBridge;
  receive?: (data: unknown) => void;
  sheetOpen: boolean;
}

export function startHarnessHost(options: HarnessOptions): { close(): void } {
  const { variant, endpoint } = options;
  const sheets = new Map<string, (status: string) => void>();
  const held: Array<{ type: string; resolve(value: unknown): void }> = [];
  const instances: Instance[] = [];
  let newestReplyId: string | undefined;
  let emitted = 0;
  let ids = 0;

  function post(message: object): void {
    const copy = JSON.parse(JSON.stringify(message)) as Message;
    const paymentData = copy.paymentData as Message | undefined;
    if (copy.type === 'pay_result' && paymentData) {
      if (variant === 'drops-status') delete paymentData.status;
      if (variant === 'rounds-amount') paymentData.amount = Math.round(Number(paymentData.amount));
    }
    if (copy.type === 'custom_event_result') {
      if (variant === 'wrong-reply-to') copy.replyTo = newestReplyId;
      if (variant === 'result-breaks-schema') copy.unexpected = true;
    }
    endpoint.post(copy);
    if (variant === 'answers-twice' && copy.type === 'pay_result') endpoint.post(copy);
  }

  function refuse(replyTo: string, code: string): void {
    ids += 1;
    const error = { code, message: `the ${variant} host refuses it` };
    endpoint.post({ protocol: options.protocol, version: options.version, id: `harness-${ids}`, type: 'error', replyTo, error });
  }

  function act(waiting: Message): void {
    if (waiting.for === 'finish-payment' && variant !== 'never-answers') {
      const finish = sheets.get(String(waiting.orderPaymentId));
      sheets.delete(String(waiting.orderPaymentId));
      finish?.(typeof waiting.status === 'string' ? waiting.status : 'success');
    } else if (waiting.for === 'send-host-event' && variant !== 'no-host-events') {
      emitted += 1;
      instances[0]!.bridge!.emit({ type: options.customEventName, data: { type: 'conformance_ping', payload: { n: emitted } } });
    } else if (waiting.for === 'answer-custom-events') {
      for (const event of held.splice(0)) event.resolve({ received: event.type });
    }
  }

  function newInstance(): Instance {
    const instance: Instance = { sheetOpen: false };
    instance.bridge = options.createHostBridge({
      endpoint: {
        post,
        listen: (receive) => {
          instance.receive = receive;
          return () => (instance.receive = undefined);
        },
      },
      onPay: (paymentData) => {
        instance.sheetOpen = true;
        return new Promise((resolve) =>
          sheets.set(paymentData.orderPaymentId, (status) => {
            instance.sheetOpen = false;
            resolve(status as never);
          }),
        );
      },
      onCustomEvent: (data, context) => {
        if (data.type === options.waitingEventType) {
          act(data.payload as Message);
          return undefined;
        }
        if (!context.expectsReply) return undefined;
        // Held until the page says it waits: a host that answers after a server call.
        return new Promise((resolve) => held.push({ type: data.type, resolve }));
      },
    });
    instances.push(instance);
    return instance;
  }

  const main = newInstance();
  const stop = endpoint.listen((data) => {
    const message = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Message) : undefined;
    const id = typeof message?.id === 'string' ? message.id : undefined;
    const bridgeMessage = message?.protocol === options.protocol;
    if (bridgeMessage && message.type === 'custom_event' && message.expectsReply === true && id) newestReplyId = id;
    if (message && id) {
      if (variant === 'answers-other-traffic' && !bridgeMessage) return refuse(id, 'INVALID_MESSAGE');
      if (
        bridgeMessage &&
        message.version !== options.version &&
        !isHostMessageType(message.type) &&
        variant === 'refuses-other-versions-as-invalid'
      )
        return refuse(id, 'INVALID_MESSAGE');
      if (
        bridgeMessage &&
        message.version === options.version &&
        typeof message.type === 'string' &&
        !['pay', 'custom_event'].includes(message.type)
      ) {
        if (variant === 'answers-unknown-types') return refuse(id, 'UNSUPPORTED_MESSAGE');
      }
      if (bridgeMessage && message.type === 'custom_event') {
        const valid = options.validateMessage('CustomEventRequest', message).ok;
        if (!valid && variant === 'ignores-invalid-custom-events') return;
        if (valid && message.expectsReply === false && variant === 'answers-send') {
          ids += 1;
          endpoint.post({
            protocol: options.protocol,
            version: options.version,
            id: `harness-${ids}`,
            type: 'custom_event_result',
            replyTo: id,
            ok: true,
          });
        }
      }
      if (bridgeMessage && message.type === 'pay' && variant === 'second-sheet' && instances.some((instance) => instance.sheetOpen)) {
        const free = instances.find((instance) => !instance.sheetOpen) ?? newInstance();
        free.receive?.(data);
        return;
      }
    }
    main.receive?.(data);
  });

  return {
    close: () => {
      stop();
      for (const instance of instances) instance.bridge?.close();
    },
  };
}
