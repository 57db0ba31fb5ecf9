/** A metric's samples at `url`'s `/metrics`, by their labels' text (`group="…",topic="…"`). */
export async function metricSamples(url: string, name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}\\{(.*)\\} (\\S+)$`).exec(line);
    if (match) samples.set(match[1], Number(match[2]));
  }
  return samples;
}
