import { html } from '../html.js';
import { clientLabel, clientLabelText } from './client-label.js';
import { layout, type PageFrame } from './layout.js';

export interface FormPostPageInput {
  /** The client's registered redirect URI, verified: where the form goes. */
  action: string;
  params: readonly (readonly [string, string])[];
  clientName: string;
  /** Its Client ID Metadata Document's host (decision 46), shown beside the name. */
  clientHost?: string;
}

/**
 * The form_post response (OAuth 2.0 Form Post Response Mode §2): a form of hidden fields posted to the
 * redirect URI, submitted at once by /assets/form-post, or by the person when scripts are off.
 */
export function formPostPage(frame: PageFrame, input: FormPostPageInput): string {
  const body = html` <h1>Returning to ${clientLabel(input.clientName, input.clientHost)}</h1>
    <form method="post" action="${input.action}" id="authorization-response" class="stack">
      ${input.params.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
      <noscript>
        <p>Scripts are off in this browser, so continue by hand.</p>
        <div class="actions"><button type="submit" class="primary">Continue</button></div>
      </noscript>
    </form>`;
  return layout(frame, {
    title: `Returning to ${clientLabelText(input.clientName, input.clientHost)}`,
    name: 'form-post',
    body,
    scripts: ['/assets/form-post'],
  });
}
