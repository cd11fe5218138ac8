// Every migration, in order. Add new ones at the end (name = class name).
import { Migration20261121000000_initial } from './Migration20261121000000_initial.ts';

export const MIGRATIONS = [{ name: 'Migration20261121000000_initial', class: Migration20261121000000_initial }];
