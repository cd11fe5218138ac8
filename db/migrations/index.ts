// Every migration, in order. Add new ones at the end (name = class name).
import { Migration20261121000000_initial } from './Migration20261121000000_initial.ts';
import { Migration20261121060000_limits } from './Migration20261121060000_limits.ts';
import { Migration20261121070000_web } from './Migration20261121070000_web.ts';

export const MIGRATIONS = [
  { name: 'Migration20261121000000_initial', class: Migration20261121000000_initial },
  { name: 'Migration20261121060000_limits', class: Migration20261121060000_limits },
  { name: 'Migration20261121070000_web', class: Migration20261121070000_web },
];
