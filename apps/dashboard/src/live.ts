import { useEffect, useRef } from 'react';

/** Calls `tick` now and every `everyMs` while the tab is visible; paused while it is hidden. */
export function useLiveRefresh(tick: () => Promise<void> | void, everyMs: number): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const run = async () => {
      if (stopped) return;
      if (document.visibilityState === 'visible') await latest.current();
      if (!stopped) timer = setTimeout(run, everyMs);
    };
    const onVisible = () => {
      if (document.visibilityState === 'visible') {
        clearTimeout(timer);
        void run();
      }
    };
    void run();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [everyMs]);
}
