// Runs in the browser (served at /assets/passkey as a module script; compiled by tsc with the DOM
// library). The WebAuthn ceremonies of the sign-in page, the second-factor page and the security page
// (docs/decisions.md, decision 33). It only carries bytes: the options come from the server as JSON
// (base64url for binary fields, WebAuthn §5.1's JSON forms), go to navigator.credentials, and the
// answer goes back in a form field `credential`, posted as an ordinary form so the server answers with
// a page or a redirect. No crypto here: the authenticator signs, the server checks.
//
// Markup it acts on (each optional): a form with `data-passkey="get"` (sign-in, second factor) or
// `data-passkey="create"` (add a passkey), `data-options` the URL of its options, hidden fields
// `csrf_token` and `credential`, an element `[data-passkey-error]` for messages, and for `get` a
// button `[data-passkey-start]`. A `get` form with `data-conditional` also offers the passkeys in the
// user name field's autofill (conditional mediation) where the browser can.

type Json = Record<string, unknown>;

function toBytes(value: string): ArrayBuffer {
  const base64 = value.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

function fromBytes(buffer: ArrayBuffer): string {
  const bytes = new Uint8Array(buffer);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function descriptors(list: unknown): PublicKeyCredentialDescriptor[] {
  return Array.isArray(list)
    ? list.map((item: Json) => ({ ...item, id: toBytes(String(item.id)) }) as PublicKeyCredentialDescriptor)
    : [];
}

function creationOptions(json: Json): PublicKeyCredentialCreationOptions {
  const user = json.user as Json;
  return {
    ...json,
    challenge: toBytes(String(json.challenge)),
    user: { ...user, id: toBytes(String(user.id)) },
    excludeCredentials: descriptors(json.excludeCredentials),
  } as PublicKeyCredentialCreationOptions;
}

function requestOptions(json: Json): PublicKeyCredentialRequestOptions {
  return {
    ...json,
    challenge: toBytes(String(json.challenge)),
    allowCredentials: descriptors(json.allowCredentials),
  } as PublicKeyCredentialRequestOptions;
}

/** A PublicKeyCredential as the JSON the server reads (WebAuthn §5.1's RegistrationResponseJSON and AuthenticationResponseJSON). */
function credentialJson(credential: PublicKeyCredential): Json {
  const response = credential.response;
  const common = {
    id: credential.id,
    rawId: fromBytes(credential.rawId),
    type: credential.type,
    clientExtensionResults: credential.getClientExtensionResults(),
    ...(credential.authenticatorAttachment
      ? { authenticatorAttachment: credential.authenticatorAttachment }
      : {}),
  };
  if (response instanceof AuthenticatorAttestationResponse) {
    return {
      ...common,
      response: {
        clientDataJSON: fromBytes(response.clientDataJSON),
        attestationObject: fromBytes(response.attestationObject),
        transports: typeof response.getTransports === 'function' ? response.getTransports() : [],
      },
    };
  }
  const assertion = response as AuthenticatorAssertionResponse;
  return {
    ...common,
    response: {
      clientDataJSON: fromBytes(assertion.clientDataJSON),
      authenticatorData: fromBytes(assertion.authenticatorData),
      signature: fromBytes(assertion.signature),
      ...(assertion.userHandle ? { userHandle: fromBytes(assertion.userHandle) } : {}),
    },
  };
}

function field(form: HTMLFormElement, name: string): HTMLInputElement | undefined {
  const element = form.elements.namedItem(name);
  return element instanceof HTMLInputElement ? element : undefined;
}

function showError(form: HTMLFormElement, message: string): void {
  const element = form.querySelector<HTMLElement>('[data-passkey-error]');
  if (element === null) return;
  element.textContent = message;
  element.hidden = false;
}

/** Fetches the ceremony's options; a server that wants a fresh sign-in first says where to go. */
async function fetchOptions(form: HTMLFormElement): Promise<Json | undefined> {
  const body = new URLSearchParams({ csrf_token: field(form, 'csrf_token')?.value ?? '' });
  const response = await fetch(form.dataset.options ?? '', {
    method: 'POST',
    body,
    credentials: 'same-origin',
    headers: { accept: 'application/json' },
  });
  const json = (await response.json()) as Json;
  if (typeof json.signInAgain === 'string') {
    window.location.assign(json.signInAgain);
    return undefined;
  }
  if (!response.ok) throw new Error(typeof json.message === 'string' ? json.message : 'no options');
  return json;
}

function submitWith(form: HTMLFormElement, credential: Credential | null): void {
  const target = field(form, 'credential');
  if (!(credential instanceof PublicKeyCredential) || target === undefined) return;
  target.value = JSON.stringify(credentialJson(credential));
  form.submit();
}

function failed(form: HTMLFormElement, error: unknown): void {
  // The person cancelled, or the browser's own time ran out: say so, and let them try again.
  if (error instanceof DOMException && error.name === 'AbortError') return;
  const cancelled = error instanceof DOMException && error.name === 'NotAllowedError';
  showError(
    form,
    cancelled
      ? 'The passkey request was cancelled or timed out. Try again.'
      : 'Your browser could not use a passkey here. Try again.',
  );
}

function setUpGet(form: HTMLFormElement): void {
  let conditional: AbortController | undefined;
  const button = form.querySelector<HTMLButtonElement>('[data-passkey-start]');
  button?.addEventListener('click', () => {
    // Only one request may be pending: the autofill one steps aside for the button's.
    conditional?.abort();
    conditional = undefined;
    void (async () => {
      try {
        const options = await fetchOptions(form);
        if (options === undefined) return;
        submitWith(form, await navigator.credentials.get({ publicKey: requestOptions(options) }));
      } catch (error) {
        failed(form, error);
      }
    })();
  });
  if (form.dataset.conditional === undefined) return;
  void (async () => {
    const available =
      typeof PublicKeyCredential.isConditionalMediationAvailable === 'function' &&
      (await PublicKeyCredential.isConditionalMediationAvailable());
    if (!available) return;
    const controller = new AbortController();
    conditional = controller;
    try {
      const options = await fetchOptions(form);
      if (options === undefined || controller.signal.aborted) return;
      const credential = await navigator.credentials.get({
        publicKey: requestOptions(options),
        mediation: 'conditional',
        signal: controller.signal,
      });
      submitWith(form, credential);
    } catch {
      // Silent: the person asked for nothing yet (the browser may refuse WebAuthn on this page, or the
      // request was set aside for the button's); the button still says what goes wrong.
    }
  })();
}

function setUpCreate(form: HTMLFormElement): void {
  form.addEventListener('submit', (event) => {
    // The ceremony first; the form is then submitted by submitWith (form.submit() fires no event).
    event.preventDefault();
    void (async () => {
      try {
        const options = await fetchOptions(form);
        if (options === undefined) return;
        submitWith(form, await navigator.credentials.create({ publicKey: creationOptions(options) }));
      } catch (error) {
        failed(form, error);
      }
    })();
  });
}

// Without WebAuthn the forms stay hidden: the password (or the code) is the way in.
if (typeof window.PublicKeyCredential === 'function') {
  for (const form of document.querySelectorAll<HTMLFormElement>('form[data-passkey]')) {
    if (form.dataset.passkey === 'get') setUpGet(form);
    if (form.dataset.passkey === 'create') setUpCreate(form);
    form.hidden = false;
  }
}
