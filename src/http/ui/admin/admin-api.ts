/**
 * The admin console's way to Gatehouse's own /v1 API (docs/decisions.md, decision 42): a real HTTP
 * request through the same routes, token check and validation any API client meets, made in process
 * (Fastify's inject) with the administrator's access token. No back door: what /v1 refuses, the console
 * cannot do.
 */

/** One in-process request, as Fastify's `inject` takes it (app.ts hands the root application's). */
export interface InProcessRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /**
   * The browser's address (the console's request's `request.ip`): an in-process request would come
   * from 127.0.0.1, and the API's rate limits and audit records must see the administrator's own.
   */
  remoteAddress: string;
}

export interface InProcessResponse {
  statusCode: number;
  body: string;
}

export type InProcessCaller = (request: InProcessRequest) => Promise<InProcessResponse>;

/** An answer of /v1: its status, and its JSON body (undefined when there is none). */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** RFC 9457 problem details as /v1 writes them (problem.ts): `detail`, and `field` when one is at fault. */
export interface ApiProblem {
  status: number;
  detail: string;
  field?: string;
  error?: string;
}

export class AdminApi {
  constructor(
    private readonly call: InProcessCaller,
    /** `<base path>/v1`. */
    private readonly prefix: string,
    private readonly accessToken: string,
    /** The administrator's address (InProcessRequest.remoteAddress). */
    private readonly remoteAddress: string,
  ) {}

  async request(method: InProcessRequest['method'], path: string, body?: unknown): Promise<ApiAnswer> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.accessToken}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await this.call({
      method,
      url: `${this.prefix}${path}`,
      headers,
      remoteAddress: this.remoteAddress,
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    let parsed: unknown;
    try {
      parsed = response.body === '' ? undefined : JSON.parse(response.body);
    } catch {
      parsed = undefined;
    }
    return { status: response.statusCode, body: parsed };
  }

  get(path: string): Promise<ApiAnswer> {
    return this.request('GET', path);
  }
}

/** The problem an answer carries, when it is an error. */
export function problemOf(answer: ApiAnswer): ApiProblem | undefined {
  if (answer.status < 400) return undefined;
  const body = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as Record<
    string,
    unknown
  >;
  return {
    status: answer.status,
    detail: typeof body['detail'] === 'string' ? body['detail'] : `the API answered ${answer.status}`,
    ...(typeof body['field'] === 'string' ? { field: body['field'] } : {}),
    ...(typeof body['error'] === 'string' ? { error: body['error'] } : {}),
  };
}

/**
 * A problem in plain words for a person: the API's `detail` begins with a small letter and names
 * fields by their JSON names; the page shows it as a sentence next to the field it names.
 */
export function plainWords(problem: ApiProblem): string {
  // The field is named by the form itself (the message sits next to it): drop a leading `redirect_uris: `.
  const text = problem.detail.trim().replace(/^[a-z][a-z0-9_.]*: /, '');
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** The top-level form field a problem's `field` (a dotted path such as `redirect_uris.0`) names. */
export function fieldOf(problem: ApiProblem | undefined): string | undefined {
  return problem?.field?.split('.')[0];
}

/** A JSON object's member as a string, for the pages (the API's shapes are its OpenAPI document's). */
export function str(value: unknown, key: string): string {
  if (typeof value !== 'object' || value === null) return '';
  const member = (value as Record<string, unknown>)[key];
  return typeof member === 'string' ? member : member === null || member === undefined ? '' : String(member);
}

/** A JSON object's member as an array of strings. */
export function strings(value: unknown, key: string): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const member = (value as Record<string, unknown>)[key];
  return Array.isArray(member) ? member.filter((item): item is string => typeof item === 'string') : [];
}

/** A JSON object's member as a list of objects. */
export function items(value: unknown, key = 'items'): Record<string, unknown>[] {
  if (typeof value !== 'object' || value === null) return [];
  const member = (value as Record<string, unknown>)[key];
  return Array.isArray(member)
    ? member.filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null)
    : [];
}

/** A JSON object's numeric member, or undefined. */
export function num(value: unknown, key: string): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const member = (value as Record<string, unknown>)[key];
  return typeof member === 'number' ? member : undefined;
}
