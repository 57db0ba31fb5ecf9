import { InitialSchema1764460800000 } from './1764460800000-initial-schema';

export const MIGRATIONS = [InitialSchema1764460800000];
