import { z } from 'zod';

/** `page` and `per_page` query fields with the list's own default and maximum. */
export function paginationQuery(defaultPerPage: number, maxPerPage: number) {
  return {
    page: z.coerce.number().int().min(1).default(1),
    per_page: z.coerce.number().int().min(1).max(maxPerPage).default(defaultPerPage),
  };
}

export interface Pagination {
  page: number;
  per_page: number;
  total: number;
  total_pages: number;
}

export function paginate(total: number, page: number, perPage: number): Pagination {
  return { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) };
}

export function offsetOf(page: number, perPage: number): number {
  return (page - 1) * perPage;
}
