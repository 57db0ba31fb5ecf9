import { useEffect, useState } from 'react';

// A small router over the History API: every page has its own URL under /dashboard/ (in portal
// mode under /dashboard/portal/<orgId>/), and the server answers index.html for each of them.
let BASE = '/dashboard';

/** Moves every page under another base: portal mode's pages keep their organization in the path. */
export function setBase(base: string): void {
  BASE = base;
}

/** The address of a page, for links that open in a new tab. */
export function hrefOf(to: string): string {
  return `${BASE}${to}`;
}

export function currentRoute(): string {
  const path = window.location.pathname;
  const route = path.startsWith(BASE) ? path.slice(BASE.length) : path;
  return (route || '/') + window.location.search;
}

const listeners = new Set<() => void>();

export function navigate(to: string): void {
  window.history.pushState(null, '', `${BASE}${to}`);
  listeners.forEach((listener) => listener());
}

export function useRoute(): string {
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return route;
}
