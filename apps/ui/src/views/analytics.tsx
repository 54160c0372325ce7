import { dataOf, type paths } from '@sluice/client';
import type { ChartConfiguration } from 'chart.js';
import { useMemo, useState } from 'preact/hooks';
import { ChartCanvas } from '../components/chart.js';
import { FilterForm, rfc3339, type FilterValues } from '../components/filter-form.js';
import { ErrorNote } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

type Analytics = paths['/v1/analytics']['get']['responses'][200]['content']['application/json'];
type Query = NonNullable<paths['/v1/analytics']['get']['parameters']['query']>;
type Interval = NonNullable<Query['interval']>;

const INTERVALS = ['hourly', 'daily', 'weekly', 'monthly'] as const;
const PALETTE = ['#1e88e5', '#e53935', '#fdd835', '#43a047', '#8e24aa', '#fb8c00', '#00acc1', '#6d4c41', '#546e7a', '#d81b60'];

/**
 * A bucket's label. Days, weeks and months are UTC buckets (a day starts at 00:00 UTC): shown in
 * UTC, or west of Greenwich each would carry the day before. Hours are shown in local time, with
 * their minutes: in a zone half an hour off UTC (India, Newfoundland) an hour starts at :30.
 */
function label(timestamp: string, interval: Interval): string {
  const at = new Date(timestamp);
  return interval === 'hourly'
    ? at.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
    : at.toLocaleDateString([], { timeZone: 'UTC' });
}

/** Volume by outcome over time (stacked bars), latency percentiles (lines), the top action types. */
export function AnalyticsView({ session }: { session: Session }) {
  const [filters, setFilters] = useState<FilterValues>({ interval: 'hourly' });
  const interval = (filters['interval'] ?? 'hourly') as Interval;
  const load = (metric: Query['metric'], extra: Partial<Query> = {}) => {
    const { from, to, interval: _interval, ...rest } = filters;
    const query: Query = { ...rest, metric, interval, from: rfc3339(from), to: rfc3339(to), ...extra };
    return dataOf(session.client.api.GET('/v1/analytics', { params: { query } }));
  };
  const data = useLoad(async () => {
    const [volume, latency, top] = await Promise.all([load('volume', { group_by: 'outcome' }), load('latency'), load('top_action_types', { top_n: 10 })]);
    return { volume, latency, top };
  }, [session, filters]);
  const charts = useMemo(() => (data.data ? chartsOf(data.data, interval) : null), [data.data, interval]);

  return (
    <section aria-labelledby="analytics-title">
      <h2 id="analytics-title">Analytics</h2>
      <FilterForm
        label="Analytics filters"
        initial={filters}
        fields={[
          { name: 'namespace', label: 'Namespace' },
          { name: 'tenant', label: 'Tenant' },
          { name: 'provider', label: 'Provider' },
          { name: 'action_type', label: 'Action type' },
          { name: 'interval', label: 'Interval', options: INTERVALS },
          { name: 'from', label: 'From', type: 'datetime-local' },
          { name: 'to', label: 'To', type: 'datetime-local' },
        ]}
        onApply={setFilters}
      />
      <div class="toolbar">
        <RefreshButton load={data} />
      </div>
      <ErrorNote error={data.error} />
      {charts && (
        <div class="grid-charts">
          <figure>
            <figcaption>Volume by outcome ({charts.total} actions)</figcaption>
            <ChartCanvas config={charts.volume} label={`Volume by outcome per ${interval} bucket, ${charts.total} actions in all${charts.span}`} />
          </figure>
          <figure>
            <figcaption>Latency percentiles (ms)</figcaption>
            <ChartCanvas config={charts.latency} label="p50, p95 and p99 latency in milliseconds per bucket" />
          </figure>
          <figure>
            <figcaption>Top action types</figcaption>
            <ChartCanvas config={charts.top} label={`Top action types: ${charts.topText}`} />
          </figure>
        </div>
      )}
    </section>
  );
}

function chartsOf(data: { volume: Analytics; latency: Analytics; top: Analytics }, interval: Interval) {
  const times = [...new Set(data.volume.buckets.map((b) => b.timestamp))].sort();
  const outcomes = [...new Set(data.volume.buckets.map((b) => b.group ?? 'all'))].sort();
  const count = (t: string, o: string) => data.volume.buckets.find((b) => b.timestamp === t && (b.group ?? 'all') === o)?.count ?? 0;
  const volume: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: times.map((t) => label(t, interval)),
      datasets: outcomes.map((o, i) => ({ label: o, data: times.map((t) => count(t, o)), backgroundColor: PALETTE[i % PALETTE.length] })),
    },
    options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
  };
  const lat = data.latency.buckets;
  const latency: ChartConfiguration = {
    type: 'line',
    data: {
      labels: lat.map((b) => label(b.timestamp, interval)),
      datasets: (['p50_duration_ms', 'p95_duration_ms', 'p99_duration_ms'] as const).map((key, i) => ({
        label: key.split('_')[0] ?? key,
        data: lat.map((b) => b[key] ?? null),
        borderColor: PALETTE[i],
        backgroundColor: PALETTE[i],
      })),
    },
    options: { scales: { y: { beginAtZero: true } } },
  };
  const entries = data.top.top_entries ?? [];
  const top: ChartConfiguration = {
    type: 'bar',
    data: { labels: entries.map((e) => e.label), datasets: [{ label: 'actions', data: entries.map((e) => e.count), backgroundColor: PALETTE[0] }] },
    options: { indexAxis: 'y', plugins: { legend: { display: false } } },
  };
  const topText = entries.map((e) => `${e.label} ${e.count}`).join(', ') || 'none';
  // The buckets' range, so a screen reader hears which hours or days the bars are.
  const first = times[0];
  const last = times[times.length - 1];
  const span = first && last ? `, from ${label(first, interval)} to ${label(last, interval)}` : '';
  return { volume, latency, top, total: data.volume.total_count ?? 0, topText, span };
}
