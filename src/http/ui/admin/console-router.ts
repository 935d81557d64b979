import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminApi, ApiAnswer } from './admin-api.js';
import type { BrowserContext } from '../browser-context.js';
import type { ConsoleFrame, ConsoleSection } from '../pages/admin/console-layout.js';
import type { UiContext } from '../ui-context.js';

/** What a console route has once the administrator is signed in to it. */
export interface Console {
  browser: BrowserContext;
  api: AdminApi;
  frame: ConsoleFrame;
}

/**
 * What a section of the admin console (sections/*.ts) registers its pages with (decision 42): every
 * page opens the console first (sign-in, the administrator check), every form is CSRF-checked, and
 * every read and change is a /v1 request through `Console.api`.
 */
export interface ConsoleRouter {
  ui: UiContext;
  /** The console's path under the base path, `/admin`. */
  adminPath: string;
  /** The configured base path, prefixed to every link and redirect. */
  base: string;
  now(): number;
  /** Rows per page of a listed collection. */
  pageSize: number;
  /** A GET page; `render` runs once the console is open. */
  page(
    path: string,
    render: (request: FastifyRequest, reply: FastifyReply, c: Console) => Promise<FastifyReply>,
  ): void;
  /** A POST form: CSRF checked, then the console opened (sign-in returns to `back`). */
  action(
    path: string,
    back: (request: FastifyRequest) => string,
    run: (request: FastifyRequest, reply: FastifyReply, c: Console) => Promise<FastifyReply>,
  ): void;
  /** An API answer that is no success: sign-in again on 401, the 403 page, else the error page. */
  failed(
    request: FastifyRequest,
    reply: FastifyReply,
    c: Console,
    answer: ApiAnswer,
    section: ConsoleSection,
  ): Promise<FastifyReply>;
  /** 303 to `path` (under the base path), naming a notice by its word. */
  see(reply: FastifyReply, path: string, done?: string): FastifyReply;
  /** The notice a redirect named by `?done=WORD`, looked up in the section's own fixed texts. */
  noticeOf(request: FastifyRequest, notices: Readonly<Record<string, string>>): string | undefined;
  /**
   * Serves a file the console's pages load (a script, a stylesheet) under `<admin>/assets/`, named
   * `name` and a hash of its content, cached for a year (a new content is a new name); returns its path
   * under the base path, for the layout's `scripts` or a link.
   */
  asset(name: string, contentType: string, body: string): string;
  param(request: FastifyRequest, name?: string): string;
  query(request: FastifyRequest, name: string): string;
  offset(request: FastifyRequest): number;
}
