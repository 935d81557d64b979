/** Seconds since the epoch. Injected everywhere time matters so tests can move it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = {
  now: () => Math.floor(Date.now() / 1000),
};

/** A clock tests can move forward. */
export class ManualClock implements Clock {
  constructor(private current: number = Math.floor(Date.now() / 1000)) {}
  now(): number {
    return this.current;
  }
  advance(seconds: number): void {
    this.current += seconds;
  }
}

/** Epoch seconds as RFC 3339 (the times operators and /v1 see). */
export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
