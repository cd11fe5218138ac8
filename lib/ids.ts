// Opaque, sortable ids: a type prefix and a ULID (time-ordered, so ids sort by creation).
import { monotonicFactory } from 'ulidx';

const ulid = monotonicFactory();

export type IdPrefix =
  | 'org'
  | 'key'
  | 'ch'
  | 'post'
  | 'pc'
  | 'med'
  | 'req'
  | 'wh'
  | 'evt'
  | 'whd'
  | 'ser'
  | 'pm'
  | 'pci'
  | 'mem'
  | 'inv'
  | 'aud'
  | 'plk'
  | 'feed';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}
