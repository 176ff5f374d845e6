/**
 * The DROP Data Broker API (OpenAPI 1.2.0): `GET /data/download`, `POST /data/upload`, `POST /data/amend`,
 * every request with the `X-API-KEY` header. Errors come back as `{message}`; upload and amend answer
 * `{message, acceptedCount, rejectedCount, accepted[], rejected[]}`, with 202 when at least one file was
 * accepted and 400 when none was. The client retries nothing by itself: a 202 "preparing", a 429 or a
 * 5xx tells the caller when to call again.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { AppError } from '../../shared/errors.ts';

export const DROP_PRODUCTION_URL = 'https://api.drop.privacy.ca.gov';
export const DROP_SANDBOX_URL = 'https://api.drop.privacy.ca.gov/sandbox';

export interface DropClientOptions {
  apiKey: string;
  /** Default {@link DROP_PRODUCTION_URL}; {@link DROP_SANDBOX_URL} for the sandbox. */
  baseUrl?: string;
  /** Default the global fetch. */
  fetch?: typeof fetch;
}

export type DownloadResult =
  | { kind: 'zip'; fileName: string; path: string; bytes: number }
  | { kind: 'no-data'; message: string }
  | { kind: 'preparing'; message: string; retryAfterSeconds?: number };

export interface AcceptedFile {
  fileName: string;
  fileSizeBytes: number;
}
export interface RejectedFile {
  fileName: string;
  message: string;
}
export interface UploadResult {
  message: string;
  acceptedCount: number;
  rejectedCount: number;
  accepted: AcceptedFile[];
  rejected: RejectedFile[];
}

/** A response CSV to send: its name (the downloaded list's, maybe with a suffix) and its bytes. */
export interface ResponseFile {
  name: string;
  content: string | Uint8Array | Blob;
}

const CODES: Record<number, string> = {
  400: 'drop_upload_rejected',
  401: 'drop_unauthorized',
  403: 'drop_forbidden',
  404: 'drop_not_found',
  409: 'drop_conflict',
  429: 'drop_rate_limited',
};

/** A refusal or failure of the DROP API, with its status, its message and, for 400s, the rejected files. */
export class DropApiError extends AppError {
  constructor(
    readonly httpStatus: number,
    message: string,
    readonly retryAfterSeconds?: number,
    readonly rejected: RejectedFile[] = [],
  ) {
    const code = CODES[httpStatus] ?? (httpStatus >= 500 ? 'drop_unavailable' : 'drop_unexpected');
    super(httpStatus === 429 || httpStatus >= 500 ? 503 : 502, code, `DROP answered ${httpStatus}: ${message}`);
    this.name = 'DropApiError';
  }

  /** 429 and 5xx: call again later (after `retryAfterSeconds` when DROP said). */
  get retryable(): boolean {
    return this.httpStatus === 429 || this.httpStatus >= 500;
  }
}

/** The rejection DROP gives a file name it already accepted in this batch: for a retry, already done. */
export const isAlreadyUploaded = (rejected: RejectedFile): boolean =>
  rejected.message.startsWith('A file with this name was already uploaded for the current download');

function retryAfter(response: Response): number | undefined {
  const value = Number(response.headers.get('retry-after'));
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

async function messageOf(response: Response): Promise<{ message: string; body: unknown }> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { message?: unknown };
    return { message: typeof body.message === 'string' ? body.message : text, body };
  } catch {
    return { message: text || response.statusText, body: undefined };
  }
}

async function failure(response: Response): Promise<DropApiError> {
  const { message, body } = await messageOf(response);
  const rejected = (body as Partial<UploadResult> | undefined)?.rejected;
  return new DropApiError(response.status, message, retryAfter(response), Array.isArray(rejected) ? rejected : []);
}

/** `attachment; filename="20260312_4821_DROP.zip"` → the bare file name, when it is a safe `.zip` name. */
function zipName(disposition: string | null): string | undefined {
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition ?? '');
  const name = match?.[1] ? path.basename(match[1]) : undefined;
  return name && /^[A-Za-z0-9._-]+\.zip$/.test(name) ? name : undefined;
}

export function createDropClient(options: DropClientOptions) {
  const base = (options.baseUrl ?? DROP_PRODUCTION_URL).replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const headers = (accept: string) => ({ 'X-API-KEY': options.apiKey, Accept: accept });

  /**
   * Asks for the current batch. When the ZIP is ready it is written into `dir` under the name DROP gives
   * (`<YYYYMMDD>_<DataBrokerId>_DROP.zip`), streamed to disk; otherwise the JSON answer says why not.
   */
  async function download(dir: string): Promise<DownloadResult> {
    const response = await doFetch(`${base}/data/download`, { headers: headers('application/zip, application/json') });
    const type = response.headers.get('content-type') ?? '';
    if (response.status === 202) {
      const { message } = await messageOf(response);
      const seconds = retryAfter(response);
      return { kind: 'preparing', message, ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }) };
    }
    if (response.status !== 200) throw await failure(response);
    // 200 is either the ZIP or, as JSON, "no new consumer request data or removed identifiers".
    if (type.startsWith('application/json')) return { kind: 'no-data', message: (await messageOf(response)).message };
    if (!response.body) throw new DropApiError(200, 'the ZIP answer has no body');

    const fileName = zipName(response.headers.get('content-disposition')) ?? `drop-${Date.now()}.zip`;
    const target = path.join(dir, fileName);
    const partial = `${target}.part`;
    const file = createWriteStream(partial);
    try {
      await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), file);
      await rename(partial, target);
    } catch (err) {
      // A download that breaks at once can do so while the file is still being opened: removed once the
      // stream has closed, it cannot be created again behind the removal.
      if (!file.closed) await new Promise<void>((closed) => file.once('close', () => closed()));
      await rm(partial, { force: true });
      throw err;
    }
    const { size } = await stat(target);
    return { kind: 'zip', fileName, path: target, bytes: size };
  }

  async function send(route: '/data/upload' | '/data/amend', files: readonly ResponseFile[]): Promise<UploadResult> {
    const form = new FormData();
    for (const file of files) {
      const { content } = file;
      const part = typeof content === 'string' || content instanceof Blob ? content : new Uint8Array(content);
      form.append('files', new File([part], file.name, { type: 'text/csv' }));
    }
    const response = await doFetch(`${base}${route}`, {
      method: 'POST',
      headers: headers('application/json'),
      body: form,
    });
    if (response.status !== 202) throw await failure(response);
    return (await response.json()) as UploadResult;
  }

  return {
    download,
    /** New status responses for the current batch; one request may carry several CSV files. */
    upload: (files: readonly ResponseFile[]) => send('/data/upload', files),
    /** Corrections to status responses already sent; same files and answers as upload. */
    amend: (files: readonly ResponseFile[]) => send('/data/amend', files),
  };
}

export type DropClient = ReturnType<typeof createDropClient>;
