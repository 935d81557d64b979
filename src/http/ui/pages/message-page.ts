import { html } from '../html.js';
import { layout, type PageFrame } from './layout.js';

/** A page that only tells the user something went wrong (and never redirects anywhere). */
export function messagePage(frame: PageFrame, title: string, message: string): string {
  const body = html` <h1>${title}</h1>
    <p role="alert">${message}</p>
    <p class="muted">You can close this page, or go back to the application and try again.</p>`;
  return layout(frame, { title, name: 'message', body });
}
