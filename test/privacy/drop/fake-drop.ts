/**
 * A strict local DROP Data Broker API, written from the OpenAPI 1.2.0 contract and the API operations
 * page (test/fixtures/drop/SOURCES.md, "API"): the same three routes, the same `X-API-KEY` check, the same
 * refusals and the same `{message}` / UploadResponse bodies, word for word where the specification gives
 * the words. It serves in process: `fake.fetch` is handed to the client as its fetch.
 *
 * State: batches wait in a queue; `GET /data/download` answers 202 (Retry-After 60) `preparingCalls`
 * times, then the ZIP, then 409 until every work item of that batch has a status. Uploads are checked
 * per file as DROP checks them before accepting; rows are then checked as DROP's later validation would
 * (the real one reports row errors by email: here they land in `rowErrors`).
 */
import { type ListType, LIST_TYPES } from '../../../src/privacy/drop/spec.ts';
import { zipSync } from './zip-writer.ts';

export const MESSAGES = {
  unauthorized: 'API key is missing or invalid. Fix or regenerate the API key and try again.',
  forbidden:
    'Your account is not eligible for this operation. ' +
    'Resolve any account, registration, payment, or access issue and try again.',
  noSelectedLists: 'No identifier list preferences are enabled. Select at least one list and try again.',
  notFound: 'The requested endpoint was not found. Check the URL/path and try again.',
  tooMany: 'Too many requests. Wait and try again.',
  serverError: 'The system is temporarily unavailable. Try again later.',
  noNewData: 'No new consumer request data or removed identifiers are available since your last completed download.',
  preparing:
    'No download package is available yet. Your request was received, and the package is being created. ' +
    'Call GET /data/download again later.',
  batchOpen: 'Complete the current batch or contact DROP support if a re-download is needed.',
  noActiveDownload:
    'No active download is waiting for responses. Use GET /data/download to request or download a new ZIP file.',
  amendState: 'The amend request cannot be processed in the current state.',
  uploadAccepted: 'Upload received. Accepted files were queued for validation.',
  uploadMixed: 'Upload received. Accepted files were queued for validation. Rejected files were not accepted.',
  uploadInvalid: 'Upload request is invalid. Fix the rejected files and try again.',
  onlyCsv: 'Only CSV files are accepted.',
  invalidHeader: 'Invalid CSV header. Expected: Id,Status.',
  duplicate: 'A file with this name was already uploaded for the current download. Use a unique suffix and try again',
  notUtf8: 'File could not be read as UTF-8 CSV',
  noFile: 'No CSV file was provided',
  /** Not worded by the specification ("use a downloaded file name or allowed suffix pattern"): ours. */
  badName: 'File name must be a downloaded file name or that name with an allowed suffix.',
} as const;

export interface FakeWorkItem {
  id: string;
  hash: string;
}
export interface FakeBatch {
  lists: Partial<Record<ListType, FakeWorkItem[]>>;
  removed?: (FakeWorkItem & { listType: ListType })[];
}
export interface FakeDropOptions {
  apiKey: string;
  dataBrokerId?: string;
  /** `YYYYMMDD` of the files; default 20260312 (the specification's examples). */
  date?: string;
  /** Default every list. */
  selectedLists?: ListType[];
  eligible?: boolean;
  /** 202 answers before each batch's ZIP is ready; default 1. */
  preparingCalls?: number;
  /** `/sandbox` to serve as the sandbox base URL does. */
  prefix?: string;
}

