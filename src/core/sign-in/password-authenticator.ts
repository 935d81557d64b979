import type { Clock } from '../../shared/clock.js';
import { cannotBeUsername } from '../users/account-lockout.js';
import { hashPassword, needsRehash, verifyPassword } from '../users/passwords.js';
import type { UserStore } from '../ports.js';
import type { Authenticator, AuthenticatorResult } from './authenticator.js';
import { PASSWORD } from './methods.js';

/** A user name and password from the sign-in page. */
export interface PasswordAttempt {
  username: string;
  password: string;
}

/** The password method (decision 30), run by SignInService under the lockout of decision 8. */
export class PasswordAuthenticator implements Authenticator<PasswordAttempt> {
  readonly method = PASSWORD;

  constructor(
    private readonly users: Pick<UserStore, 'getByUsername' | 'update'>,
    private readonly clock: Clock,
  ) {}

  async claimant(attempt: PasswordAttempt): Promise<string | undefined> {
    // A name longer than any registered one is a wrong user name; checked before it becomes a key.
    return cannotBeUsername(attempt.username) ? undefined : attempt.username;
  }

  async verify(attempt: PasswordAttempt): Promise<AuthenticatorResult> {
    const user = attempt.username === '' ? undefined : await this.users.getByUsername(attempt.username);
    // verifyPassword spends a decoy verification on unknown names, so a miss costs the same time.
    if (!(await verifyPassword(user?.passwordHash, attempt.password)) || user === undefined) {
      return { outcome: 'refused' };
    }
    // A hash made under older parameters is replaced while the password is at hand.
    if (needsRehash(user.passwordHash)) {
      await this.users.update({
        ...user,
        passwordHash: await hashPassword(attempt.password),
        updatedAt: this.clock.now(),
      });
    }
    return { outcome: 'verified', user };
  }
}
