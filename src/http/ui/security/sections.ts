import type { SignedInContext } from '../browser-context.js';
import type { SecuritySection } from '../pages/security-page.js';
import type { UiContext } from '../ui-context.js';
import { passkeysSection } from './passkeys-section.js';
import { linkedAccountsSectionSource } from './linked-accounts-section.js';
import { emailSection } from './email-section.js';
import { authenticatorAppSection, recoveryCodesSection } from './second-factor-sections.js';
import { passwordSectionSource } from './password-section.js';
import { sessionsSectionSource } from './sessions-section.js';

/**
 * Builds one section of /account/security for the signed-in user (SecuritySection), or nothing when
 * the section does not apply (no upstream provider configured, say).
 */
export type SecuritySectionSource = (
  ui: UiContext,
  browser: SignedInContext,
) => Promise<SecuritySection | undefined>;

/**
 * The sections of the security page, in the order they are shown. A method adds its own source here
 * (its file in this folder); its routes live beside it and answer to /account/security/<method>/....
 */
export const SECURITY_SECTIONS: readonly SecuritySectionSource[] = [
  passkeysSection,
  // Decision 40: upstream accounts that sign the user in.
  linkedAccountsSectionSource,
  authenticatorAppSection,
  recoveryCodesSection,
  // Decision 37: the password, then where the user is signed in.
  passwordSectionSource,
  emailSection,
  sessionsSectionSource,
];
