import QRCode from 'qrcode';
import { SafeHtml } from '../html.js';

/**
 * The QR code an authenticator app scans (the otpauth:// URI), as inline SVG made by `qrcode`: plain
 * elements with presentation attributes, no script and no style attribute, so the strict CSP
 * (content-security-policy.ts) allows it, and no image request carries the secret in a URL.
 */
export async function qrCodeSvg(uri: string): Promise<SafeHtml> {
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
  // Made by the library from the URI alone: only <svg> and <path> with numeric data.
  return new SafeHtml(svg.replace('<svg ', '<svg focusable="false" aria-hidden="true" '));
}
