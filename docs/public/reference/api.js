// Renders the running server's OpenAPI document (GET /openapi.json on this origin) with Redoc.
/* global Redoc, document */
const system = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
Redoc.init(
  '/openapi.json',
  {
    expandResponses: '200,201,202',
    jsonSampleExpandLevel: 3,
    theme: {
      colors: { primary: { main: '#3451b2' } },
      typography: {
        fontFamily: system,
        headings: { fontFamily: system },
        code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' },
      },
    },
  },
  document.getElementById('reference'),
  (error) => {
    if (error) {
      document.getElementById('reference').textContent =
        'The API reference could not be loaded: ' + String(error.message || error);
    }
  },
);
