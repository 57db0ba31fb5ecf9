import { getSourceMapsSupport } from 'node:module';

describe('source maps', () => {
  it("maps Hookbase's own code and leaves dependencies' maps unread", async () => {
    await import('./source-maps');
    expect(getSourceMapsSupport()).toEqual(
      expect.objectContaining({ enabled: true, nodeModules: false, generatedCode: false }),
    );
  });
});
