import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ErrorBody } from './app.ts';

/**
 * A local Stripe: the subset of the API the gateway uses, written from Stripe's API reference, for
 * the official SDK to talk to (STRIPE_API_BASE). Requests are form-encoded with bracketed keys
 * (`metadata[account_id]=…`), answers are the API's objects, errors the API's error body
 * (`{error: {type, code, decline_code, message, payment_intent}}` with its status), and a POST or
 * DELETE with an `Idempotency-Key` is answered once and replayed after (the same key with other parameters: 400
 * `idempotency_error`). Events are sent to the gateway's /hooks/stripe signed as Stripe signs them:
 * `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<payload>" with the endpoint secret>`.
 *
 * Test cards (payment method ids, as Stripe's test mode names them):
 * - `pm_card_visa`: succeeds;
 * - `pm_card_chargeDeclinedInsufficientFunds`: 402 card_error `card_declined` / `insufficient_funds`;
 * - `pm_card_authenticationRequired`: off-session, 402 card_error `authentication_required` with the
 *   PaymentIntent (status `requires_payment_method`) to confirm on-session;
 * - `pm_card_threeDSecureRequired`: the PaymentIntent answers `requires_action` with `next_action`.
 * A PaymentIntent is confirmed when made (`confirm=true`) or later (`POST /v1/payment_intents/:id/confirm`),
 * with the same outcomes; `POST /v1/payment_intents/:id` changes its metadata and description.
 */

/** What every object of the API has. */
export interface StripeObject {
  id: string;
  object: string;
}

export interface Customer extends StripeObject {
  object: 'customer';
  name: string | null;
  email: string | null;
  metadata: Record<string, string>;
  invoice_settings: {
    default_payment_method: string | null;
    custom_fields: null;
    footer: null;
    rendering_options: null;
  };
  created: number;
  livemode: boolean;
}

interface PaymentError {
  type: 'card_error';
  code: string;
  decline_code: string;
  message: string;
}

export interface PaymentIntent extends StripeObject {
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  customer: string | null;
  description: string | null;
  metadata: Record<string, string>;
  payment_method: string | null;
  client_secret: string;
  confirmation_method: 'automatic';
  latest_charge: string | null;
  last_payment_error: PaymentError | null;
  next_action: { type: 'use_stripe_sdk'; use_stripe_sdk: { type: string; stripe_js: string } } | null;
  status: string;
  created: number;
  livemode: boolean;
}

export interface Charge extends StripeObject {
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  currency: string;
  customer: string | null;
  payment_intent: string;
  paid: boolean;
  refunded: boolean;
  disputed: boolean;
  status: string;
  created: number;
}

export interface Subscription extends StripeObject {
  object: 'subscription';
  customer: string | null;
  status: string;
  metadata: Record<string, string>;
  items: {
    object: 'list';
    data: {
      id: string;
      object: 'subscription_item';
      price: {
        id: string;
        object: 'price';
        currency: string;
        recurring: { interval: string; interval_count: number };
      };
      quantity: number;
    }[];
    has_more: boolean;
    url: string;
  };
  cancel_at_period_end: boolean;
  canceled_at?: number;
  created: number;
  livemode: boolean;
}

interface CheckoutSession extends StripeObject {
  object: 'checkout.session';
  mode: string;
  status: string;
  customer: string | null;
  client_reference_id: string | null;
  line_items_price: string;
  subscription_metadata: Record<string, string>;
  subscription: string | null;
  success_url: string;
  cancel_url: string | null;
  url: string;
  created: number;
}

/** An event as sent to the gateway, about a copy of `O` as it was then. */
export interface StripeEvent<O extends StripeObject = StripeObject> {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: O };
  livemode: boolean;
  pending_webhooks: number;
  request: { id: null; idempotency_key: null };
  type: string;
}

/** An event made and what the gateway answered it (0 while paused). */
interface Sent<O extends StripeObject = StripeObject> {
  event: StripeEvent<O>;
  status: number;
}

