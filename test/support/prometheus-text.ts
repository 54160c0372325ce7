/** The value of one series (name and labels exactly as exposed) in Prometheus text, or undefined when absent. */
export function prometheusSample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