interface OpenBatch {
  zip: Buffer;
  zipName: string;
  /** List file stem (`20260312_4821_Email`) → its list type. */
  stems: Map<string, ListType>;
  /** Work item → its list; deleted from `outstanding` once it has a status. */
  items: Map<string, ListType>;
  outstanding: Set<string>;
  names: { upload: Set<string>; amend: Set<string> };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export function createFakeDrop(options: FakeDropOptions) {
  const date = options.date ?? '20260312';
  const brokerId = options.dataBrokerId ?? '4821';
  const selected = options.selectedLists ?? [...LIST_TYPES];
  const queue: FakeBatch[] = [];
  let preparingLeft = options.preparingCalls ?? 1;
  let current: OpenBatch | undefined;
  let failNext: 429 | 500 | undefined;
  const statuses = new Map<string, number>();
  const rowErrors: string[] = [];
  const requests: { method: string; path: string; accept: string | null }[] = [];

  function open(batch: FakeBatch): OpenBatch {
    const stems = new Map<string, ListType>();
    const items = new Map<string, ListType>();
    const files = selected.map((listType) => {
      const stem = `${date}_${brokerId}_${listType}`;
      stems.set(stem, listType);
      const rows = batch.lists[listType] ?? [];
      for (const row of rows) items.set(row.id, listType);
      return { name: `${stem}.csv`, data: ['ID,Hash', ...rows.map((r) => `${r.id},${r.hash}`)].join('\n') };
    });
    if (batch.removed?.length) {
      const rows = batch.removed.map((r) => `${r.id},${r.hash},${r.listType}`);
      files.push({ name: `${date}_${brokerId}_Removed.csv`, data: ['ID,Hash,ListType', ...rows].join('\n') });
    }
    return {
      zip: zipSync(files),
      zipName: `${date}_${brokerId}_DROP.zip`,
      stems,
      items,
      outstanding: new Set(items.keys()),
      names: { upload: new Set(), amend: new Set() },
    };
  }

  function download(): Response {
    if (current && current.outstanding.size > 0) return json(409, { message: MESSAGES.batchOpen });
    const next = queue[0];
    if (!next) return json(200, { message: MESSAGES.noNewData });
    if (preparingLeft > 0) {
      preparingLeft--;
      return json(202, { message: MESSAGES.preparing }, { 'Retry-After': '60' });
    }
    queue.shift();
    preparingLeft = options.preparingCalls ?? 1;
    current = open(next);
    return new Response(new Uint8Array(current.zip), {
      status: 200,
      headers: {
        'content-type': 'application/zip',
        'content-disposition': `attachment; filename="${current.zipName}"`,
      },
    });
  }

  /** The list a response file answers, from its name: a list file's stem, maybe with `_<suffix>`. */
  function listOf(batch: OpenBatch, name: string): ListType | undefined {
    const match = /^(\d{8}_\d{4}_[A-Za-z]+)(?:_[A-Za-z0-9]{1,10})?\.csv$/.exec(name);
    return match ? batch.stems.get(match[1] ?? '') : undefined;
  }

  function applyRows(text: string, listType: ListType, file: string, amend: boolean): void {
    const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
    lines.slice(1).forEach((line, i) => {
      if (line === '') return;
      const [id = '', status = '', extra] = line.split(',');
      const where = `${file} row ${i + 2}`;
      if (extra !== undefined || !/^[2-5]$/.test(status)) rowErrors.push(`${where}: invalid status`);
      else if (current?.items.get(id) !== listType) rowErrors.push(`${where}: unknown work item ${id}`);
      else if (amend && !statuses.has(id)) rowErrors.push(`${where}: ${id} has no status to amend`);
      else {
        statuses.set(id, Number(status));
        current?.outstanding.delete(id);
      }
    });
  }

  async function receive(request: Request, amend: boolean): Promise<Response> {
    const batch = current;
    if (!batch || (amend ? batch.names.upload.size === 0 : batch.outstanding.size === 0))
      return json(409, { message: amend ? MESSAGES.amendState : MESSAGES.noActiveDownload });
    let files: File[] = [];
    try {
      files = (await request.formData()).getAll('files').filter((f): f is File => f instanceof File);
    } catch {
      // not multipart: no file
    }
    const accepted: { fileName: string; fileSizeBytes: number }[] = [];
    const rejected: { fileName: string; message: string }[] = [];
    if (files.length === 0) rejected.push({ fileName: '', message: MESSAGES.noFile });
    const names = amend ? batch.names.amend : batch.names.upload;
    for (const file of files) {
      const reject = (message: string) => rejected.push({ fileName: file.name, message });
      const listType = listOf(batch, file.name);
      if (!/\.csv$/i.test(file.name) || /zip/.test(file.type)) reject(MESSAGES.onlyCsv);
      else if (!listType) reject(MESSAGES.badName);
      else if (names.has(file.name)) reject(MESSAGES.duplicate);
      else {
        let text: string;
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(await file.arrayBuffer());
        } catch {
          reject(MESSAGES.notUtf8);
          continue;
        }
        if (text.replace(/^\uFEFF/, '').split(/\r?\n/)[0] !== 'Id,Status') reject(MESSAGES.invalidHeader);
        else {
          names.add(file.name);
          accepted.push({ fileName: file.name, fileSizeBytes: file.size });
          applyRows(text, listType, file.name, amend);
        }
      }
    }
    const body = { acceptedCount: accepted.length, rejectedCount: rejected.length, accepted, rejected };
    if (accepted.length === 0) return json(400, { message: MESSAGES.uploadInvalid, ...body });
    return json(202, { message: rejected.length ? MESSAGES.uploadMixed : MESSAGES.uploadAccepted, ...body });
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const prefix = options.prefix ?? '';
    const route = url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : url.pathname;
    requests.push({ method: request.method, path: url.pathname, accept: request.headers.get('accept') });
    if (request.headers.get('x-api-key') !== options.apiKey) return json(401, { message: MESSAGES.unauthorized });
    if (failNext) {
      const status = failNext;
      failNext = undefined;
      return status === 429
        ? json(429, { message: MESSAGES.tooMany }, { 'Retry-After': '30' })
        : json(500, { message: MESSAGES.serverError });
    }
    const known = `${request.method} ${route}`;
    if (!['GET /data/download', 'POST /data/upload', 'POST /data/amend'].includes(known))
      return json(404, { message: MESSAGES.notFound });
    if (options.eligible === false) return json(403, { message: MESSAGES.forbidden });
    if (selected.length === 0) return json(403, { message: MESSAGES.noSelectedLists });
    if (known === 'GET /data/download') return download();
    return receive(request, known === 'POST /data/amend');
  }

  return {
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => handle(new Request(input, init))) as typeof fetch,
    queueBatch: (batch: FakeBatch) => void queue.push(batch),
    failNext: (status: 429 | 500) => {
      failNext = status;
    },
    /** Statuses DROP holds, by work item. */
    statuses,
    rowErrors,
    requests,
    outstanding: () => [...(current?.outstanding ?? [])],
  };
}

export type FakeDrop = ReturnType<typeof createFakeDrop>;