/** What /hooks/stripe answers an event it takes. */
export interface HookReceipt {
  received: true;
  id: string;
  duplicate: boolean;
}

/** What /hooks/stripe answers: its receipt, or the error body of a refusal (the text, were it not JSON). */
export type HookAnswer = HookReceipt | ErrorBody | string;

export interface FakeStripe {
  /** The base URL for STRIPE_API_BASE. */
  url: string;
  secretKey: string;
  webhookSecret: string;
  /** Where events go (the gateway's /hooks/stripe); set once the gateway listens. */
  hookUrl: string;
  customers: Map<string, Customer>;
  paymentIntents: Map<string, PaymentIntent>;
  charges: Map<string, Charge>;
  subscriptions: Map<string, Subscription>;
  /** Every event made, by id, with the exact payload sent. */
  events: Map<string, { event: StripeEvent; payload: string }>;
  /** Requests received, for assertions (`POST /v1/payment_intents`, …). */
  requests: { method: string; path: string; idempotencyKey: string | undefined }[];
  /** Gives a customer a card as its default payment method (what the portal or Checkout does). */
  attachCard(customerId: string, paymentMethod: string): void;
  /** The customer completes 3-D Secure on-session: the PaymentIntent succeeds (and its event is made). */
  completeAuthentication(intentId: string): Promise<Sent<PaymentIntent>>;
  /** Checkout completed: the subscription is created (and `customer.subscription.created` sent), its first invoice paid. */
  completeCheckout(sessionId: string, status?: string): Promise<{ subscription: Subscription; events: Sent[] }>;
  /** The subscription moves to `status` (`customer.subscription.updated`, or `.deleted` for canceled). */
  setSubscriptionStatus(subscriptionId: string, status: string): Promise<Sent<Subscription>>;
  /** A paid invoice of the subscription (`invoice.paid`). */
  payInvoice(subscriptionId: string): Promise<Sent>;
  /** Refunds `cents` more of a charge (`charge.refunded`, with the total refunded). */
  refund(chargeId: string, cents: number): Promise<Sent<Charge>>;
  /** A dispute of `cents` of a charge (`charge.dispute.created`). */
  dispute(chargeId: string, cents: number): Promise<Sent>;
  /** While true, events are made and kept but not sent (send them with `redeliver`, in any order). */
  paused: boolean;
  /** While true, every API request is answered 500 `api_error`, as during an outage of Stripe's API. */
  outage: boolean;
  /**
   * Requests it matches are carried out, then the connection is closed before the answer (and so are
   * their retries), as when the network fails after Stripe has acted.
   */
  loseAnswers: ((method: string, path: string) => boolean) | null;
  /** Resolves when the events sent on their own (after a PaymentIntent succeeds at once) have been answered. */
  idle(): Promise<void>;
  /** Sends an event again, exactly as first sent (signed anew, as Stripe's retries are). */
  redeliver(eventId: string): Promise<{ status: number; body: HookAnswer }>;
  /** Sends a payload with a given Stripe-Signature header, for the refusals. */
  post(payload: string, signature: string | undefined): Promise<{ status: number; body: HookAnswer }>;
  /** Signs a payload as Stripe does, at `timestamp` (unix seconds) with `secret`. */
  sign(payload: string, timestamp?: number, secret?: string): string;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

type FormValue = string | FormValue[] | { [key: string]: FormValue };
type FormFields = Record<string, FormValue>;

/** `a[b][0][c]=v` form fields as nested objects and arrays, as Stripe reads them. */
function parseForm(body: string): FormFields {
  const out: FormFields = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split(/\[|\]\[|\]/).filter((part) => part !== '');
    let node = out;
    path.forEach((part, i) => {
      if (i === path.length - 1) {
        node[part] = value;
        return;
      }
      node[part] ??= /^\d+$/.test(path[i + 1]!) ? [] : {};
      // An array is indexed by its digits as an object by its keys.
      node = node[part] as FormFields;
    });
  }
  return out;
}

