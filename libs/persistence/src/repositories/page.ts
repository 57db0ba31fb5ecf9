/** A page of a list ordered by id; `nextCursor` is the last id, or null on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export function toPage<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null };
}
