/** `approve`: approve and reject posts waiting for approval (domain/posts/approval.ts). */
export const SCOPES = ['read', 'generate', 'publish', 'approve'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(v: string): v is Scope {
  return (SCOPES as readonly string[]).includes(v);
}