/** The parameters of the requests the fake answers, as the form gives them: every value a string. */
interface Params {
  amount?: string;
  currency?: string;
  customer?: string;
  description?: string;
  metadata?: Record<string, string>;
  payment_method?: string;
  off_session?: string;
  confirm?: string;
  name?: string;
  email?: string;
  invoice_settings?: { default_payment_method?: string };
  mode?: string;
  line_items?: { price?: string; quantity?: string }[];
  success_url?: string;
  cancel_url?: string;
  client_reference_id?: string;
  subscription_data?: { metadata?: Record<string, string> };
  return_url?: string;
}

class ApiError {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {}
}

const invalidRequest = (message: string, code?: string, param?: string) =>
  new ApiError(code === 'resource_missing' ? 404 : 400, {
    type: 'invalid_request_error',
    message,
    ...(code ? { code } : {}),
    ...(param ? { param } : {}),
  });
const missing = (what: string, value: string) =>
  invalidRequest(`No such ${what}: '${value}'`, 'resource_missing', 'id');

export async function startFakeStripe(): Promise<FakeStripe> {
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const customers = new Map<string, Customer>();
  const paymentIntents = new Map<string, PaymentIntent>();
  const charges = new Map<string, Charge>();
  const subscriptions = new Map<string, Subscription>();
  const sessions = new Map<string, CheckoutSession>();
  const events = new Map<string, { event: StripeEvent; payload: string }>();
  const idempotent = new Map<string, { hash: string; status: number; body: unknown }>();
  const requests: FakeStripe['requests'] = [];
  const inFlight = new Set<Promise<unknown>>();

  const sign = (payload: string, timestamp = now(), secret = webhookSecret) =>
    `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex')}`;

  async function post(payload: string, signature: string | undefined): Promise<{ status: number; body: HookAnswer }> {
    const res = await fetch(fake.hookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...(signature === undefined ? {} : { 'stripe-signature': signature }),
      },
      body: payload,
    });
    const text = await res.text();
    let body: HookAnswer = text;
    try {
      body = JSON.parse(text) as HookAnswer;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  }

  /** Makes an event of `object` and sends it; resolves with the gateway's answer. */
  async function emit<O extends StripeObject>(type: string, object: O): Promise<Sent<O>> {
    const event: StripeEvent<O> = {
      id: id('evt'),
      object: 'event',
      api_version: '2026-10-28.endive',
      created: now(),
      data: { object: structuredClone(object) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    };
    const payload = JSON.stringify(event, null, 2);
    events.set(event.id, { event, payload });
    if (fake.paused) return { event, status: 0 };
    const answer = await post(payload, sign(payload));
    return { event, status: answer.status };
  }

  function newCharge(intent: PaymentIntent) {
    const charge: Charge = {
      id: id('ch'),
      object: 'charge',
      amount: intent.amount,
      amount_captured: intent.amount,
      amount_refunded: 0,
      currency: intent.currency,
      customer: intent.customer,
      payment_intent: intent.id,
      paid: true,
      refunded: false,
      disputed: false,
      status: 'succeeded',
      created: now(),
    };
    charges.set(charge.id, charge);
    intent.latest_charge = charge.id;
    intent.amount_received = intent.amount;
    return charge;
  }

  function createPaymentIntent(params: Params): PaymentIntent {
    const amount = Number(params.amount);
    if (!Number.isInteger(amount) || amount < 50)
      throw invalidRequest('Amount must be at least $0.50 usd', 'amount_too_small', 'amount');
    if (!params.currency) throw invalidRequest('Missing required param: currency.', 'parameter_missing', 'currency');
    if (params.customer && !customers.has(params.customer)) throw missing('customer', params.customer);
    const intentId = id('pi');
    const intent: PaymentIntent = {
      id: intentId,
      object: 'payment_intent',
      amount,
      amount_received: 0,
      currency: params.currency,
      customer: params.customer ?? null,
      description: params.description ?? null,
      metadata: params.metadata ?? {},
      payment_method: params.payment_method ?? null,
      client_secret: `${intentId}_secret_${randomBytes(12).toString('hex')}`,
      confirmation_method: 'automatic',
      latest_charge: null,
      last_payment_error: null,
      next_action: null,
      status: params.payment_method ? 'requires_confirmation' : 'requires_payment_method',
      created: now(),
      livemode: false,
    };
    if (params.off_session !== undefined && params.confirm !== 'true')
      throw invalidRequest(
        'You passed off_session without confirm=true; off_session is a parameter of the confirmation.',
        undefined,
        'off_session',
      );
    paymentIntents.set(intentId, intent);
    return params.confirm === 'true' ? confirmPaymentIntent(intent, params) : intent;
  }

  /** Confirms a PaymentIntent with its payment method: the test card decides the outcome. */
  function confirmPaymentIntent(intent: PaymentIntent, params: Params): PaymentIntent {
    if (params.payment_method) intent.payment_method = params.payment_method;
    if (!['requires_confirmation', 'requires_payment_method', 'requires_action'].includes(intent.status)) {
      throw invalidRequest(
        `This PaymentIntent's status is ${intent.status}, so it cannot be confirmed.`,
        'payment_intent_unexpected_state',
      );
    }
    if (!intent.payment_method)
      throw invalidRequest(
        'You must provide a payment method to confirm this PaymentIntent.',
        'payment_intent_unexpected_state',
      );
    const intentId = intent.id;
    const offSession = params.off_session === 'true';
    switch (intent.payment_method) {
      case 'pm_card_chargeDeclinedInsufficientFunds': {
        intent.status = 'requires_payment_method';
        intent.last_payment_error = {
          type: 'card_error',
          code: 'card_declined',
          decline_code: 'insufficient_funds',
          message: 'Your card has insufficient funds.',
        };
        throw new ApiError(402, { ...intent.last_payment_error, payment_intent: intent, request_log_url: null });
      }
      case 'pm_card_authenticationRequired':
        if (offSession) {
          intent.status = 'requires_payment_method';
          intent.last_payment_error = {
            type: 'card_error',
            code: 'authentication_required',
            decline_code: 'authentication_required',
            message: 'Your card was declined. This transaction requires authentication.',
          };
          throw new ApiError(402, { ...intent.last_payment_error, payment_intent: intent });
        }
        intent.status = 'requires_action';
        intent.next_action = {
          type: 'use_stripe_sdk',
          use_stripe_sdk: {
            type: 'three_d_secure_redirect',
            stripe_js: `https://hooks.stripe.com/3d_secure_2/hosted?payment_intent=${intentId}`,
          },
        };
        return intent;
      case 'pm_card_threeDSecureRequired':
        intent.status = 'requires_action';
        intent.next_action = {
          type: 'use_stripe_sdk',
          use_stripe_sdk: {
            type: 'three_d_secure_redirect',
            stripe_js: `https://hooks.stripe.com/3d_secure_2/hosted?payment_intent=${intentId}`,
          },
        };
        return intent;
      default: {
        intent.status = 'succeeded';
        newCharge(intent);
        // Stripe sends the event of a PaymentIntent that succeeded at once too, possibly before the
        // caller has read the answer.
        const sent = emit('payment_intent.succeeded', intent).catch(() => undefined);
        inFlight.add(sent);
        void sent.finally(() => inFlight.delete(sent));
        return intent;
      }
    }
  }

  /** Answers one API request: the object, or throws an ApiError. */
  function route(method: string, path: string, params: Params): { object: unknown; after?: () => void } {
    if (method === 'POST' && path === '/v1/customers') {
      const customer: Customer = {
        id: id('cus'),
        object: 'customer',
        name: params.name ?? null,
        email: params.email ?? null,
        metadata: params.metadata ?? {},
        invoice_settings: { default_payment_method: null, custom_fields: null, footer: null, rendering_options: null },
        created: now(),
        livemode: false,
      };
      customers.set(customer.id, customer);
      return { object: customer };
    }
    const customerPath = path.match(/^\/v1\/customers\/([^/]+)$/);
    if (customerPath) {
      const customer = customers.get(customerPath[1]!);
      if (!customer) throw missing('customer', customerPath[1]!);
      if (method === 'POST') {
        if (params.invoice_settings?.default_payment_method !== undefined)
          customer.invoice_settings.default_payment_method = params.invoice_settings.default_payment_method || null;
        if (params.metadata) Object.assign(customer.metadata, params.metadata);
      }
      return { object: customer };
    }
    if (method === 'POST' && path === '/v1/payment_intents') return { object: createPaymentIntent(params) };
    const intentPath = path.match(/^\/v1\/payment_intents\/([^/]+)(\/confirm)?$/);
    if (intentPath) {
      const intent = paymentIntents.get(intentPath[1]!);
      if (!intent) throw missing('payment_intent', intentPath[1]!);
      if (method === 'POST' && intentPath[2]) return { object: confirmPaymentIntent(intent, params) };
      if (method === 'POST') {
        if (params.metadata) Object.assign(intent.metadata, params.metadata);
        if (params.description !== undefined) intent.description = params.description;
      }
      return { object: intent };
    }
    const subscriptionPath =
      method === 'GET' || method === 'DELETE' ? path.match(/^\/v1\/subscriptions\/([^/]+)$/) : null;
    if (subscriptionPath) {
      const subscription = subscriptions.get(subscriptionPath[1]!);
      if (!subscription) throw missing('subscription', subscriptionPath[1]!);
      if (method === 'DELETE') {
        if (subscription.status === 'canceled')
          throw invalidRequest(`A canceled subscription can only update its cancellation_details and metadata.`);
        subscription.status = 'canceled';
        subscription.canceled_at = now();
        const sent = emit('customer.subscription.deleted', subscription).catch(() => undefined);
        inFlight.add(sent);
        void sent.finally(() => inFlight.delete(sent));
      }
      return { object: subscription };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      if (params.mode !== 'subscription')
        throw invalidRequest('This fake supports subscription mode only.', undefined, 'mode');
      if (!params.line_items?.[0]?.price)
        throw invalidRequest('Missing required param: line_items[0][price].', 'parameter_missing', 'line_items');
      if (!params.success_url)
        throw invalidRequest('Missing required param: success_url.', 'parameter_missing', 'success_url');
      if (params.customer && !customers.has(params.customer)) throw missing('customer', params.customer);
      const sessionId = id('cs_test');
      const session: CheckoutSession = {
        id: sessionId,
        object: 'checkout.session',
        mode: 'subscription',
        status: 'open',
        customer: params.customer ?? null,
        client_reference_id: params.client_reference_id ?? null,
        line_items_price: params.line_items[0].price,
        subscription_metadata: params.subscription_data?.metadata ?? {},
        subscription: null,
        success_url: params.success_url,
        cancel_url: params.cancel_url ?? null,
        url: `${fake.url}/c/pay/${sessionId}`,
        created: now(),
      };
      sessions.set(sessionId, session);
      return { object: session };
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!params.customer) throw invalidRequest('Missing required param: customer.', 'parameter_missing', 'customer');
      if (!customers.has(params.customer)) throw missing('customer', params.customer);
      const sessionId = id('bps');
      return {
        object: {
          id: sessionId,
          object: 'billing_portal.session',
          customer: params.customer,
          return_url: params.return_url ?? null,
          url: `https://billing.stripe.com/p/session/test_${sessionId}`,
          created: now(),
          livemode: false,
        },
      };
    }
    throw new ApiError(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${method}: ${path}).`,
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://stripe.local');
    const method = req.method ?? 'GET';
    const idempotencyKey =
      typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    requests.push({ method, path: url.pathname, idempotencyKey });
    const hosted = /^\/c\/pay\/(cs_test_\w+)$/.exec(url.pathname);
    if (hosted) return hostedCheckout(method, hosted[1]!, res);
    const send = (status: number, body: unknown, replayed = false) => {
      res.writeHead(status, {
        'content-type': 'application/json',
        'request-id': id('req'),
        ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      });
      res.end(JSON.stringify(body));
    };
    const lost = fake.loseAnswers?.(method, url.pathname) ?? false;
    if (fake.outage)
      return send(500, { error: { type: 'api_error', message: 'An unexpected error occurred on our side.' } });
    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } });
    }
    const params = { ...parseForm(url.searchParams.toString()), ...parseForm(raw) } as Params;
    const hash = createHash('sha256').update(`${method} ${url.pathname}\n${raw}`).digest('hex');
    if ((method === 'POST' || method === 'DELETE') && idempotencyKey) {
      const stored = idempotent.get(idempotencyKey);
      if (stored && stored.hash !== hash) {
        return send(400, {
          error: {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
          },
        });
      }
      if (stored) return lost ? void res.destroy() : send(stored.status, stored.body, true);
    }
    let status = 200;
    let body: unknown;
    try {
      body = route(method, url.pathname, params).object;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      status = err.status;
      body = { error: err.body };
    }
    // Stored as sent: a replay answers the first answer, whatever happened since.
    const snapshot = JSON.parse(JSON.stringify(body));
    if ((method === 'POST' || method === 'DELETE') && idempotencyKey)
      idempotent.set(idempotencyKey, { hash, status, body: snapshot });
    if (lost) return void res.destroy();
    send(status, snapshot);
  }

  /**
   * Checkout's hosted page, served by the fake at its own origin (a browser test goes through it): GET
   * shows the plan's price and a Pay button; POST pays as a customer would (a card saved as the
   * customer's default, the session completed, its events sent) and redirects to `success_url`.
   */
  async function hostedCheckout(method: string, sessionId: string, res: ServerResponse) {
    const session = sessions.get(sessionId);
    if (session?.status !== 'open') {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      return void res.end('<!doctype html><title>Expired</title><p>This Checkout session has expired.</p>');
    }
    if (method === 'POST') {
      if (session.customer) fake.attachCard(session.customer, 'pm_card_visa');
      await fake.completeCheckout(sessionId);
      res.writeHead(303, { location: session.success_url });
      return void res.end();
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><html lang="en"><head><title>Checkout</title></head><body><main>' +
        `<h1>Subscribe</h1><p>Price ${session.line_items_price}, billed monthly.</p>` +
        `<form method="post" action="/c/pay/${sessionId}"><button type="submit">Pay and subscribe</button></form>` +
        '</main></body></html>',
    );
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'api_error', message: String(err) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeStripe = {
    url: `http://127.0.0.1:${port}`,
    secretKey,
    webhookSecret,
    hookUrl: '',
    customers,
    paymentIntents,
    charges,
    subscriptions,
    events,
    requests,
    paused: false,
    outage: false,
    loseAnswers: null,
    async idle() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    attachCard(customerId, paymentMethod) {
      const customer = customers.get(customerId);
      if (!customer) throw new Error(`no customer ${customerId}`);
      customer.invoice_settings.default_payment_method = paymentMethod;
    },
    async completeAuthentication(intentId) {
      const intent = paymentIntents.get(intentId);
      if (!intent) throw new Error(`no payment intent ${intentId}`);
      intent.status = 'succeeded';
      intent.next_action = null;
      intent.last_payment_error = null;
      newCharge(intent);
      return emit('payment_intent.succeeded', intent);
    },
    async completeCheckout(sessionId, status = 'active') {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`no checkout session ${sessionId}`);
      const subscriptionId = id('sub');
      const subscription: Subscription = {
        id: subscriptionId,
        object: 'subscription',
        customer: session.customer,
        status,
        metadata: session.subscription_metadata,
        items: {
          object: 'list',
          data: [
            {
              id: id('si'),
              object: 'subscription_item',
              price: {
                id: session.line_items_price,
                object: 'price',
                currency: 'usd',
                recurring: { interval: 'month', interval_count: 1 },
              },
              quantity: 1,
            },
          ],
          has_more: false,
          url: `/v1/subscription_items?subscription=${subscriptionId}`,
        },
        cancel_at_period_end: false,
        created: now(),
        livemode: false,
      };
      subscriptions.set(subscriptionId, subscription);
      session.status = 'complete';
      session.subscription = subscriptionId;
      const sent: Sent[] = [await emit('customer.subscription.created', subscription)];
      if (status === 'active') sent.push(await fake.payInvoice(subscriptionId));
      return { subscription, events: sent };
    },
    async setSubscriptionStatus(subscriptionId, status) {
      const subscription = subscriptions.get(subscriptionId);
      if (!subscription) throw new Error(`no subscription ${subscriptionId}`);
      subscription.status = status;
      return emit(
        status === 'canceled' ? 'customer.subscription.deleted' : 'customer.subscription.updated',
        subscription,
      );
    },
    async payInvoice(subscriptionId) {
      const subscription = subscriptions.get(subscriptionId);
      if (!subscription) throw new Error(`no subscription ${subscriptionId}`);
      const price = subscription.items.data[0]!.price.id;
      const invoiceId = id('in');
      const invoice = {
        id: invoiceId,
        object: 'invoice',
        customer: subscription.customer,
        status: 'paid',
        billing_reason: 'subscription_cycle',
        amount_paid: 4900,
        currency: 'usd',
        parent: {
          type: 'subscription_details',
          quote_details: null,
          subscription_details: { metadata: subscription.metadata, subscription: subscriptionId },
        },
        lines: {
          object: 'list',
          data: [
            {
              id: id('il'),
              object: 'line_item',
              amount: 4900,
              pricing: {
                type: 'price_details',
                price_details: { price, product: 'prod_plan' },
                unit_amount_decimal: '4900',
              },
              quantity: 1,
            },
          ],
          has_more: false,
        },
        created: now(),
      };
      return emit('invoice.paid', invoice);
    },
    async refund(chargeId, cents) {
      const charge = charges.get(chargeId);
      if (!charge) throw new Error(`no charge ${chargeId}`);
      charge.amount_refunded = Math.min(charge.amount, charge.amount_refunded + cents);
      charge.refunded = charge.amount_refunded === charge.amount;
      return emit('charge.refunded', charge);
    },
    async dispute(chargeId, cents) {
      const charge = charges.get(chargeId);
      if (!charge) throw new Error(`no charge ${chargeId}`);
      charge.disputed = true;
      return emit('charge.dispute.created', {
        id: id('dp'),
        object: 'dispute',
        amount: cents,
        currency: charge.currency,
        charge: charge.id,
        payment_intent: charge.payment_intent,
        reason: 'fraudulent',
        status: 'needs_response',
        created: now(),
      });
    },
    async redeliver(eventId) {
      const sent = events.get(eventId);
      if (!sent) throw new Error(`no event ${eventId}`);
      return post(sent.payload, sign(sent.payload));
    },
    post,
    sign,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return fake;
}

/** A plan's price at the fake, by plan, as the Stripe suites configure them. */
export const FAKE_PRICES = {
  starter: 'price_starter_monthly',
  growth: 'price_growth_monthly',
  scale: 'price_scale_monthly',
} as const;

/** The gateway's payments section pointed at `stripe` (STRIPE_API_BASE), with `FAKE_PRICES`. */
export const paymentsAt = (stripe: FakeStripe) => ({
  mode: 'stripe' as const,
  secretKey: stripe.secretKey,
  webhookSecret: stripe.webhookSecret,
  prices: { ...FAKE_PRICES },
  apiBase: new URL(stripe.url),
});
