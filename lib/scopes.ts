export const SCOPES = ['read', 'generate', 'publish'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(v: string): v is Scope {
  return (SCOPES as readonly string[]).includes(v);
}
